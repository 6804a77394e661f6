"""The two ends of a batch seen from each other: what the start reads, what the end leaves."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from state.document import SlotsDocument
from state.offset_state import OffsetState
from state.partitions import TopicPartition
from state.topic_identity import recreated_topics

__all__ = ["backlog_report", "clip_to", "reading_start"]


def reading_start(
    start: SlotsDocument, end: SlotsDocument, recreated_since: Iterable[str] = ()
) -> OffsetState:
    """Where each partition's reading starts in the batch ``[start, end)``.

    ``start``'s positions, clipped to ``end`` (:func:`clip_to`): a partition that went back
    reads nothing, and so does every partition of a topic re-created between the two ends
    (its Kafka id differs in the two documents) or since ``end`` was planned
    (``recreated_since``, which the driver finds by asking Kafka again).
    """
    recreated = frozenset(recreated_topics(start.topic_ids, end.topic_ids)) | frozenset(
        recreated_since
    )
    return clip_to(start.state, end.state, recreated)


def clip_to(
    start: OffsetState, end: OffsetState, recreated: frozenset[str] = frozenset()
) -> OffsetState:
    """``start``, with each partition whose offset in ``end`` is lower moved back to it.

    Such a partition went back (deleted and re-created, with ``failOnDataLoss`` false): it
    reads nothing this batch. So does every partition of a topic in ``recreated``, whose
    ``end`` offset belongs to the new topic while ``start`` belongs to the old one, even where
    it is higher. Partitions only in ``start`` keep their offsets. Keyed by
    ``(topic, partition)`` tuples, as a batch of thousands of partitions has no partition to
    clip almost always and should not pay for building keyed offset maps to find that out.
    """
    end_at = {(sub.topic, sub.partition): sub.offset for slot in end.slots for sub in slot}
    back: dict[TopicPartition, int] = {}
    for slot in start.slots:
        for sub in slot:
            until = end_at.get((sub.topic, sub.partition), sub.offset)
            if until < sub.offset or (sub.topic in recreated and until != sub.offset):
                back[sub.topic_partition] = until
    return start.with_offsets(back) if back else start


def backlog_report(end: OffsetState, latest: Mapping[TopicPartition, int]) -> dict[str, Any]:
    """Sum, per slot, the records between each partition's batch end and its latest offset."""
    # A TopicPartition hashes and compares as its (topic, partition) key: looked up with one.
    latest_at = latest.get
    per_slot = []
    values = []
    for slot in end.slots:
        behind = [
            max(0, latest_at((sub.topic, sub.partition), sub.offset) - sub.offset) for sub in slot
        ]
        per_slot.append(sum(behind))
        values.extend(behind)
    return {
        "total": sum(values),
        "perSlot": per_slot,
        "perPartition": {
            "min": min(values, default=0),
            "max": max(values, default=0),
            "avg": round(sum(values) / len(values), 1) if values else 0.0,
        },
    }
