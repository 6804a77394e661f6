"""Rescaling: one checkpoint, run at 2 reader slots, then restarted at 5.

Run by integration_tests/test_docs_snippets.py against a real broker: ``DOCS_TOPIC`` has 6
partitions with records in each; between the two runs this file appends a few records itself
(hidden from the page), as a live producer would.
"""

import os
import subprocess
import sys

from confluent_kafka import Producer
from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "shop-events")
workdir = os.environ.get("DOCS_WORKDIR", "/tmp/kafka-rescalable-docs")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:first]
checkpoint = f"{workdir}/rescaled-checkpoint"


def run_once(parallelism: str) -> None:
    """Read what the topic holds now, from the checkpoint, with this many reader slots."""
    query = (
        spark.readStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("parallelism", parallelism)
        .load()
        .select("partition", "offset", "value")
        .writeStream.format("parquet")
        .option("path", f"{workdir}/rescaled")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()


run_once("2")
# --8<-- [end:first]

producer = Producer({"bootstrap.servers": bootstrap})
for n in range(30):
    producer.produce(topic, value=b"later-%d" % n, partition=n % 6)
producer.flush(30)

# --8<-- [start:again]
run_once("5")  # the same checkpoint, now 5 reader slots
# --8<-- [end:again]

# --8<-- [start:inspect]
shown = subprocess.run(
    [sys.executable, "-m", "kafka_rescalable.inspect", checkpoint],
    capture_output=True, text=True, check=True,
).stdout
print(shown)
# --8<-- [end:inspect]
