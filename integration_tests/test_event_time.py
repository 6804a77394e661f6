"""Event time: a lagging partition under a watermark, with and without alignment.

Partition 0 holds ten minutes of events; partition 1 only its first minute, the rest arrives
later (a slow producer, a backfill). Windowed counts use a 30 s watermark; alignment uses a
20 s drift, no larger than the watermark delay, which is what makes it lossless.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import (
    BUILTIN_FORMAT,
    OUR_FORMAT,
    committed_batches,
    kafka_stream,
    next_offsets,
    offset_log,
    wait_until,
)

T0 = 1_763_700_000_000  # a whole minute, so windows start at T0 + k * 60 s
MINUTE = 60_000


def events(partition: int, seconds: range) -> list[Record]:
    return [Record(value=b"e", partition=partition, timestamp_ms=T0 + s * 1000) for s in seconds]


def windowed_counts(raw: DataFrame) -> DataFrame:
    return (
        raw.withWatermark("timestamp", "30 seconds")
        .groupBy(F.window("timestamp", "1 minute"))
        .count()
        .select(F.unix_millis(F.col("window.start")).alias("start"), "count")
    )


def start(spark: SparkSession, fmt: str, bootstrap: str, topic: str, checkpoint: Path, **options):
    name = f"windows_{uuid.uuid4().hex}"
    query = (
        windowed_counts(kafka_stream(spark, bootstrap, topic, fmt, **options))
        .writeStream.format("memory")
        .queryName(name)
        .outputMode("append")
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="300 milliseconds")
        .start()
    )
    return query, name


def counts(spark: SparkSession, table: str) -> dict[int, int]:
    return {(row.start - T0) // MINUTE: row["count"] for row in spark.table(table).collect()}


def run_lagging_partition(
    spark: SparkSession, fmt: str, bootstrap: str, topic: str, tmp_path: Path, **options
) -> tuple[dict[int, int], int]:
    """Return the window counts and partition 0's offset while partition 1 lagged."""
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, events(0, range(600)) + events(1, range(60)))
    checkpoint = tmp_path / "checkpoint"
    query, table = start(spark, fmt, bootstrap, topic, checkpoint, **options)
    try:
        def first_minute_of_partition_1_read() -> bool:
            assert query.exception() is None, query.exception()
            if fmt == BUILTIN_FORMAT:
                progress = query.lastProgress
                return bool(progress) and progress["sources"][0]["endOffset"] is not None and (
                    '"1":60' in str(progress["sources"][0]["endOffset"]).replace(" ", "")
                )
            if not (checkpoint / "offsets").exists() or not committed_batches(checkpoint):
                return False
            documents = offset_log(checkpoint)
            last = documents[max(documents)]
            read = next_offsets(last).get(1) == 60
            return read and committed_batches(checkpoint) == len(documents)

        wait_until(first_minute_of_partition_1_read, "partition 1's first minute to be read")
        if fmt == OUR_FORMAT:
            documents = offset_log(checkpoint)
            p0_offset = next_offsets(documents[max(documents)])[0]
        else:
            p0_offset = 600  # the built-in source reads partition 0 to its end
        # The rest of partition 1 arrives late, then one far-future record per partition
        # moves the watermark past every window.
        produce(bootstrap, topic, events(1, range(60, 600)))
        produce(bootstrap, topic, events(0, range(2000, 2001)) + events(1, range(2000, 2001)))
        wait_until(
            lambda: query.exception() is not None or len(counts(spark, table)) >= 10,
            "all ten windows to be emitted",
            timeout_s=240,
        )
        assert query.exception() is None, query.exception()
        return counts(spark, table), p0_offset
    finally:
        query.stop()


@pytest.mark.parametrize("fmt", [BUILTIN_FORMAT, OUR_FORMAT])
def test_without_alignment_the_lagging_partition_is_dropped_as_late(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path, fmt: str
) -> None:
    windows, _ = run_lagging_partition(spark, fmt, kafka_bootstrap, topic_name, tmp_path)
    assert windows[0] == 120
    # Minutes 1..8 of partition 1 arrived after the watermark passed them: dropped.
    assert [windows[m] for m in range(1, 9)] == [60] * 8
    assert sum(windows[m] for m in range(10)) < 1200


def test_with_alignment_every_record_is_counted(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    windows, p0_offset = run_lagging_partition(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, tmp_path,
        maxEventTimeDrift="20 seconds", idleTimeout="5 minutes",
    )
    assert p0_offset < 120, "partition 0 was held near partition 1's event time"
    assert {m: windows[m] for m in range(10)} == {m: 120 for m in range(10)}
    document = offset_log(tmp_path / "checkpoint")
    assert "eventTime" in document[max(document)], "alignment clocks are checkpointed"


def test_idle_partition_stops_holding_the_others(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(kafka_bootstrap, topic_name, events(0, range(600)) + events(1, range(30)))
    produce(kafka_bootstrap, topic_name, events(0, range(2000, 2001)))
    query, table = start(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, tmp_path / "checkpoint",
        maxEventTimeDrift="20 seconds", idleTimeout="3 seconds",
    )
    try:
        wait_until(
            lambda: query.exception() is not None or len(counts(spark, table)) >= 10,
            "windows to close although partition 1 went silent",
            timeout_s=180,
        )
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    windows = counts(spark, table)
    assert windows[0] == 90 and [windows[m] for m in range(1, 10)] == [60] * 9
