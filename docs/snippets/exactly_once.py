"""Exactly-once sink: a Kafka -> Spark -> Kafka stream, read back under read_committed.

Run by integration_tests/test_docs_snippets.py against a real broker: ``DOCS_TOPIC`` holds
JSON events with a ``user`` field; ``DOCS_OUT_TOPIC`` exists and is empty.
"""

import os

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "shop-events")
out_topic = os.environ.get("DOCS_OUT_TOPIC", "shop-events-enriched")
workdir = os.environ.get("DOCS_WORKDIR", "/tmp/kafka-rescalable-docs")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:stream]
events = (
    spark.readStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", "earliest")
    .load()
)
query = (
    events.selectExpr(
        "get_json_object(CAST(value AS STRING), '$.user') AS key",
        "upper(CAST(value AS STRING)) AS value",
    )
    .writeStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("topic", out_topic)
    .option("deliveryGuarantee", "exactly-once")
    .option("checkpointLocation", f"{workdir}/enrich-checkpoint")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
# --8<-- [end:stream]

# --8<-- [start:read-committed]
written = (
    spark.read.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", out_topic)
    .option("kafka.isolation.level", "read_committed")  # only committed transactions
    .load()
)
# --8<-- [end:read-committed]
written_count = written.count()
