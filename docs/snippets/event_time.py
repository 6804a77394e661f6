"""Event time: a windowed count with a watermark, partitions kept aligned in event time.

Run by integration_tests/test_docs_snippets.py against a real broker: ``DOCS_TOPIC`` holds
readings in two partitions whose record timestamps (CreateTime) are minutes apart.
"""

import os

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "sensor-readings")
workdir = os.environ.get("DOCS_WORKDIR", "/tmp/kafka-rescalable-docs")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:aligned]
from pyspark.sql import functions as F

readings = (
    spark.readStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", "earliest")
    .option("maxEventTimeDrift", "20 seconds")  # no larger than the watermark's delay
    .option("idleTimeout", "60s")  # a silent partition stops holding the others back
    .load()
)
per_minute = (
    readings.withWatermark("timestamp", "30 seconds")
    .groupBy(F.window("timestamp", "1 minute"))
    .count()
)
query = (
    per_minute.writeStream.format("parquet")
    .outputMode("append")
    .option("path", f"{workdir}/per-minute")
    .option("checkpointLocation", f"{workdir}/per-minute-checkpoint")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
# --8<-- [end:aligned]
