"""The inspector's result, as one JSON model: what ``--json`` prints and what text renders.

The model is plain dicts and lists (typed here with :class:`~typing.TypedDict`), holding only
strings, numbers, booleans and ``None``. ``--json`` prints ``json.dumps(view)`` and nothing
else, and :mod:`kafka_rescalable.inspect.rendering` writes the text view from the same dicts, so
the two views cannot disagree: a fact missing from the JSON cannot reach the text either.
Being JSON values already, the model needs no conversion code that could drift:
``json.loads(json.dumps(view)) == view``.

:func:`batch_json`, :func:`diff_json` and :func:`continuation_json` build the three views from
the values of :mod:`kafka_rescalable.inspect.reading`, :mod:`kafka_rescalable.inspect.diffing` and
:mod:`kafka_rescalable.inspect.continuing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

from kafka_rescalable.inspect._text import iso_time
from kafka_rescalable.inspect.continuing import Continuation
from kafka_rescalable.inspect.diffing import SlotRun, SourceDiff, slot_history
from kafka_rescalable.inspect.reading import BatchOffsets, CheckpointLog, SourceOffset
from kafka_rescalable.state import PartitionOffset, TopicPartition


class PartitionEntry(TypedDict):
    """A partition and its next offset."""

    topic: str
    partition: int
    offset: int


class SlotEntry(TypedDict):
    """One reader slot of a slots document, with the partitions it owns."""

    slot: int
    partition_count: int
    partitions: list[PartitionEntry]


class SourceEntry(TypedDict):
    """One source line of a batch.

    ``kind`` is a :class:`~kafka_rescalable.inspect.reading.SourceKind` value. A slots document
    (``"kafka-rescalable"``) has ``slot_count``, ``partition_count``, ``slots`` and
    ``extras`` (its other top-level sections, as the document holds them); any other kind
    has ``detail`` (why it is not ours, or ``None``) and ``raw`` (the line as Spark wrote it).
    """

    source: str
    kind: str
    slot_count: NotRequired[int]
    partition_count: NotRequired[int]
    slots: NotRequired[list[SlotEntry]]
    extras: NotRequired[dict[str, Any]]
    detail: NotRequired[str | None]
    raw: NotRequired[str]


class BatchEntry(TypedDict):
    """One file of the offset log; ``timestamp`` is ``timestamp_ms`` in ISO 8601, UTC."""

    id: int
    committed: bool
    log_version: int
    timestamp_ms: int | None
    timestamp: str | None
    watermark_ms: int | None
    sources: list[SourceEntry]
    total_partitions: int
    total_slots: int


class SlotRunEntry(TypedDict):
    """A :class:`~kafka_rescalable.inspect.diffing.SlotRun`: batches of one source at one count."""

    source: str
    first_batch: int
    last_batch: int
    slots: int | None
    note: str | None


class BatchView(TypedDict):
    """The view of one batch: the log's summary, the slot history, then the batch itself.

    ``slot_history`` lists the runs source by source, each source's runs in batch order;
    ``unreadable_batches`` maps a batch id (a string, as JSON keys are) to why it is
    unreadable.
    """

    checkpoint: str
    batch_ids: list[int]
    unreadable_batches: dict[str, str]
    latest_batch: int
    last_committed_batch: int | None
    slot_history: list[SlotRunEntry]
    batch: BatchEntry


class MoveEntry(TypedDict):
    """A partition that changed slot."""

    topic: str
    partition: int
    from_slot: int
    to_slot: int


class PlacementEntry(PartitionEntry):
    """An added partition (where it is now) or a removed one (where it was)."""

    slot: int


class ProgressEntry(TypedDict):
    """How far one partition's next offset went; ``records`` is negative when it went back."""

    topic: str
    partition: int
    from_offset: int
    to_offset: int
    records: int
    joined: bool


class SourceDiffEntry(TypedDict):
    """The diff of one source between two batches."""

    source: str
    from_batch: int
    to_batch: int
    slots_before: int
    slots_after: int
    moved: list[MoveEntry]
    added: list[PlacementEntry]
    removed: list[PlacementEntry]
    records: list[ProgressEntry]
    total_records: int


class DiffView(TypedDict):
    """The view of ``--diff``: one entry per source with a slots document in both batches."""

    checkpoint: str
    diffs: list[SourceDiffEntry]


class SourceStartEntry(TypedDict):
    """One Kafka source's ``startingOffsets`` value; ``kind`` as in :class:`SourceEntry`."""

    source: str
    kind: str
    startingOffsets: dict[str, dict[str, int]]


class ContinuationView(TypedDict):
    """The view of ``--starting-offsets``: where a new query continues each Kafka source."""

    checkpoint: str
    last_committed_batch: int
    sources: list[SourceStartEntry]


def continuation_json(log: CheckpointLog, found: Continuation) -> ContinuationView:
    """Return the view of ``--starting-offsets`` for ``found`` (from ``log``)."""
    return {
        "checkpoint": str(log.path),
        "last_committed_batch": found.batch_id,
        "sources": [
            {
                "source": start.source_key,
                "kind": start.kind.value,
                "startingOffsets": start.starting_offsets(),
            }
            for start in found.sources
        ],
    }


def batch_json(log: CheckpointLog, batch: BatchOffsets) -> BatchView:
    """Return the view of one batch of ``log``: what ``--batch`` prints, as JSON values."""
    documents = batch.documents().values()
    committed = [b.batch_id for b in log.batches if b.committed]
    return {
        "checkpoint": str(log.path),
        "batch_ids": [b.batch_id for b in log.batches],
        "unreadable_batches": {str(k): v for k, v in sorted(log.unreadable.items())},
        "latest_batch": max([b.batch_id for b in log.batches] + list(log.unreadable)),
        "last_committed_batch": committed[-1] if committed else None,
        "slot_history": [
            _slot_run_json(run) for key in log.source_keys() for run in slot_history(log, key)
        ],
        "batch": {
            "id": batch.batch_id,
            "committed": batch.committed,
            "log_version": batch.log_version,
            "timestamp_ms": batch.timestamp_ms,
            "timestamp": iso_time(batch.timestamp_ms),
            "watermark_ms": batch.watermark_ms,
            "sources": [_source_json(source) for source in batch.sources],
            "total_partitions": sum(len(d.state.partitions()) for d in documents),
            "total_slots": sum(d.state.num_slots for d in documents),
        },
    }


def diff_json(log: CheckpointLog, diffs: Sequence[SourceDiff]) -> DiffView:
    """Return the view of ``--diff``: ``diffs`` (from ``log``) as JSON values."""
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


def _source_json(source: SourceOffset) -> SourceEntry:
    entry: SourceEntry = {"source": source.key, "kind": source.kind.value}
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
    return entry


def _slot_run_json(run: SlotRun) -> SlotRunEntry:
    return {
        "source": run.source_key,
        "first_batch": run.first_batch,
        "last_batch": run.last_batch,
        "slots": run.slots,
        "note": run.note,
    }


def _tp_json(tp: TopicPartition) -> dict[str, Any]:
    return {"topic": tp.topic, "partition": tp.partition}


def _sub_state_json(sub: PartitionOffset) -> PartitionEntry:
    return {"topic": sub.topic, "partition": sub.partition, "offset": sub.offset}
