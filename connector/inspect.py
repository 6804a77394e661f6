"""Inspect a checkpoint: which reader slots own which Kafka partitions, batch by batch.

Usage::

    python -m connector.inspect CHECKPOINT [--batch ID] [--diff FROM TO] [--json]

Without options it describes the latest batch of the offset log; ``--batch`` another one;
``--diff`` how the assignment changed between two batches and how many records were read
in between; ``--json`` prints the same as JSON. Errors (not a checkpoint, no offsets yet, a
malformed document) are one line on stderr and exit code 2.

Spark writes ``<checkpoint>/offsets/<batch id>`` when it plans a batch: a version line
(``v1``, or ``v2`` with named sources), a JSON metadata line, then one line per source of the
query: its offset JSON (for us, the slots document: the *end* of the batch, the next offset
to read per partition), or ``-`` for a source that has no offset yet. ``v2`` lines are
``<source name>:<offset>``. ``<checkpoint>/commits/<batch id>`` appears once the sink has
committed the batch.

The module is split in two: reading the log into values (:func:`read_checkpoint`,
:func:`parse_offset_file`) and comparing them (:func:`slot_history`, :func:`diff_states`,
:func:`diff_batches`) is pure and needs neither Spark nor Kafka; the ``render_*`` and
``*_json`` functions and :func:`main` only format those values.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any, Final

from state import (
    ForeignCheckpointError,
    KafkaRescalableError,
    OffsetDocumentError,
    OffsetState,
    PartitionOffset,
    SlotsDocument,
    TopicPartition,
)

__all__ = [
    "AssignmentDiff",
    "BatchOffsets",
    "CheckpointError",
    "CheckpointLog",
    "PartitionMove",
    "PartitionPlacement",
    "PartitionProgress",
    "SlotRun",
    "SourceDiff",
    "SourceKind",
    "SourceOffset",
    "batch_json",
    "classify_source",
    "diff_batches",
    "diff_json",
    "diff_states",
    "main",
    "parse_offset_file",
    "read_checkpoint",
    "render_batch",
    "render_diff",
    "slot_history",
]

PROG: Final = "python -m connector.inspect"
EXIT_ERROR: Final = 2
"""Exit code of every error, as argparse uses for a bad command line."""

SUPPORTED_LOG_VERSIONS: Final = frozenset({1, 2})
"""Spark's offset log formats read here: ``v1`` (sources by position), ``v2`` (by name)."""

_VOID_OFFSET: Final = "-"  # Spark's serialized "no offset" for a source
_QUOTE_LIMIT: Final = 120  # characters of a foreign offset or an extra section shown in text


class CheckpointError(KafkaRescalableError, ValueError):
    """The directory cannot be inspected: not a checkpoint, no offsets, or a bad batch.

    The message says what is wrong and names the path or the batch id; the command prints it
    and exits with code 2.
    """


class SourceKind(Enum):
    """What one source line of an offset file holds."""

    SLOTS = "kafka-rescalable"
    """A slots document of this connector."""
    NO_OFFSET = "no offset"
    """``-``: the source has no offset in this batch."""
    FOREIGN = "other source"
    """Valid JSON that is not ours: another source of the same query."""
    MALFORMED = "malformed"
    """A document that claims to be ours (or is not JSON) but cannot be read."""


@dataclass(frozen=True)
class SourceOffset:
    """One source's offset in one batch.

    Parameters
    ----------
    key : str
        The source's identity in the log: its position (``"0"``, ``"1"``) in a ``v1`` log,
        its name in a ``v2`` log. The same key names the same source in every batch.
    kind : SourceKind
        What the line holds.
    raw : str
        The line as Spark wrote it (without the ``v2`` name prefix).
    document : SlotsDocument or None
        The parsed document, for :attr:`SourceKind.SLOTS` only.
    detail : str or None
        Why the line is foreign or malformed, in words.
    """

    key: str
    kind: SourceKind
    raw: str
    document: SlotsDocument | None = None
    detail: str | None = None

    @property
    def label(self) -> str:
        """``source 0``, or ``source <name>`` in a ``v2`` log."""
        return f"source {self.key}"


@dataclass(frozen=True)
class BatchOffsets:
    """One file of the offset log: where every source of the query ends this batch.

    Parameters
    ----------
    batch_id : int
        The file's name.
    committed : bool
        Whether ``commits/<batch_id>`` exists: the sink finished the batch.
    log_version : int
        1 or 2, from the file's first line.
    timestamp_ms : int or None
        ``batchTimestampMs`` of the metadata line: when Spark planned the batch.
    watermark_ms : int or None
        ``batchWatermarkMs`` of the metadata line.
    sources : tuple of SourceOffset
        One per source line, in the file's order.
    """

    batch_id: int
    committed: bool
    log_version: int
    timestamp_ms: int | None
    watermark_ms: int | None
    sources: tuple[SourceOffset, ...]

    def source(self, key: str) -> SourceOffset | None:
        """Return the source with ``key``, or ``None`` when this batch has no such source."""
        return next((s for s in self.sources if s.key == key), None)

    def documents(self) -> dict[str, SlotsDocument]:
        """Return the slots documents of this batch by source key."""
        return {s.key: s.document for s in self.sources if s.document is not None}


@dataclass(frozen=True)
class CheckpointLog:
    """Every readable batch of a checkpoint's offset log, in batch id order.

    Parameters
    ----------
    path : Path
        The checkpoint directory.
    batches : tuple of BatchOffsets
        Sorted by batch id; never empty.
    unreadable : Mapping[int, str]
        Batch files that could not be read at all (bad version line, no metadata), with why.
        Kept apart so one damaged file does not hide the rest of the history.
    """

    path: Path
    batches: tuple[BatchOffsets, ...]
    unreadable: Mapping[int, str] = field(default_factory=dict)

    @property
    def latest(self) -> BatchOffsets:
        """The batch with the highest id: the one Spark planned last.

        Raises
        ------
        CheckpointError
            When the file with the highest id cannot be read: showing an older batch as the
            latest would mislead.
        """
        newest = self.batches[-1]
        damaged = [batch_id for batch_id in self.unreadable if batch_id > newest.batch_id]
        if damaged:
            msg = (
                f"the latest batch, {max(damaged)}, cannot be read: "
                f"{self.unreadable[max(damaged)]}; readable batches: "
                f"{_id_ranges([b.batch_id for b in self.batches])} (use --batch)"
            )
            raise CheckpointError(msg)
        return newest

    def batch(self, batch_id: int) -> BatchOffsets:
        """Return batch ``batch_id``.

        Raises
        ------
        CheckpointError
            When the log has no readable file for it; the message gives the available ids.
        """
        for batch in self.batches:
            if batch.batch_id == batch_id:
                return batch
        if batch_id in self.unreadable:
            msg = f"batch {batch_id} cannot be read: {self.unreadable[batch_id]}"
            raise CheckpointError(msg)
        msg = (
            f"batch {batch_id} is not in the offset log of {self.path}; available: "
            f"{_id_ranges([b.batch_id for b in self.batches])}"
        )
        raise CheckpointError(msg)

    def source_keys(self) -> tuple[str, ...]:
        """Keys of the sources that hold a slots document in at least one batch, in order."""
        keys: dict[str, None] = {}
        for batch in self.batches:
            for source in batch.sources:
                if source.kind is SourceKind.SLOTS:
                    keys.setdefault(source.key, None)
        return tuple(keys)


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


# ---------------------------------------------------------------------------------------
# Reading the log (pure but for read_checkpoint's file access)
# ---------------------------------------------------------------------------------------


def parse_offset_file(batch_id: int, text: str, committed: bool) -> BatchOffsets:
    """Parse one offset log file as Spark writes it.

    Parameters
    ----------
    batch_id : int
        The file's name.
    text : str
        The file's content.
    committed : bool
        Whether the batch has a commit file.

    Returns
    -------
    BatchOffsets
        Every source line classified; a source line that is foreign or malformed does not
        make the file unreadable, it is reported as such.

    Raises
    ------
    CheckpointError
        When the file is empty, its version line is not ``v1`` or ``v2``, or its metadata
        line is not a JSON object.
    """
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise CheckpointError(f"offsets/{batch_id} is empty (an incomplete write?)")
    header = lines[0].strip()
    version = _log_version(header)
    if version not in SUPPORTED_LOG_VERSIONS:
        msg = (
            f"offsets/{batch_id} starts with {header[:20]!r}; this tool reads the offset log "
            f"versions {', '.join(f'v{v}' for v in sorted(SUPPORTED_LOG_VERSIONS))}"
        )
        raise CheckpointError(msg)
    if len(lines) < 2:
        raise CheckpointError(f"offsets/{batch_id} has no metadata line (an incomplete write?)")
    metadata = _metadata(batch_id, lines[1].strip())
    sources = []
    for index, line in enumerate(lines[2:]):
        if version == 2:
            key, separator, raw = line.partition(":")
            if not separator:
                msg = f"offsets/{batch_id}, line {index + 3}: expected '<source name>:<offset>'"
                raise CheckpointError(msg)
        else:
            key, raw = str(index), line
        sources.append(classify_source(key, raw))
    return BatchOffsets(
        batch_id=batch_id,
        committed=committed,
        log_version=version,
        timestamp_ms=_int_or_none(metadata.get("batchTimestampMs")),
        watermark_ms=_int_or_none(metadata.get("batchWatermarkMs")),
        sources=tuple(sources),
    )


def classify_source(key: str, raw: str) -> SourceOffset:
    """Read one source line: our slots document, no offset, another source's, or malformed.

    A line is ours when it parses as a slots document. A JSON object with neither
    ``version`` nor ``slots`` (:class:`ForeignCheckpointError`), or a JSON value that is not
    an object, belongs to another source of the query. Anything else that fails is a
    malformed document of ours: a JSON object with ``version`` or ``slots`` that does not
    check, or a line that is not JSON at all (every Spark source writes JSON).
    """
    if raw.strip() == _VOID_OFFSET:
        return SourceOffset(key, SourceKind.NO_OFFSET, raw)
    try:
        return SourceOffset(key, SourceKind.SLOTS, raw, document=SlotsDocument.from_json(raw))
    except ForeignCheckpointError as error:
        if error.starting_offsets is not None:
            detail = "Spark's built-in Kafka source?"
        else:
            detail = f"another source; top-level keys {_top_level_keys(raw)}"
        return SourceOffset(key, SourceKind.FOREIGN, raw, detail=detail)
    except OffsetDocumentError as error:
        try:
            value = json.loads(raw)
        except ValueError:
            return SourceOffset(key, SourceKind.MALFORMED, raw, detail=str(error))
        if isinstance(value, dict):
            return SourceOffset(key, SourceKind.MALFORMED, raw, detail=str(error))
        return SourceOffset(key, SourceKind.FOREIGN, raw, detail="another source")


def read_checkpoint(path: str | Path) -> CheckpointLog:
    """Read every file of ``<path>/offsets`` and note which batches ``<path>/commits`` holds.

    Only files named by a batch id are read: Spark's ``.crc`` and temporary files are not.

    Raises
    ------
    CheckpointError
        When ``path`` is not a directory, has no ``offsets`` directory, or the offset log
        has no readable file yet.
    """
    root = Path(path)
    if not root.is_dir():
        what = "does not exist" if not root.exists() else "is not a directory"
        raise CheckpointError(f"{root} {what}")
    offsets = root / "offsets"
    if not offsets.is_dir():
        if (root / "metadata").is_file() or (root / "commits").is_dir():
            msg = f"{root}: no offsets yet: the query has not planned its first batch"
            raise CheckpointError(msg)
        msg = f"{root} is not a Spark streaming checkpoint: it has no offsets/ directory"
        nested = sorted(p for p in root.iterdir() if (p / "offsets").is_dir())
        if nested:
            msg += f"; did you mean {', '.join(str(p) for p in nested[:3])}?"
        raise CheckpointError(msg)
    ids = _batch_ids(offsets)
    if not ids:
        msg = f"{root}: no offsets yet: offsets/ holds no batch (the query has not planned one)"
        raise CheckpointError(msg)
    committed = set(_batch_ids(root / "commits")) if (root / "commits").is_dir() else set()
    batches = []
    unreadable = {}
    for batch_id in ids:
        try:
            text = (offsets / str(batch_id)).read_text(encoding="utf-8")
            batches.append(parse_offset_file(batch_id, text, batch_id in committed))
        except CheckpointError as error:
            unreadable[batch_id] = str(error)
        except (OSError, UnicodeDecodeError) as error:
            unreadable[batch_id] = f"offsets/{batch_id} cannot be read ({error})"
    if not batches:
        first = unreadable[ids[0]]
        msg = f"{root}: no batch of the offset log can be read; {first}"
        raise CheckpointError(msg)
    return CheckpointLog(root, tuple(batches), unreadable)


# ---------------------------------------------------------------------------------------
# Comparing batches (pure)
# ---------------------------------------------------------------------------------------


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
    for batch in (first, last):
        for source in batch.sources:
            if source.kind is SourceKind.MALFORMED:
                raise _malformed(batch, source)
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


# ---------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------


def render_batch(log: CheckpointLog, batch: BatchOffsets) -> str:
    """Describe one batch and the slot history as text."""
    lines = [f"checkpoint: {log.path}"]
    lines.append(f"offset log: {_log_summary(log)}")
    lines.extend(_history_lines(log))
    lines.append("")
    lines.append(f"batch {batch.batch_id}: {_batch_status(batch)}")
    total_partitions = total_slots = 0
    for source in batch.sources:
        if source.document is None:
            lines.append(f"  {source.label}: {_describe_other(source)}")
            continue
        state = source.document.state
        total_partitions += len(state.partitions())
        total_slots += state.num_slots
        lines.append(
            f"  {source.label}: kafka-rescalable, {_count(state.num_slots, 'slot')}, "
            f"{_count(len(state.partitions()), 'partition')} (topic: partition@next offset)"
        )
        for index, slot in enumerate(state.slots):
            lines.append(f"    slot {index} ({_count(len(slot), 'partition')}): {_owned(slot)}")
        for name, value in source.document.extras.items():
            lines.append(f"    extra section {name}: {_quote(json.dumps(value, sort_keys=True))}")
    if not batch.sources:
        lines.append("  (no source line)")
    lines.append(f"total: {_count(total_partitions, 'partition')} in {_count(total_slots, 'slot')}")
    return "\n".join(lines)


def render_diff(log: CheckpointLog, diffs: Sequence[SourceDiff]) -> str:
    """Describe assignment changes and records read between two batches as text."""
    lines = [f"checkpoint: {log.path}"]
    for source_diff in diffs:
        diff = source_diff.diff
        a, b = source_diff.from_batch, source_diff.to_batch
        lines.append("")
        lines.append(f"source {source_diff.source_key}: batch {a} -> batch {b}")
        change = "unchanged" if diff.slots_before == diff.slots_after else "changed"
        lines.append(f"  slots: {diff.slots_before} -> {diff.slots_after} ({change})")
        lines.append(f"  partitions moved: {len(diff.moved)}")
        for move in diff.moved:
            slots = f"slot {move.from_slot} -> slot {move.to_slot}"
            lines.append(f"    {move.topic_partition}: {slots}")
        lines.append(f"  partitions added: {len(diff.added)}")
        for placed in diff.added:
            lines.append(f"    {placed.sub_state} in slot {placed.slot}")
        lines.append(f"  partitions removed: {len(diff.removed)}")
        for placed in diff.removed:
            lines.append(f"    {placed.sub_state} was in slot {placed.slot}")
        read_by = f"batch {b}" if b == a + 1 else f"batches {a + 1}..{b}"
        if a == b:
            read_by = "no batch"
        lines.append(f"  records between the two batches (read by {read_by}): {diff.total_records}")
        for step in diff.progress:
            note = " (joined)" if step.joined else ""
            if step.records < 0:
                note += " (went backwards: records lost?)"
            lines.append(
                f"    {step.topic_partition}: {step.from_offset} -> {step.to_offset} "
                f"({step.records:+d}){note}"
            )
    return "\n".join(lines)


def batch_json(log: CheckpointLog, batch: BatchOffsets) -> dict[str, Any]:
    """Return the content of :func:`render_batch` as JSON-able values."""
    sources = []
    for source in batch.sources:
        entry: dict[str, Any] = {"source": source.key, "kind": source.kind.value}
        if source.document is not None:
            state = source.document.state
            entry["slot_count"] = state.num_slots
            entry["partition_count"] = len(state.partitions())
            entry["slots"] = [
                {
                    "slot": index,
                    "partition_count": len(slot),
                    "partitions": [_sub_state_json(sub) for sub in slot],
                }
                for index, slot in enumerate(state.slots)
            ]
            entry["extras"] = dict(source.document.extras)
        else:
            entry["detail"] = source.detail
            entry["raw"] = source.raw
        sources.append(entry)
    documents = batch.documents().values()
    return {
        "checkpoint": str(log.path),
        "batch_ids": [b.batch_id for b in log.batches],
        "unreadable_batches": {str(k): v for k, v in sorted(log.unreadable.items())},
        "latest_batch": max([b.batch_id for b in log.batches] + list(log.unreadable)),
        "slot_history": [
            {
                "source": run.source_key,
                "first_batch": run.first_batch,
                "last_batch": run.last_batch,
                "slots": run.slots,
                "note": run.note,
            }
            for key in log.source_keys()
            for run in slot_history(log, key)
        ],
        "batch": {
            "id": batch.batch_id,
            "committed": batch.committed,
            "log_version": batch.log_version,
            "timestamp_ms": batch.timestamp_ms,
            "timestamp": _iso(batch.timestamp_ms),
            "watermark_ms": batch.watermark_ms,
            "sources": sources,
            "total_partitions": sum(len(d.state.partitions()) for d in documents),
            "total_slots": sum(d.state.num_slots for d in documents),
        },
    }


def diff_json(log: CheckpointLog, diffs: Sequence[SourceDiff]) -> dict[str, Any]:
    """Return the content of :func:`render_diff` as JSON-able values."""
    return {
        "checkpoint": str(log.path),
        "diffs": [
            {
                "source": d.source_key,
                "from_batch": d.from_batch,
                "to_batch": d.to_batch,
                "slots_before": d.diff.slots_before,
                "slots_after": d.diff.slots_after,
                "moved": [
                    {**_tp_json(m.topic_partition), "from_slot": m.from_slot, "to_slot": m.to_slot}
                    for m in d.diff.moved
                ],
                "added": [{**_sub_state_json(p.sub_state), "slot": p.slot} for p in d.diff.added],
                "removed": [
                    {**_sub_state_json(p.sub_state), "slot": p.slot} for p in d.diff.removed
                ],
                "records": [
                    {
                        **_tp_json(p.topic_partition),
                        "from_offset": p.from_offset,
                        "to_offset": p.to_offset,
                        "records": p.records,
                        "joined": p.joined,
                    }
                    for p in d.diff.progress
                ],
                "total_records": d.diff.total_records,
            }
            for d in diffs
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return its exit code (0, or 2 on any error, with one line on stderr)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Show which reader slots own which Kafka partitions in a kafka-rescalable "
            "checkpoint, for the latest batch, a chosen batch, or between two batches."
        ),
    )
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="the checkpointLocation")
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--batch", type=int, metavar="ID", help="describe this batch id")
    chosen.add_argument(
        "--diff",
        type=int,
        nargs=2,
        metavar=("FROM", "TO"),
        help="how the assignment changed from batch FROM to batch TO, and records read",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    try:
        log = read_checkpoint(args.checkpoint)
        if args.diff is not None:
            diffs = diff_batches(log, args.diff[0], args.diff[1])
            if args.json:
                output = json.dumps(diff_json(log, diffs), indent=2)
            else:
                output = render_diff(log, diffs)
        else:
            batch = log.latest if args.batch is None else log.batch(args.batch)
            for source in batch.sources:
                if source.kind is SourceKind.MALFORMED:
                    raise _malformed(batch, source)
            if args.json:
                output = json.dumps(batch_json(log, batch), indent=2)
            else:
                output = render_batch(log, batch)
    except (CheckpointError, OSError) as error:  # OSError: a directory we may not read
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        print(output)
        sys.stdout.flush()
    except BrokenPipeError:
        # Piped into `head`: not worth a traceback. Point stdout at devnull so the flush at
        # interpreter exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------


def _log_version(header: str) -> int | None:
    if header.startswith("v") and header[1:].isascii() and header[1:].isdigit():
        return int(header[1:])
    return None


def _metadata(batch_id: int, line: str) -> dict[str, Any]:
    if not line:  # Spark writes an empty line for a batch without metadata
        return {}
    try:
        value = json.loads(line)
    except ValueError as error:
        msg = f"offsets/{batch_id}: the metadata line is not JSON ({error})"
        raise CheckpointError(msg) from error
    if not isinstance(value, dict):
        msg = f"offsets/{batch_id}: the metadata line must be a JSON object"
        raise CheckpointError(msg)
    return value


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _batch_ids(directory: Path) -> list[int]:
    return sorted(int(p.name) for p in directory.iterdir() if p.name.isascii() and p.name.isdigit())


def _top_level_keys(raw: str) -> str:
    try:
        keys = sorted(json.loads(raw))
    except (ValueError, TypeError):
        return "?"
    return _quote(", ".join(repr(k) for k in keys))


def _sub_state(state: OffsetState, tp: TopicPartition) -> PartitionOffset:
    return PartitionOffset(tp.topic, tp.partition, state.offset_of(tp))


def _malformed(batch: BatchOffsets, source: SourceOffset) -> CheckpointError:
    return CheckpointError(
        f"batch {batch.batch_id}, {source.label}: malformed kafka-rescalable document: "
        f"{source.detail}"
    )


def _kinds(batch: BatchOffsets) -> str:
    return ", ".join(f"{s.label}: {s.kind.value}" for s in batch.sources) or "no source"


def _id_ranges(ids: Sequence[int]) -> str:
    """``0..3, 5..6`` for the ids 0, 1, 2, 3, 5, 6."""
    ranges: list[list[int]] = []
    for batch_id in sorted(ids):
        if ranges and ranges[-1][1] + 1 == batch_id:
            ranges[-1][1] = batch_id
        else:
            ranges.append([batch_id, batch_id])
    return ", ".join(f"{a}..{b}" if a != b else str(a) for a, b in ranges) or "none"


def _log_summary(log: CheckpointLog) -> str:
    ids = [b.batch_id for b in log.batches]
    committed = [b.batch_id for b in log.batches if b.committed]
    text = f"batches {_id_ranges(ids)} ({_count(len(ids), 'batch', 'batches')}), "
    text += f"last committed: {committed[-1] if committed else 'none'}"
    if log.unreadable:
        text += f"; unreadable: {_id_ranges(list(log.unreadable))} (see --batch)"
    return text


def _history_lines(log: CheckpointLog) -> list[str]:
    keys = log.source_keys()
    if not keys:
        return ["slots per batch: no kafka-rescalable source in this checkpoint"]
    lines = []
    for key in keys:
        runs = slot_history(log, key)
        parts = []
        for run in runs:
            span = (
                f"batch {run.first_batch}"
                if run.first_batch == run.last_batch
                else f"batch {run.first_batch}..{run.last_batch}"
            )
            what = _count(run.slots, "slot") if run.slots is not None else run.note
            parts.append(f"{span}: {what}")
        label = "slots per batch" if len(keys) == 1 else f"slots per batch, source {key}"
        lines.append(f"{label}: {'; '.join(parts)}")
    return lines


def _batch_status(batch: BatchOffsets) -> str:
    status = "committed" if batch.committed else "not committed (planned; runs again on restart)"
    if batch.timestamp_ms is not None:
        status += f", planned at {_iso(batch.timestamp_ms)}"
    if batch.watermark_ms:
        status += f", watermark {_iso(batch.watermark_ms)}"
    return status


def _describe_other(source: SourceOffset) -> str:
    if source.kind is SourceKind.NO_OFFSET:
        return "no offset in this batch"
    return f"not a kafka-rescalable document ({source.detail}): {_quote(source.raw.strip())}"


def _owned(slot: Sequence[PartitionOffset]) -> str:
    """``orders: 0@1042 4@977; audit: 1@5`` for one slot, topics in order."""
    by_topic: dict[str, list[str]] = {}
    for sub in slot:
        by_topic.setdefault(sub.topic, []).append(f"{sub.partition}@{sub.offset}")
    return "; ".join(f"{topic}: {' '.join(owned)}" for topic, owned in by_topic.items()) or "-"


def _count(number: int, singular: str, plural: str | None = None) -> str:
    return f"{number} {singular if number == 1 else (plural or singular + 's')}"


def _quote(text: str) -> str:
    return text if len(text) <= _QUOTE_LIMIT else text[:_QUOTE_LIMIT] + "..."


def _iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _tp_json(tp: TopicPartition) -> dict[str, Any]:
    return {"topic": tp.topic, "partition": tp.partition}


def _sub_state_json(sub: PartitionOffset) -> dict[str, Any]:
    return {"topic": sub.topic, "partition": sub.partition, "offset": sub.offset}


if __name__ == "__main__":
    sys.exit(main())
