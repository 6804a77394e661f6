"""A streaming query run as its own process, to be killed with SIGKILL by a test.

Usage: python -m integration_tests.crash_query BOOTSTRAP TOPIC OUTPUT CHECKPOINT PARALLELISM

A slow Python UDF makes every micro-batch take a few seconds, so the test can kill the
process while a batch is planned but not committed. It runs until it is killed.
"""

from __future__ import annotations

import sys
import time

from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from integration_tests.query_process import query_session
from integration_tests.spark_helpers import kafka_stream


@F.udf(StringType())
def slow_decode(value: bytes) -> str:
    """Decode the value slowly enough to stretch every batch to a few seconds."""
    time.sleep(0.01)
    return value.decode()


def main(bootstrap: str, topic: str, output: str, checkpoint: str, parallelism: str) -> None:
    """Run the query in ``local[2]`` until the process is killed."""
    spark = query_session("local[2]", "crash-query", {"spark.ui.enabled": "false"})
    query = (
        kafka_stream(spark, bootstrap, topic, parallelism=parallelism, maxOffsetsPerTrigger="150")
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
