"""A streaming query with ``parallelism=auto`` on a standalone cluster, run as its own process.

Usage: python -m integration_tests.auto_query MASTER BOOTSTRAP TOPIC OUTPUT CHECKPOINT

Runs until it is terminated; the test watches the checkpoint's offset log.
"""

from __future__ import annotations

import os
import signal
import sys

from pyspark.sql import SparkSession

from connector import KafkaSource


def main(master: str, bootstrap: str, topic: str, output: str, checkpoint: str) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName("auto-parallelism")
        .config("spark.executor.cores", "1")
        .config("spark.executor.memory", "512m")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.dataSource.register(KafkaSource)
    query = (
        spark.readStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("parallelism", "auto")
        .load()
        .writeStream.format("parquet")
        .option("path", output)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="1 second")
        .start()
    )
    signal.signal(signal.SIGTERM, lambda *_: query.stop())
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:6])
