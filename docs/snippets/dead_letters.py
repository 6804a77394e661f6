"""Dead letters: JSON values that do not decode go to a topic of their own, exactly once.

Run by integration_tests/test_docs_snippets.py against a real broker: ``DOCS_TOPIC`` holds
JSON orders, some of them not JSON; ``DOCS_DEAD_TOPIC`` exists and is empty.
"""

import os

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "orders")
dead_topic = os.environ.get("DOCS_DEAD_TOPIC", "orders-dead-letters")
workdir = os.environ.get("DOCS_WORKDIR", "/tmp/kafka-rescalable-docs")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:stream]
orders = (
    spark.readStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", "earliest")
    .option("valueFormat", "json")
    .option("valueSchema", "id BIGINT, amount DOUBLE")
    .option("deadLetterTopic", dead_topic)  # records that do not decode go there
    .load()
)
query = (
    orders.select("value.id", "value.amount")
    .writeStream.format("parquet")
    .option("path", f"{workdir}/orders")
    .option("checkpointLocation", f"{workdir}/orders-checkpoint")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
# --8<-- [end:stream]
decoded = spark.read.parquet(f"{workdir}/orders").collect()

# --8<-- [start:read-dead-letters]
dead_letters = (
    spark.read.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", dead_topic)
    .option("kafka.isolation.level", "read_committed")  # committed dead letters only
    .option("includeHeaders", "true")
    .load()
    .selectExpr(
        "CAST(value AS STRING) AS raw",
        "CAST(filter(headers, h -> h.key = '__kafka_rescalable.errors.offset')[0].value "
        "AS STRING) AS source_offset",
        "CAST(filter(headers, h -> h.key = '__kafka_rescalable.errors.reason')[0].value "
        "AS STRING) AS reason",
    )
)
# --8<-- [end:read-dead-letters]
rows = dead_letters.collect()
