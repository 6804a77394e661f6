"""The text view, written from the JSON model of :mod:`kafka_rescalable.inspect.model` only.

Nothing here looks at the offset log's values: :func:`batch_text` and :func:`diff_text`
take a :class:`~kafka_rescalable.inspect.model.BatchView` or
:class:`~kafka_rescalable.inspect.model.DiffView`, as built or as read back from ``--json``
output, so the text says nothing the JSON does not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kafka_rescalable.inspect._text import count, id_ranges, iso_time, quote
from kafka_rescalable.inspect.diffing import SourceDiff
from kafka_rescalable.inspect.model import (
    BatchView,
    ContinuationView,
    DiffView,
    PartitionEntry,
    SlotRunEntry,
    SourceEntry,
    batch_json,
    diff_json,
)
from kafka_rescalable.inspect.reading import BUILTIN_DETAIL, BatchOffsets, CheckpointLog, SourceKind
from kafka_rescalable.state import PartitionOffset, TopicPartition


def batch_text(view: BatchView) -> str:
    """Describe one batch and the slot history as text."""
    batch = view["batch"]
    lines = [f"checkpoint: {view['checkpoint']}"]
    lines.append(f"offset log: {_log_summary(view)}")
    lines.extend(_history_lines(view["slot_history"]))
    lines.append("")
    lines.append(f"batch {batch['id']}: {_batch_status(view)}")
    for source in batch["sources"]:
        lines.extend(_source_lines(source))
    if not batch["sources"]:
        lines.append("  (no source line)")
    partitions = count(batch["total_partitions"], "partition")
    lines.append(f"total: {partitions} in {count(batch['total_slots'], 'slot')}")
    return "\n".join(lines)


def diff_text(view: DiffView) -> str:
    """Describe assignment changes and records read between two batches as text."""
    lines = [f"checkpoint: {view['checkpoint']}"]
    for diff in view["diffs"]:
        a, b = diff["from_batch"], diff["to_batch"]
        lines.append("")
        lines.append(f"source {diff['source']}: batch {a} -> batch {b}")
        before, after = diff["slots_before"], diff["slots_after"]
        change = "unchanged" if before == after else "changed"
        lines.append(f"  slots: {before} -> {after} ({change})")
        lines.append(f"  partitions moved: {len(diff['moved'])}")
        for move in diff["moved"]:
            slots = f"slot {move['from_slot']} -> slot {move['to_slot']}"
            lines.append(f"    {_topic_partition(move)}: {slots}")
        lines.append(f"  partitions added: {len(diff['added'])}")
        for placed in diff["added"]:
            lines.append(f"    {_sub_state(placed)} in slot {placed['slot']}")
        lines.append(f"  partitions removed: {len(diff['removed'])}")
        for placed in diff["removed"]:
            lines.append(f"    {_sub_state(placed)} was in slot {placed['slot']}")
        read_by = f"batch {b}" if b == a + 1 else f"batches {a + 1}..{b}"
        if a == b:
            read_by = "no batch"
        total = diff["total_records"]
        lines.append(f"  records between the two batches (read by {read_by}): {total}")
        for step in diff["records"]:
            note = " (joined)" if step["joined"] else ""
            if step["records"] < 0:
                note += " (went backwards: records lost?)"
            lines.append(
                f"    {_topic_partition(step)}: {step['from_offset']} -> {step['to_offset']} "
                f"({step['records']:+d}){note}"
            )
    return "\n".join(lines)


def continuation_text(view: ContinuationView) -> str:
    """Write the ``startingOffsets`` to pass on: the JSON alone for one source, else a line each.

    Alone, it is ready for a shell:
    ``startingOffsets="$(kafka-rescalable-inspect <checkpoint> --starting-offsets)"``;
    several sources give ``source <key>: <JSON>`` lines (``--source`` picks one).
    """
    lines = [
        (s["source"], json.dumps(s["startingOffsets"], separators=(",", ":")))
        for s in view["sources"]
    ]
    if len(lines) == 1:
        return lines[0][1]
    return "\n".join(f"source {key}: {value}" for key, value in lines)


def render_batch(log: CheckpointLog, batch: BatchOffsets) -> str:
    """Describe one batch and the slot history as text: :func:`batch_text` of its view."""
    return batch_text(batch_json(log, batch))


def render_diff(log: CheckpointLog, diffs: Sequence[SourceDiff]) -> str:
    """Describe changes between two batches as text: :func:`diff_text` of their view."""
    return diff_text(diff_json(log, diffs))


def _log_summary(view: BatchView) -> str:
    ids = view["batch_ids"]
    last = view["last_committed_batch"]
    text = f"batches {id_ranges(ids)} ({count(len(ids), 'batch', 'batches')}), "
    text += f"last committed: {'none' if last is None else last}"
    if view["unreadable_batches"]:
        unreadable = id_ranges(int(batch_id) for batch_id in view["unreadable_batches"])
        text += f"; unreadable: {unreadable} (see --batch)"
    return text


def _history_lines(runs: Sequence[SlotRunEntry]) -> list[str]:
    by_source: dict[str, list[SlotRunEntry]] = {}
    for run in runs:
        by_source.setdefault(run["source"], []).append(run)
    if not by_source:
        return ["slots per batch: no kafka-rescalable source in this checkpoint"]
    lines = []
    for key, source_runs in by_source.items():
        parts = []
        for run in source_runs:
            first, last = run["first_batch"], run["last_batch"]
            span = f"batch {first}" if first == last else f"batch {first}..{last}"
            what = count(run["slots"], "slot") if run["slots"] is not None else run["note"]
            parts.append(f"{span}: {what}")
        label = "slots per batch" if len(by_source) == 1 else f"slots per batch, source {key}"
        lines.append(f"{label}: {'; '.join(parts)}")
    return lines


def _batch_status(view: BatchView) -> str:
    batch = view["batch"]
    status = "committed" if batch["committed"] else "not committed (planned; runs again on restart)"
    if batch["timestamp"] is not None:
        status += f", planned at {batch['timestamp']}"
    if batch["watermark_ms"]:
        status += f", watermark {iso_time(batch['watermark_ms'])}"
    return status


def _source_lines(source: SourceEntry) -> list[str]:
    label = f"source {source['source']}"
    if source["kind"] == SourceKind.NO_OFFSET.value:
        return [f"  {label}: no offset in this batch"]
    if source["kind"] != SourceKind.SLOTS.value:
        raw = quote(source["raw"].strip())
        lines = [f"  {label}: not a kafka-rescalable document ({source['detail']}): {raw}"]
        if source["detail"] == BUILTIN_DETAIL:
            lines.append("    --starting-offsets prints the startingOffsets that continue it")
        return lines
    lines = [
        f"  {label}: kafka-rescalable, {count(source['slot_count'], 'slot')}, "
        f"{count(source['partition_count'], 'partition')} (topic: partition@next offset)"
    ]
    for slot in source["slots"]:
        owned = count(slot["partition_count"], "partition")
        lines.append(f"    slot {slot['slot']} ({owned}): {_owned(slot['partitions'])}")
    for name, value in source["extras"].items():
        lines.append(f"    extra section {name}: {quote(json.dumps(value, sort_keys=True))}")
    return lines


def _owned(partitions: Sequence[PartitionEntry]) -> str:
    """``orders: 0@1042 4@977; audit: 1@5`` for one slot, topics in order."""
    by_topic: dict[str, list[str]] = {}
    for sub in partitions:
        by_topic.setdefault(sub["topic"], []).append(f"{sub['partition']}@{sub['offset']}")
    return "; ".join(f"{topic}: {' '.join(owned)}" for topic, owned in by_topic.items()) or "-"


def _topic_partition(entry: Mapping[str, Any]) -> TopicPartition:
    """Return the partition an entry names, so it is written as everywhere else."""
    return TopicPartition(entry["topic"], entry["partition"])


def _sub_state(entry: PartitionEntry) -> PartitionOffset:
    return PartitionOffset(entry["topic"], entry["partition"], entry["offset"])
