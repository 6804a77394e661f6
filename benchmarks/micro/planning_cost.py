"""Driver-side planning cost per micro-batch: ``latestOffset`` then ``partitions``.

The stream reader is called directly, as Spark's driver-side Python process calls it, with
no Spark involved: ``latestOffset`` and ``reportLatestOffset`` (which Spark times together
as the batch's ``latestOffset``), then ``partitions``, which waits for the topic-id check
the report sent (in Spark, the offset log is written in between). Each call plans the same
batch, from the earliest offsets to the latest, of a topic whose every partition holds a
few records, so every partition has a range to read and gets a task (one slot per
partition, the default, and ``minRecordsPerPartition=1``, so that small ranges are not
coalesced into fewer tasks).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from benchmarks.data import create_topic, fill_partitions
from benchmarks.diagnostics.profiling import profile_call

__all__ = ["PlanningCost", "measure_planning", "profile_planning"]


@dataclass(frozen=True)
class PlanningCost:
    """Median milliseconds of each call over ``calls`` micro-batches of one topic."""

    partitions: int
    calls: int
    tasks: int
    latest_offset_ms: float
    partitions_ms: float
    total_ms: float


def measure_planning(bootstrap: str, topic: str, partitions: int, calls: int) -> PlanningCost:
    """Create ``topic`` with ``partitions`` partitions and time ``calls`` plannings of it."""
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    create_topic(bootstrap, topic, partitions)
    fill_partitions(bootstrap, topic, partitions, per_partition=10)
    reader = _reader(bootstrap, topic)
    try:
        start = reader.initialOffset()
        # One untimed batch: the admin client connects and fetches metadata the first time.
        _plan_batch(reader, start)
        latest_ms, partitions_ms, total_ms = [], [], []
        tasks = 0
        for _ in range(calls):
            began = time.perf_counter()
            end = reader.latestOffset(start, ReadAllAvailable())
            reader.reportLatestOffset()
            planned = time.perf_counter()
            tasks = len(reader.partitions(start, end))
            done = time.perf_counter()
            latest_ms.append((planned - began) * 1000)
            partitions_ms.append((done - planned) * 1000)
            total_ms.append((done - began) * 1000)
    finally:
        reader.stop()
    if tasks != partitions:
        msg = f"planning {topic} gave {tasks} tasks, expected one per partition ({partitions})"
        raise RuntimeError(msg)
    return PlanningCost(
        partitions=partitions,
        calls=calls,
        tasks=tasks,
        latest_offset_ms=statistics.median(latest_ms),
        partitions_ms=statistics.median(partitions_ms),
        total_ms=statistics.median(total_ms),
    )


def profile_planning(bootstrap: str, topic: str) -> str:
    """Profile one micro-batch of ``topic`` (made by measure_planning) with cProfile."""
    reader = _reader(bootstrap, topic)
    try:
        start = reader.initialOffset()
        _plan_batch(reader, start)
        return profile_call(lambda: _plan_batch(reader, start))
    finally:
        reader.stop()


def _plan_batch(reader, start: dict) -> int:
    """Plan one batch from ``start`` as Spark calls the reader; return its task count."""
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    end = reader.latestOffset(start, ReadAllAvailable())
    reader.reportLatestOffset()
    return len(reader.partitions(start, end))


def _reader(bootstrap: str, topic: str):
    from kafka_rescalable.config.options import parse_options
    from kafka_rescalable.driver.stream_reader import KafkaStreamReader
    from kafka_rescalable.executor.tasks import read_input_partition

    # Ten records a partition would be coalesced into one task (minRecordsPerPartition,
    # 10,000 by default); one record a task keeps planning a task per partition, the most
    # work planning does, as measured before coalescing came in.
    options = parse_options(
        {
            "kafka.bootstrap.servers": bootstrap,
            "subscribe": topic,
            "startingOffsets": "earliest",
            "minRecordsPerPartition": "1",
        },
        "stream",
    )
    return KafkaStreamReader(options, read_input_partition)
