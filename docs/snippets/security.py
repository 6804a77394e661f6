"""Security: SASL_SSL with SCRAM, written with the Java client's settings.

Run by integration_tests/test_security.py against its secured broker: ``KAFKA_BOOTSTRAP_SERVERS``
is the SASL_SSL listener, ``DOCS_USER`` may read ``DOCS_TOPIC``, ``DOCS_CA_FILE`` is the
brokers' CA certificate (PEM).
"""

import os

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "broker:9093")
topic = os.environ.get("DOCS_TOPIC", "orders")
user = os.environ.get("DOCS_USER", "alice")
password = os.environ.get("DOCS_PASSWORD", "alice-secret")
ca_file = os.environ.get("DOCS_CA_FILE", "/etc/kafka/ca.pem")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:sasl-ssl]
jaas = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    f'username="{user}" password="{password}";'
)
secured = (
    spark.read.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("kafka.security.protocol", "SASL_SSL")
    .option("kafka.sasl.mechanism", "SCRAM-SHA-512")  # becomes librdkafka's sasl.mechanisms
    .option("kafka.sasl.jaas.config", jaas)  # becomes sasl.username and sasl.password
    .option("kafka.ssl.truststore.location", ca_file)  # a PEM file: becomes ssl.ca.location
    .option("kafka.ssl.truststore.type", "PEM")
    .option("subscribe", topic)
    .load()
)
# --8<-- [end:sasl-ssl]
secured_count = secured.count()
