"""Kafka -> Spark -> Kafka queries in a process of their own, for the sink's kill tests.

Usage::

    python -m integration_tests.sink_query stream BOOTSTRAP INPUT CHECKPOINTS OUT_EO OUT_ALO
    python -m integration_tests.sink_query retry BOOTSTRAP OUT_EO OUT_ALO

``stream`` runs, until it is killed, one query per output topic, both reading ``INPUT`` with
our source: exactly-once into ``OUT_EO`` and at-least-once into ``OUT_ALO``. Each query's
checkpoint is ``CHECKPOINTS/<output topic>``, and each output record's value is the input
record's ``partition:offset``. A slow Python UDF and small batches keep every micro-batch busy
writing for a while, so its rows reach Kafka well before Spark commits the batch.

``retry`` writes the same 40,000 rows twice with ``df.write`` under ``local[2,4]``; a UDF
kills the Python worker of the first attempt of partition 0 near its end, once Kafka holds
some of the partition's rows, and Spark retries the task.
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


def slow_position(partition: int, offset: int) -> str:
    """Return ``partition:offset`` slowly enough to stretch a batch over a second or so."""
    time.sleep(0.002)
    return f"{partition}:{offset}"


def _wait_for_own_rows(bootstrap: str, topic: str, below: int, timeout_s: float = 60) -> None:
    """Return once ``topic`` holds a record whose value is a row id under ``below``."""
    from confluent_kafka import Consumer, TopicPartition

    watch = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "sink-retry-watch",
            "isolation.level": "read_uncommitted",
            "enable.auto.commit": False,
        }
    )
    try:
        watch.assign([TopicPartition(topic, p, 0) for p in (0, 1)])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for record in watch.consume(1000, timeout=0.2):
                if record.error() is None and int(record.value()) < below:
                    return
    finally:
        watch.close()


def crash_first_attempt(bootstrap: str, topic: str):
    """Return a UDF that kills its Python worker in the first attempt of partition 0.

    It waits at the partition's last row until Kafka holds some of this partition's own rows
    (committed or not: read uncommitted), so the attempt dies with rows in flight. Rows reach
    the writer in chunks, so only the last row is sure to come after some were written. The
    other partition's task writes at the same time, so a count of the topic's records would
    not tell whose rows are there: the values are read.
    """

    @F.udf(LongType())
    def crash(row: int) -> int:
        from pyspark import TaskContext

        context = TaskContext.get()
        last = row == RETRY_ROWS // 2 - 1
        if last and context.partitionId() == 0 and context.attemptNumber() == 0:
            _wait_for_own_rows(bootstrap, topic, below=RETRY_ROWS // 2)
            os._exit(3)
        return row

    return crash


def stream(bootstrap: str, source: str, checkpoints: str, *outputs: str) -> None:
    """Run one query per output until the process is killed (see the module doc)."""
    conf = {"spark.ui.enabled": "false", **_SMALL_ARROW_BATCHES}
    spark = query_session("local[2]", "sink-query", conf)
    for guarantee, topic in zip(("exactly-once", "at-least-once"), outputs, strict=True):
        # One DataFrame and one UDF per query, and each query started once the one before
        # has finished a batch: two queries whose tasks Spark serializes at the same moment
        # can see a collection change under them ("Task not serializable: Illegal size 5 of
        # collection, expected 6", or java.io.OptionalDataException when the task is read).
        # Both hit this test's restarts, where every query starts with a replayed batch.
        position = F.udf(slow_position, StringType())
        records = kafka_stream(
            spark, bootstrap, source, parallelism="2", maxOffsetsPerTrigger="300"
        ).select(
            F.col("partition").cast("string").alias("key"),
            position("partition", "offset").alias("value"),
        )
        query = (
            records.writeStream.format("kafka-rescalable")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", topic)
            .option("checkpointLocation", os.path.join(checkpoints, topic))
            .option("deliveryGuarantee", guarantee)
            .trigger(processingTime="200 milliseconds")
            .start()
        )
        deadline = time.monotonic() + 120
        while query.lastProgress is None and query.isActive and time.monotonic() < deadline:
            time.sleep(0.2)
    spark.streams.awaitAnyTermination()


def retry(bootstrap: str, exactly_once_topic: str, at_least_once_topic: str) -> None:
    """Write the same rows in both modes with a task killed once (see the module doc)."""
    conf = {"spark.ui.enabled": "false", **_SMALL_ARROW_BATCHES}
    spark = query_session("local[2,4]", "sink-retry", conf)
    for topic, guarantee in (
        (exactly_once_topic, "exactly-once"),
        (at_least_once_topic, "at-least-once"),
    ):
        rows = spark.range(RETRY_ROWS, numPartitions=2).select(
            F.col("id").cast("string").alias("key"),
            crash_first_attempt(bootstrap, topic)("id").cast("string").alias("value"),
        )
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
