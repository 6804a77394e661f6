"""A user's ``job.py`` for docs/deploy/cluster.md: read a topic by name on a cluster.

Usage (as spark-submit runs it): ``spark-submit --master URL ... job.py``, with the
environment variables ``KAFKA_BOOTSTRAP`` and ``TOPIC``.

``test_cluster_deploy`` copies it into a scratch directory as ``job.py`` and runs the
guide's commands there. It imports nothing from this repository: the source is found by
name, as in a user's job. It prints one JSON line: ``{"rows": [[partition, offset, value],
...]}`` when the read worked, ``{"error": "..."}`` with Spark's message when it failed.
"""

from __future__ import annotations

import json
import os

from pyspark.sql import SparkSession


def main() -> None:
    """Read the whole topic as a batch and print what was read, or why it failed."""
    spark = SparkSession.builder.appName("kafka-rescalable-cluster-job").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    frame = (
        spark.read.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", os.environ["KAFKA_BOOTSTRAP"])
        .option("subscribe", os.environ["TOPIC"])
        .option("startingOffsets", "earliest")
        .load()
    )
    try:
        rows = frame.selectExpr("partition", "offset", "CAST(value AS STRING) AS v").collect()
        print(json.dumps({"rows": sorted([r.partition, r.offset, r.v] for r in rows)}))
    except Exception as error:  # noqa: BLE001 - the test reads the message Spark wrapped
        print(json.dumps({"error": str(error)}))
    spark.stop()


if __name__ == "__main__":
    main()
