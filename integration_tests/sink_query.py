"""Kafka -> Spark -> Kafka queries in a process of their own, for the sink's kill tests.

Usage::

    python -m integration_tests.sink_query stream BOOTSTRAP INPUT CHECKPOINTS OUT_EO OUT_ALO
    python -m integration_tests.sink_query retry BOOTSTRAP OUT_EO OUT_ALO

``stream`` runs, until it is killed, one query per output topic, all reading ``INPUT`` with our
source: exactly-once into ``OUT_EO`` and at-least-once into ``OUT_ALO``. Each output record's
value is the input record's ``partition:offset``. A slow Python UDF and small Arrow batches
keep every micro-batch busy writing for a while, so a kill lands while rows are in flight.

``retry`` writes the same 40,000 rows twice with ``df.write`` under ``local[2,4]``; a UDF
kills the Python worker of the first attempt of partition 0 part-way through, after some of
the partition's rows have reached the sink, and Spark retries the task.
"""

from __future__ import annotations

import os
import sys
import time

from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType

from integration_tests.query_process import query_session
from integration_tests.spark_helpers import kafka_stream

RETRY_ROWS = 40_000
# Small batches and small socket buffers (64 KiB by default, thousands of rows): rows reach
# the writer, and so Kafka, while the task is still running.
_SMALL_ARROW_BATCHES = {
    "spark.sql.execution.arrow.maxRecordsPerBatch": "50",
    "spark.buffer.size": "2048",
}


@F.udf(StringType())
def slow_position(partition: int, offset: int) -> str:
    """Return ``partition:offset`` slowly enough to stretch a batch over a second or so."""
    time.sleep(0.002)
    return f"{partition}:{offset}"


@F.udf(LongType())
def crash_first_attempt(row: int) -> int:
    """Kill this Python worker at the last row of the first attempt of partition 0.

    The last row, because rows reach the writer in large chunks: only the earlier chunks are
    in Kafka when the attempt dies.
    """
    from pyspark import TaskContext

    context = TaskContext.get()
    if row == RETRY_ROWS // 2 - 1 and context.partitionId() == 0 and context.attemptNumber() == 0:
        time.sleep(2.0)  # let the rows before it reach Kafka
        os._exit(3)
    return row


def stream(bootstrap: str, source: str, checkpoints: str, *outputs: str) -> None:
    """Run one query per output until the process is killed (see the module doc)."""
    conf = {"spark.ui.enabled": "false", **_SMALL_ARROW_BATCHES}
    spark = query_session("local[2]", "sink-query", conf)
    records = kafka_stream(
        spark, bootstrap, source, parallelism="2", maxOffsetsPerTrigger="300"
    ).select(
        F.col("partition").cast("string").alias("key"),
        slow_position("partition", "offset").alias("value"),
    )
    for guarantee, topic in zip(("exactly-once", "at-least-once"), outputs, strict=True):
        (
            records.writeStream.format("kafka-rescalable")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", topic)
            .option("checkpointLocation", os.path.join(checkpoints, topic))
            .option("deliveryGuarantee", guarantee)
            .trigger(processingTime="200 milliseconds")
            .start()
        )
    spark.streams.awaitAnyTermination()


def retry(bootstrap: str, exactly_once_topic: str, at_least_once_topic: str) -> None:
    """Write the same rows in both modes with a task killed once (see the module doc)."""
    conf = {"spark.ui.enabled": "false", **_SMALL_ARROW_BATCHES}
    spark = query_session("local[2,4]", "sink-retry", conf)
    rows = spark.range(RETRY_ROWS, numPartitions=2).select(
        F.col("id").cast("string").alias("key"),
        crash_first_attempt("id").cast("string").alias("value"),
    )
    for topic, guarantee in (
        (exactly_once_topic, "exactly-once"),
        (at_least_once_topic, "at-least-once"),
    ):
        (
            rows.write.format("kafka-rescalable")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", topic)
            .option("deliveryGuarantee", guarantee)
            .mode("append")
            .save()
        )
    print("retry: both writes done", flush=True)
    spark.stop()


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "stream":
        stream(*arguments)
    elif command == "retry":
        retry(*arguments)
    else:
        raise SystemExit(f"unknown command {command!r}; use 'stream' or 'retry'")
