"""The checkpoint inspector on a checkpoint a real query wrote, before and after a rescale."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import (
    next_offsets,
    offset_log,
    run_available_now,
    slot_count,
    slots_of,
    start_parquet_stream,
)

REPO = Path(__file__).resolve().parents[1]
PARTITIONS = 6


def inspect(*argv: str) -> str:
    """Run ``python -m kafka_rescalable.inspect`` as a user would; return its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "kafka_rescalable.inspect", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def test_inspect_shows_the_rescale_from_2_to_5_slots(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=PARTITIONS)
    produce(
        kafka_bootstrap,
        topic_name,
        [Record(value=b"a%d" % i, partition=i % PARTITIONS) for i in range(60)],
    )
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    run_available_now(
        start_parquet_stream(
            spark,
            kafka_bootstrap,
            topic_name,
            output,
            checkpoint,
            available_now=True,
            parallelism="2",
        )
    )
    at_two = max(offset_log(checkpoint))
    produce(
        kafka_bootstrap,
        topic_name,
        [Record(value=b"b%d" % i, partition=i % PARTITIONS) for i in range(30)],
    )
    run_available_now(
        start_parquet_stream(
            spark,
            kafka_bootstrap,
            topic_name,
            output,
            checkpoint,
            available_now=True,
            parallelism="5",
        )
    )
    documents = offset_log(checkpoint)
    last = max(documents)
    assert last > at_two, "the second run planned no batch"
    assert len(slots_of(documents[at_two])) == 2
    assert len(slots_of(documents[last])) == 5

    # The latest batch: 5 slots, every partition once, with its next offset.
    text = inspect(str(checkpoint))
    first_five = min(b for b, d in documents.items() if slot_count(d) == 5)
    assert (
        f"slots per batch: {_span(0, at_two)}: 2 slots; {_span(first_five, last)}: 5 slots"
    ) in text
    assert f"batch {last}: committed" in text
    assert "source 0: kafka-rescalable, 5 slots, 6 partitions" in text
    assert f"total: {PARTITIONS} partitions in 5 slots" in text
    for index, owned in enumerate(slots_of(documents[last])):
        offsets = next_offsets(documents[last])
        listed = " ".join(f"{p}@{offsets[p]}" for _, p in sorted(owned))
        count = f"{len(owned)} partition" + ("" if len(owned) == 1 else "s")
        assert f"    slot {index} ({count}): {topic_name}: {listed}\n" in text

    # The diff: the moves the offset log itself shows, and the 30 records in between.
    before, after = slots_of(documents[at_two]), slots_of(documents[last])
    slot_before = {tp: i for i, slot in enumerate(before) for tp in slot}
    slot_after = {tp: i for i, slot in enumerate(after) for tp in slot}
    moved = sorted(tp for tp in slot_after if slot_before[tp] != slot_after[tp])
    assert moved, "going from 2 to 5 slots must move partitions"
    diff = inspect(str(checkpoint), "--diff", str(at_two), str(last))
    assert "  slots: 2 -> 5 (changed)" in diff
    assert f"  partitions moved: {len(moved)}\n" in diff
    for topic, partition in moved:
        line = (
            f"    {topic}-{partition}: slot {slot_before[(topic, partition)]} -> "
            f"slot {slot_after[(topic, partition)]}\n"
        )
        assert line in diff
    assert "  partitions added: 0\n" in diff and "  partitions removed: 0\n" in diff
    assert "records between the two batches" in diff and "): 30\n" in diff
    for partition in range(PARTITIONS):
        assert f"    {topic_name}-{partition}: 10 -> 15 (+5)\n" in diff

    as_json = json.loads(inspect(str(checkpoint), "--diff", str(at_two), str(last), "--json"))
    (source_diff,) = as_json["diffs"]
    assert (source_diff["slots_before"], source_diff["slots_after"]) == (2, 5)
    assert sorted((m["topic"], m["partition"]) for m in source_diff["moved"]) == moved
    assert source_diff["total_records"] == 30


def _span(first: int, last: int) -> str:
    return f"batch {first}" if first == last else f"batch {first}..{last}"
