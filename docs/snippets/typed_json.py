"""Typed records: JSON values read with a Spark DDL reader schema, FAILFAST and PERMISSIVE.

Run by integration_tests/test_docs_snippets.py against a real broker: ``DOCS_TOPIC`` holds
JSON orders, one of them not JSON.
"""

import os

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "orders")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:read]
orders = (
    spark.read.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("valueFormat", "json")
    .option(
        "valueSchema",
        "id BIGINT, tags ARRAY<STRING>, at TIMESTAMP, "
        "customer STRUCT<email: STRING, zip: INT>, amount DECIMAL(10, 2)",
    )
    .option("mode", "PERMISSIVE")  # a record that does not decode: null, and why
    .load()
)
decoded = orders.select("value.id", "value.customer.email", "value.amount", "decodeError")
# --8<-- [end:read]
rows = decoded.collect()
