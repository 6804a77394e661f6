"""Spark Connect: the source and the exactly-once sink through a Connect session.

A classic session and a local Connect server cannot share a process, so this one runs inside
integration_tests/connect_query.py's Connect process (test_connect.py checks its output):
``DOCS_TOPIC`` holds records, ``DOCS_OUT_TOPIC`` exists and is empty.
"""

import os

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "shop-events")
out_topic = os.environ.get("DOCS_OUT_TOPIC", "shop-events-copy")
workdir = os.environ.get("DOCS_WORKDIR", "/tmp/kafka-rescalable-docs")

# --8<-- [start:connect]
from pyspark.sql import SparkSession

spark = SparkSession.builder.remote("local[2]").getOrCreate()  # or "sc://host:15002"
query = (
    spark.readStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", "earliest")
    .option("parallelism", "2")
    .load()
    .selectExpr("key", "value")
    .writeStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("topic", out_topic)
    .option("deliveryGuarantee", "exactly-once")
    .option("checkpointLocation", f"{workdir}/copy-checkpoint")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
# --8<-- [end:connect]
