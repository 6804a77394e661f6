"""A streaming query run as its own process, to be killed with SIGKILL by a test.

Usage: python -m integration_tests.crash_query BOOTSTRAP TOPIC OUTPUT CHECKPOINT PARALLELISM

A slow Python UDF makes every micro-batch take a few seconds, so the test can kill the
process while a batch is planned but not committed. It runs until it is killed.
"""

from __future__ import annotations

import os
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from connector import KafkaSource


@F.udf(StringType())
def slow_decode(value: bytes) -> str:
    time.sleep(0.01)
    return value.decode()


def main(bootstrap: str, topic: str, output: str, checkpoint: str, parallelism: str) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.dataSource.register(KafkaSource)
    query = (
        spark.readStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("parallelism", parallelism)
        .option("maxOffsetsPerTrigger", "150")
        .load()
        .select("partition", "offset", slow_decode("value").alias("value"))
        .writeStream.format("parquet")
        .option("path", output)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    query.awaitTermination()


if __name__ == "__main__":
    main(*sys.argv[1:6])
