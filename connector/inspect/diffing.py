"""Comparing batches of the offset log: slot counts over time, moves, joins, leaves, progress.

Pure: it works on the values :mod:`kafka_rescalable.inspect.reading` returns and reads no file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_rescalable.inspect.reading import (
    BatchOffsets,
    CheckpointError,
    CheckpointLog,
    reject_malformed,
)
from kafka_rescalable.state import OffsetState, PartitionOffset, TopicPartition


@dataclass(frozen=True)
class SlotRun:
    """Consecutive batches in which one source had the same number of slots.

    ``slots`` is ``None`` for batches without a readable slots document; ``note`` then says
    what the source held instead.
    """

    source_key: str
    first_batch: int
    last_batch: int
    slots: int | None
    note: str | None = None


@dataclass(frozen=True, order=True)
class PartitionMove:
    """A partition owned by another slot index after than before."""

    topic_partition: TopicPartition
    from_slot: int
    to_slot: int


@dataclass(frozen=True, order=True)
class PartitionPlacement:
    """A partition, its offset and the slot owning it: an added or a removed partition."""

    sub_state: PartitionOffset
    slot: int


@dataclass(frozen=True, order=True)
class PartitionProgress:
    """How far one partition's next offset went between two batches.

    ``records`` counts offsets, an upper bound of the records read (compaction and
    transaction markers leave offsets without a record). It is negative when the offset went
    backwards (the topic was re-created and ``failOnDataLoss`` is off).
    """

    topic_partition: TopicPartition
    from_offset: int
    to_offset: int
    joined: bool = False
    """The partition was not in the first batch; ``from_offset`` is where it joined."""

    @property
    def records(self) -> int:
        """Offsets between the two batches."""
        return self.to_offset - self.from_offset


@dataclass(frozen=True)
class AssignmentDiff:
    """How the assignment of one source changed between two offset states.

    Parameters
    ----------
    slots_before, slots_after : int
        Slot counts.
    moved : tuple of PartitionMove
        Partitions in both states whose slot index changed, in partition order.
    added : tuple of PartitionPlacement
        Partitions only in the later state, where they are now.
    removed : tuple of PartitionPlacement
        Partitions only in the earlier state, where they were.
    progress : tuple of PartitionProgress
        Offset deltas, for partitions in both states and for added partitions whose joining
        offset is known.
    """

    slots_before: int
    slots_after: int
    moved: tuple[PartitionMove, ...]
    added: tuple[PartitionPlacement, ...]
    removed: tuple[PartitionPlacement, ...]
    progress: tuple[PartitionProgress, ...]

    @property
    def total_records(self) -> int:
        """Offsets read between the two states, offsets that went backwards not counted."""
        return sum(p.records for p in self.progress if p.records > 0)

    @property
    def regressed(self) -> tuple[PartitionProgress, ...]:
        """Partitions whose offset went backwards."""
        return tuple(p for p in self.progress if p.records < 0)


@dataclass(frozen=True)
class SourceDiff:
    """The diff of one source between two batches of the log."""

    source_key: str
    from_batch: int
    to_batch: int
    diff: AssignmentDiff


def slot_history(log: CheckpointLog, source_key: str) -> tuple[SlotRun, ...]:
    """Group the batches into runs with the same slot count for one source.

    A run ends where the count changes, where the source has no slots document (no offset,
    another source's, malformed, absent), or at a gap in the batch ids.
    """
    runs: list[SlotRun] = []
    for batch in log.batches:
        source = batch.source(source_key)
        if source is None:
            slots, note = None, "no such source"
        elif source.document is not None:
            slots, note = source.document.state.num_slots, None
        else:
            slots, note = None, source.kind.value
        last = runs[-1] if runs else None
        if (
            last is not None
            and last.last_batch + 1 == batch.batch_id
            and (last.slots, last.note) == (slots, note)
        ):
            runs[-1] = SlotRun(source_key, last.first_batch, batch.batch_id, slots, note)
        else:
            runs.append(SlotRun(source_key, batch.batch_id, batch.batch_id, slots, note))
    return tuple(runs)


def diff_states(
    before: OffsetState,
    after: OffsetState,
    joined_at: Mapping[TopicPartition, int] | None = None,
) -> AssignmentDiff:
    """Compare two offset states of one source.

    Parameters
    ----------
    before, after : OffsetState
        The earlier and the later state.
    joined_at : mapping of TopicPartition to int, optional
        For partitions only in ``after``: the offset they joined at (their offset in the
        first batch that held them, since a joining partition reads nothing in that batch).
        Those partitions then get a progress entry; without it, added partitions have none.

    Returns
    -------
    AssignmentDiff
        Moves, additions, removals and offset deltas, each in ``(topic, partition)`` order.
    """
    joined_at = joined_at or {}
    old = before.partitions()
    new = after.partitions()
    moved = []
    progress = []
    for tp in sorted(old & new):
        from_slot, to_slot = before.slot_of(tp), after.slot_of(tp)
        if from_slot != to_slot:
            moved.append(PartitionMove(tp, from_slot, to_slot))
        progress.append(PartitionProgress(tp, before.offset_of(tp), after.offset_of(tp)))
    added = []
    for tp in sorted(new - old):
        added.append(PartitionPlacement(_sub_state(after, tp), after.slot_of(tp)))
        if tp in joined_at:
            progress.append(PartitionProgress(tp, joined_at[tp], after.offset_of(tp), True))
    removed = [
        PartitionPlacement(_sub_state(before, tp), before.slot_of(tp)) for tp in sorted(old - new)
    ]
    return AssignmentDiff(
        slots_before=before.num_slots,
        slots_after=after.num_slots,
        moved=tuple(moved),
        added=tuple(added),
        removed=tuple(removed),
        progress=tuple(sorted(progress)),
    )


def diff_batches(log: CheckpointLog, from_batch: int, to_batch: int) -> tuple[SourceDiff, ...]:
    """Diff every source that has a slots document in both batches.

    Both batch ids name the *end* of their batch, so the offset deltas are the records read
    by batches ``from_batch + 1 .. to_batch``. A partition that joined in between is counted
    from the offset of the first batch that held it.

    Raises
    ------
    CheckpointError
        When a batch id is not in the log, ``from_batch > to_batch``, or no source has a
        slots document in both batches (a malformed one is named with its error).
    """
    if from_batch > to_batch:
        msg = f"--diff FROM TO: FROM ({from_batch}) must not be after TO ({to_batch})"
        raise CheckpointError(msg)
    first, last = log.batch(from_batch), log.batch(to_batch)
    reject_malformed(first)
    reject_malformed(last)
    before, after = first.documents(), last.documents()
    keys = [key for key in after if key in before]
    if not keys:
        msg = (
            f"no kafka-rescalable source has a slots document in both batch {from_batch} "
            f"({_kinds(first)}) and batch {to_batch} ({_kinds(last)})"
        )
        raise CheckpointError(msg)
    diffs = []
    for key in keys:
        old, new = before[key].state, after[key].state
        added = new.partitions() - old.partitions()
        joined_at = _joining_offsets(log, key, from_batch, to_batch, added)
        diffs.append(SourceDiff(key, from_batch, to_batch, diff_states(old, new, joined_at)))
    return tuple(diffs)


def _joining_offsets(
    log: CheckpointLog, key: str, from_batch: int, to_batch: int, added: frozenset[TopicPartition]
) -> dict[TopicPartition, int]:
    """Offset of each added partition in the first batch after ``from_batch`` that holds it."""
    found: dict[TopicPartition, int] = {}
    for batch in log.batches:
        if not from_batch < batch.batch_id <= to_batch:
            continue
        document = batch.documents().get(key)
        if document is None:
            continue
        offsets = document.state.offsets()
        for tp in added:
            if tp not in found and tp in offsets:
                found[tp] = offsets[tp]
    return found


def _sub_state(state: OffsetState, tp: TopicPartition) -> PartitionOffset:
    return PartitionOffset(tp.topic, tp.partition, state.offset_of(tp))


def _kinds(batch: BatchOffsets) -> str:
    return ", ".join(f"{s.label}: {s.kind.value}" for s in batch.sources) or "no source"
