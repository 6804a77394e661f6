"""Event-time alignment: which partitions may advance at a batch boundary, and how far.

Spark's watermark follows the largest event time seen in any partition. A partition that
races ahead in event time therefore makes a lagging partition's records late, and a watermark
drops them. Alignment (Flink calls it watermark alignment) bounds how far ahead any partition
may read: the *frontier* is the event time of the slowest active partition plus a drift, and
no partition reads records past it in this batch.

A partition is *active* while it has records waiting, or while fewer than ``idle_ms`` have
passed since it last had some: a caught-up partition still holds the frontier at its last
event time, since its next records may be just as old. Once idle, it stops holding the others
back, so one silent partition cannot stop a query.

If the drift is no larger than the watermark delay, the watermark (largest event time read
minus the delay) never passes the slowest active partition's next record, so nothing it
reads later is dropped as late.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_rescalable.state.errors import OffsetDocumentError
from kafka_rescalable.state.partitions import TopicPartition

__all__ = [
    "EVENT_TIME_KEY",
    "EventTimePositions",
    "PartitionClock",
    "advance_clocks",
    "aligned_ends",
    "alignment_frontier",
    "movable_partitions",
]

EVENT_TIME_KEY = "eventTime"
"""The key of the alignment section in the slots document, beside ``slots``."""


@dataclass(frozen=True, order=True)
class PartitionClock:
    """One partition's event-time position.

    ``last_event_ms`` is the timestamp of the last record read (``None`` before any);
    ``last_active_ms`` the wall-clock time it last had records waiting or read.
    """

    last_event_ms: int | None
    last_active_ms: int


@dataclass(frozen=True)
class EventTimePositions:
    """Per-partition clocks, checkpointed so a restart at any parallelism keeps alignment."""

    clocks: Mapping[TopicPartition, PartitionClock] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Spark's per-topic form: ``{"topic": {"0": [lastEventMs, lastActiveMs]}}``."""
        section: dict[str, dict[str, list[int | None]]] = {}
        for tp in sorted(self.clocks):
            clock = self.clocks[tp]
            section.setdefault(tp.topic, {})[str(tp.partition)] = [
                clock.last_event_ms,
                clock.last_active_ms,
            ]
        return {"partitions": section}

    @classmethod
    def from_dict(cls, section: object) -> EventTimePositions:
        """Parse the section written by :meth:`to_dict`; reject anything else whole."""
        where = EVENT_TIME_KEY
        if not isinstance(section, dict) or not isinstance(section.get("partitions"), dict):
            raise OffsetDocumentError(f"{where}: expected an object with a 'partitions' object")
        clocks: dict[TopicPartition, PartitionClock] = {}
        for topic, partitions in section["partitions"].items():
            if not isinstance(partitions, dict):
                raise OffsetDocumentError(f"{where}.partitions[{topic!r}]: expected an object")
            for partition, pair in partitions.items():
                here = f"{where}.partitions[{topic!r}][{partition!r}]"
                if not (isinstance(partition, str) and partition.isdigit()):
                    raise OffsetDocumentError(f"{here}: partition must be a decimal string")
                if not (
                    isinstance(pair, list)
                    and len(pair) == 2
                    and (pair[0] is None or _is_int(pair[0]))
                    and _is_int(pair[1])
                ):
                    raise OffsetDocumentError(
                        f"{here}: expected [lastEventMs or null, lastActiveMs]"
                    )
                clocks[TopicPartition(topic, int(partition))] = PartitionClock(pair[0], pair[1])
        return cls(clocks)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def alignment_frontier(
    heads: Mapping[TopicPartition, int],
    clocks: Mapping[TopicPartition, PartitionClock],
    now_ms: int,
    drift_ms: int,
    idle_ms: int,
) -> int | None:
    """Return the largest event time any partition may read up to in this batch, or ``None``.

    Parameters
    ----------
    heads
        For each partition with records waiting, the event time of its first unread record.
    clocks
        Every partition's clock as of the previous batch.
    now_ms, drift_ms, idle_ms
        Wall-clock time, the allowed drift and the idle timeout.

    Returns
    -------
    int or None
        ``min(position of active partitions) + drift``; ``None`` when no partition is active
        (then nothing holds anyone back). A waiting partition's position is its head; a
        caught-up active partition's position is its last event time.
    """
    positions = list(heads.values())
    for tp, clock in clocks.items():
        if tp in heads or clock.last_event_ms is None:
            continue
        if now_ms - clock.last_active_ms < idle_ms:
            positions.append(clock.last_event_ms)
    if not positions:
        return None
    return min(positions) + drift_ms


def advance_clocks(
    known: Mapping[TopicPartition, int],
    waiting: set[TopicPartition],
    last_events: Mapping[TopicPartition, int],
    previous: EventTimePositions,
    now_ms: int,
) -> dict[TopicPartition, PartitionClock]:
    """Each known partition's clock at this boundary.

    ``last_events`` holds the timestamps of the last records read, where the driver's probe
    found them; elsewhere the previous clock's event time stays. A partition is active now if
    records wait for it, and keeps its old activity time otherwise.
    """
    clocks: dict[TopicPartition, PartitionClock] = {}
    for tp in known:
        before = previous.clocks.get(tp)
        last_event = last_events.get(tp, before.last_event_ms if before else None)
        active_at = now_ms if tp in waiting or before is None else before.last_active_ms
        clocks[tp] = PartitionClock(last_event, active_at)
    return clocks


def movable_partitions(
    waiting: set[TopicPartition], heads: Mapping[TopicPartition, int], frontier: int
) -> set[TopicPartition]:
    """Return the waiting partitions whose first unread record is not past the frontier."""
    return {tp for tp in waiting if tp in heads and heads[tp] <= frontier}


def aligned_ends(
    known: Mapping[TopicPartition, int],
    ends: Mapping[TopicPartition, int],
    waiting: set[TopicPartition],
    heads: Mapping[TopicPartition, int],
    frontier: int,
    cuts: Mapping[TopicPartition, int],
) -> tuple[dict[TopicPartition, int], tuple[TopicPartition, ...]]:
    """Cut ``ends`` at the frontier; return them and the partitions held where they are.

    ``cuts`` gives, for each movable partition, the first offset whose timestamp is past the
    frontier (``-1`` when there is none, and then the partition reads to its end). A movable
    partition reads at least its head, which is at or before the frontier. A waiting partition
    whose head the probe did not see in time is left unaligned this batch rather than stalled.
    """
    aligned = dict(ends)
    held: list[TopicPartition] = []
    movable = movable_partitions(waiting, heads, frontier)
    for tp in sorted(waiting):
        if tp not in heads:
            continue
        if tp not in movable:
            aligned[tp] = known[tp]
            held.append(tp)
            continue
        cut = cuts.get(tp, -1)
        if cut >= 0:
            aligned[tp] = min(ends[tp], max(cut, known[tp] + 1))
    return aligned, tuple(held)
