"""Moving: continue a query of Spark's built-in kafka source, and start from a consumer group.

Run by integration_tests/test_docs_snippets.py against a real broker and a Spark session that
has Spark's built-in Kafka source (``spark-sql-kafka-0-10``) on its classpath. ``DOCS_TOPIC``
holds records; ``DOCS_GROUP`` has committed offsets on it. The hidden part first runs the
"old" query on the built-in source, then appends records it has not read.
"""

import os

from confluent_kafka import Producer
from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "shop-events")
group = os.environ.get("DOCS_GROUP", "shop-etl")
workdir = os.environ.get("DOCS_WORKDIR", "/tmp/kafka-rescalable-docs")
spark = SparkSession.builder.master("local[2]").getOrCreate()
old_checkpoint = f"{workdir}/events-checkpoint"

old = (
    spark.readStream.format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", "earliest")
    .load()
    .writeStream.format("parquet")
    .option("path", f"{workdir}/events")
    .option("checkpointLocation", old_checkpoint)
    .trigger(availableNow=True)
    .start()
)
old.awaitTermination()
producer = Producer({"bootstrap.servers": bootstrap})
for n in range(10):
    producer.produce(topic, value=b"new-%d" % n, partition=n % 2)
producer.flush(30)

# --8<-- [start:continue]
import subprocess
import sys

continued = subprocess.run(
    [sys.executable, "-m", "kafka_rescalable.inspect", old_checkpoint, "--starting-offsets"],
    capture_output=True, text=True, check=True,
).stdout.strip()
query = (
    spark.readStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", continued)  # e.g. {"shop-events":{"0":1042,"1":977}}
    .load()
    .writeStream.format("parquet")
    .option("path", f"{workdir}/events-rescalable")  # a new output directory too
    .option("checkpointLocation", f"{workdir}/events-rescalable-checkpoint")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
# --8<-- [end:continue]

# --8<-- [start:group]
from_group = (
    spark.readStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsetsFromGroup", group)  # where the application stopped
    .option("startingOffsets", "earliest")  # partitions the group has no offset for
    .option("commitOffsetsToGroup", group)  # optional: lag tools keep showing the group
    .load()
)
# --8<-- [end:group]
group_query = (
    from_group.writeStream.format("parquet")
    .option("path", f"{workdir}/from-group")
    .option("checkpointLocation", f"{workdir}/from-group-checkpoint")
    .trigger(availableNow=True)
    .start()
)
group_query.awaitTermination()
