"""Helpers for reading with Spark in integration tests: both Kafka sources, and query waits."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from kafka_rescalable.state import SlotsDocument

OUR_FORMAT = "kafka-rescalable"
BUILTIN_FORMAT = "kafka"


def batch_read(
    spark: SparkSession, fmt: str, bootstrap: str, topic: str, **options: str
) -> DataFrame:
    """Read ``topic`` in batch through ``fmt`` with the given extra options."""
    reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    reader = reader.option("subscribe", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def run_available_now(query: StreamingQuery, timeout_s: float = 240.0) -> None:
    """Wait for an AvailableNow query to finish by itself; fail with its error otherwise."""
    finished = query.awaitTermination(timeout_s)
    if not finished:
        query.stop()
        raise AssertionError(f"query {query.name} did not finish within {timeout_s} s")
    if query.exception() is not None:
        raise AssertionError(f"query failed: {query.exception()}")


def offset_log(checkpoint: Path) -> dict[int, dict]:
    """Return the source's offset document per batch id, as Spark wrote it into the checkpoint."""
    documents = {}
    for path in sorted((checkpoint / "offsets").iterdir()):
        if path.name.isdigit():
            lines = path.read_text().splitlines()
            documents[int(path.name)] = json.loads(lines[-1])
    return documents


def wait_until(condition, what: str, timeout_s: float = 120.0, interval_s: float = 0.5) -> None:
    """Poll ``condition`` until it is true, or fail naming ``what`` was awaited."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(interval_s)


WORKER_CONNECT_TIMEOUT = "Python worker failed to connect back"
"""Spark's error when a new Python process took more than its fixed 10 s to connect to the JVM.

Spark starts a fresh Python process for a Python streaming source's driver side, and waits
10 s (not configurable) for it: on 2 cores loaded by a 3-node cluster and the other test
worker, the start-up can take longer. It happens before the source's code runs."""


def start_until_batches(
    start: Callable[[], StreamingQuery], checkpoint: Path, batches: int, what: str
) -> StreamingQuery:
    """Start a query and wait for ``batches`` committed batches, retrying one slow start.

    The query is started again, once, when Spark could not start its Python process in time
    (:data:`WORKER_CONNECT_TIMEOUT`). Any other failure, or that one twice, fails the test.
    A restart resumes from the same checkpoint, as any restart does, so what the test checks
    afterwards is unchanged.
    """
    for attempt in (1, 2):
        query = start()

        def ready(query: StreamingQuery = query) -> bool:
            return committed_batches(checkpoint) >= batches or not query.isActive

        try:
            wait_until(ready, what)
        except AssertionError:
            query.stop()
            raise
        failure = query.exception()
        if failure is None and committed_batches(checkpoint) >= batches:
            return query
        if attempt == 1 and failure is not None and WORKER_CONNECT_TIMEOUT in str(failure):
            print(f"{what}: Spark's Python process did not connect back in 10 s; starting again")
            continue
        msg = f"the query ended before {what}: {failure}"
        raise AssertionError(msg)
    raise AssertionError(f"the query did not reach {what}")


def kafka_stream(
    spark: SparkSession, bootstrap: str, subscribe: str, fmt: str = OUR_FORMAT, **options: str
) -> DataFrame:
    """Return a Kafka source (ours unless ``fmt`` says) as a stream from the earliest offsets."""
    reader = (
        spark.readStream.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", subscribe)
        .option("startingOffsets", "earliest")
    )
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def start_parquet_stream(
    spark: SparkSession,
    bootstrap: str,
    subscribe: str,
    output: Path,
    checkpoint: Path,
    available_now: bool = False,
    fmt: str = OUR_FORMAT,
    **options: str,
) -> StreamingQuery:
    """Our source (or ``fmt``) from the earliest offsets into Parquet (exactly-once by its log)."""
    writer = (
        kafka_stream(spark, bootstrap, subscribe, fmt, **options)
        .writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
    )
    if available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime="500 milliseconds")
    return writer.start()


def committed_batches(checkpoint: Path) -> int:
    """How many micro-batches the sink has committed (files in ``commits/``)."""
    commits = checkpoint / "commits"
    return len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.exists() else 0


def slots_of(document: dict) -> list[set[tuple[str, int]]]:
    """Return the topic-partitions each slot owns in a slots document (any version)."""
    return [
        {(sub.topic, sub.partition) for sub in slot}
        for slot in SlotsDocument.from_dict(document).state.slots
    ]


def topic_ids_of(document: dict) -> dict[str, str]:
    """Return the Kafka topic id of each topic of a slots document (any version, any layout)."""
    return dict(SlotsDocument.from_dict(document).topic_ids)


def slot_count(document: dict) -> int:
    """Return the number of reader slots of a slots document (any version)."""
    return SlotsDocument.from_dict(document).state.num_slots


def slot_layout(document: dict) -> list[dict[str, dict[str, int]]]:
    """Return a slots document's ``slots`` as versions 1 and 2 wrote them, one map per slot."""
    slots = []
    for slot in SlotsDocument.from_dict(document).state.slots:
        topics: dict[str, dict[str, int]] = {}
        for sub in slot:
            topics.setdefault(sub.topic, {})[str(sub.partition)] = sub.offset
        slots.append(topics)
    return slots


def next_offsets(document: dict) -> dict[int, int]:
    """Return the next offset per partition number of a one-topic slots document."""
    offsets = SlotsDocument.from_dict(document).state.offsets()
    return {tp.partition: offset for tp, offset in offsets.items()}


def read_positions(spark: SparkSession, output: Path) -> list[tuple[int, int]]:
    """Every ``(partition, offset)`` in a Parquet sink's output, duplicates kept, sorted."""
    rows = spark.read.parquet(str(output)).select("partition", "offset").collect()
    return sorted((row.partition, row.offset) for row in rows)


def rewrite_last_offset(checkpoint: Path, change: Callable[[dict], dict]) -> None:
    """Replace the source offset of the checkpoint's last batch with ``change(offset)``.

    For tests that stand for what Spark never writes by itself: a checkpoint of an older
    connector, an offset past the log's end, a damaged entry.
    """
    path = checkpoint / "offsets" / str(max(offset_log(checkpoint)))
    lines = path.read_text().splitlines()
    lines[-1] = json.dumps(change(json.loads(lines[-1])))
    path.write_text("\n".join(lines) + "\n")
