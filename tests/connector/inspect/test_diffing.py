"""Comparing batches of a log read from disk: runs of slot counts and partitions' fates."""

from __future__ import annotations

from pathlib import Path

from kafka_rescalable.inspect import (
    PartitionMove,
    PartitionPlacement,
    PartitionProgress,
    SlotRun,
    diff_batches,
    read_checkpoint,
    slot_history,
)
from kafka_rescalable.state import PartitionOffset, TopicPartition

TP = TopicPartition


def test_slot_history_of_ours_and_of_another_source(rescale_checkpoint: Path) -> None:
    log = read_checkpoint(rescale_checkpoint)
    assert slot_history(log, "1") == (SlotRun("1", 0, 1, 2), SlotRun("1", 2, 3, 3))
    assert slot_history(log, "0") == (
        SlotRun("0", 0, 0, None, "no offset"),
        SlotRun("0", 1, 3, None, "other source"),
    )


def test_a_partition_joining_between_the_batches_counts_from_where_it_joined(
    rescale_checkpoint: Path,
) -> None:
    (source_diff,) = diff_batches(read_checkpoint(rescale_checkpoint), 0, 3)
    diff = source_diff.diff
    assert (source_diff.source_key, diff.slots_before, diff.slots_after) == ("1", 2, 3)
    assert diff.moved == (PartitionMove(TP("a", 1), 0, 2),)
    assert diff.added == (PartitionPlacement(PartitionOffset("b", 1, 4), 1),)
    assert diff.removed == (PartitionPlacement(PartitionOffset("b", 0, 5), 1),)
    assert PartitionProgress(TP("b", 1), 0, 4, joined=True) in diff.progress
    assert diff.regressed == (PartitionProgress(TP("a", 1), 20, 9),)
    assert diff.total_records == 20 + 4


def test_a_batch_against_itself_reads_nothing(rescale_checkpoint: Path) -> None:
    (source_diff,) = diff_batches(read_checkpoint(rescale_checkpoint), 2, 2)
    assert source_diff.diff.moved == source_diff.diff.added == source_diff.diff.removed == ()
    assert source_diff.diff.total_records == 0
