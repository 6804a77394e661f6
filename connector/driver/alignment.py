"""Driver side of event-time alignment (``maxEventTimeDrift``).

The policy is in ``kafka_rescalable.state.event_time``. At each batch boundary one probe consumer
reads at most
two records per partition: the last record read (its timestamp is the partition's event-time
position) and the first unread one (its *head*). The frontier follows from those; each
partition's batch then ends at the first offset whose timestamp is past the frontier, found
with one batched offsets-for-times lookup.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_rescalable._logging import logger
from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.driver.kafka_metadata import KafkaMetadata
from kafka_rescalable.kafka_clients import probe_consumer
from kafka_rescalable.state import (
    EVENT_TIME_KEY,
    EventTimePositions,
    SlotsDocument,
    TopicPartition,
    alignment_frontier,
)
from kafka_rescalable.state.event_time import advance_clocks, aligned_ends, movable_partitions
from kafka_rescalable.state.partitions import describe_partitions

__all__ = ["AlignedEnds", "EventTimeAlignment", "align_end_offsets"]

_PROBE_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class AlignedEnds:
    """End offsets after alignment, the frontier used, and the clocks to checkpoint."""

    ends: dict[TopicPartition, int]
    frontier_ms: int | None
    held: tuple[TopicPartition, ...]
    positions: EventTimePositions


class EventTimeAlignment:
    """One query's alignment across batch boundaries, on the driver.

    The clocks travel in the checkpointed document (its ``eventTime`` section), so a restart
    goes on where the query was; what the driver keeps is only which partitions it held last,
    so the log says when that changes rather than at every batch.
    """

    def __init__(self, options: KafkaSourceOptions) -> None:
        self._options = options
        self._held: tuple[TopicPartition, ...] = ()

    def cut(
        self,
        kafka: KafkaMetadata,
        known: Mapping[TopicPartition, int],
        ends: Mapping[TopicPartition, int],
        start: SlotsDocument,
        available_now: bool,
    ) -> tuple[dict[TopicPartition, int], dict]:
        """Cut ``ends`` at the frontier; return them with the ``eventTime`` section to write.

        ``known`` holds where each partition of ``ends`` starts; ``start`` is the batch's start
        document, whose section holds the clocks so far.
        """
        section = start.extras.get(EVENT_TIME_KEY)
        previous = EventTimePositions.from_dict(section) if section else EventTimePositions()
        starts = {tp: known[tp] for tp in ends}
        aligned = align_end_offsets(self._options, kafka, starts, ends, previous, available_now)
        if aligned.held != self._held:
            self._held = aligned.held
            logger.info(
                "Event-time alignment: frontier %s; holding %s",
                aligned.frontier_ms,
                describe_partitions(aligned.held) or "nothing",
            )
        return aligned.ends, aligned.positions.to_dict()


def align_end_offsets(
    options: KafkaSourceOptions,
    kafka: KafkaMetadata,
    known: Mapping[TopicPartition, int],
    ends: Mapping[TopicPartition, int],
    previous: EventTimePositions,
    available_now: bool,
) -> AlignedEnds:
    """Cut ``ends`` so no partition reads past the frontier (policy: ``state.event_time``).

    Under ``Trigger.AvailableNow`` a caught-up partition gets no more records in this run,
    so only partitions with records waiting count: otherwise the run could stop early.
    """
    assert options.max_event_time_drift_ms is not None
    now_ms = int(time.time() * 1000)
    waiting = {tp for tp, end in ends.items() if end > known[tp]}
    heads, last_events = probe_event_times(options, known, waiting)
    clocks = advance_clocks(known, waiting, last_events, previous, now_ms)
    frontier = alignment_frontier(
        heads,
        {} if available_now else clocks,
        now_ms,
        options.max_event_time_drift_ms,
        options.idle_timeout_ms,
    )
    if frontier is None:
        return AlignedEnds(dict(ends), None, (), EventTimePositions(clocks))
    movable = movable_partitions(waiting, heads, frontier)
    cuts = kafka.offsets_for_times({tp: frontier + 1 for tp in movable})
    aligned, held = aligned_ends(known, ends, waiting, heads, frontier, cuts)
    return AlignedEnds(aligned, frontier, held, EventTimePositions(clocks))


def probe_event_times(
    options: KafkaSourceOptions,
    known: Mapping[TopicPartition, int],
    waiting: set[TopicPartition],
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
    """Read the event times the frontier needs, in one consumer pass.

    These are the timestamps of the first unread record (heads, for ``waiting`` partitions) and
    of the last record read (for every partition past offset 0).
    """
    from confluent_kafka import KafkaError
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    targets = {tp: offset for tp, offset in known.items() if offset > 0 or tp in waiting}
    if not targets:
        return {}, {}
    consumer = probe_consumer(options)
    heads: dict[TopicPartition, int] = {}
    last_events: dict[TopicPartition, int] = {}
    pending = set(targets)
    try:
        consumer.assign(
            [
                KafkaTopicPartition(tp.topic, tp.partition, max(o - 1, 0))
                for tp, o in targets.items()
            ]
        )
        deadline = time.monotonic() + _PROBE_TIMEOUT_S
        while pending and time.monotonic() < deadline:
            for message in consumer.consume(1000, timeout=0.5):
                tp = TopicPartition(message.topic(), message.partition())
                if tp not in pending:
                    continue
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        pending.discard(tp)
                    continue
                if message.offset() < targets[tp]:
                    last_events[tp] = message.timestamp()[1]
                    if tp not in waiting:
                        pending.discard(tp)
                else:
                    heads[tp] = message.timestamp()[1]
                    pending.discard(tp)
                if tp not in pending:
                    consumer.incremental_unassign([KafkaTopicPartition(tp.topic, tp.partition)])
    finally:
        consumer.close()
    return {tp: ts for tp, ts in heads.items() if tp in waiting}, last_events
