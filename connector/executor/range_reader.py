"""Executor side: read a task's offset ranges with one consumer and yield Arrow batches.

The consumer is borrowed from the Python worker's pool (:mod:`kafka_rescalable.consumer_pool`) and
every round assigns its partitions with explicit start offsets, so a consumer an earlier task
used reads exactly what a new one would; records below a range's start, which librdkafka
already drops after a re-assignment, are dropped here too.

A range ``[start, until)`` is finished by whichever comes first: a record at ``until - 1`` or
beyond, or the partition's end-of-log event at or beyond ``until``. The second rule is what
keeps the reader from hanging on offset gaps: compacted-away records, transaction markers and
(under ``read_committed``) aborted records leave offsets no record will ever be delivered for,
yet the end-of-log event still arrives once the consumer has passed them.

Each ``consume()`` batch without error events (nearly all of them) is turned into one Arrow
batch first and then cut with Arrow kernels (:mod:`kafka_rescalable.executor.arrow_cut`), per run of
consecutive records of one partition, so no Python code runs per record beyond the accessor
calls in :func:`kafka_rescalable.executor.arrow_rows.messages_to_batch`. A batch holding an error
event (end of log, lost records, a failure) is handled record by record
(:mod:`kafka_rescalable.executor.range_events`), which gives the same result. When to stop waiting
for a silent partition is decided by :mod:`kafka_rescalable.executor.stalls`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa

from kafka_rescalable._gc import cycle_collector_paused
from kafka_rescalable.errors import KafkaAuthenticationError, KafkaReadError
from kafka_rescalable.executor import task_timing
from kafka_rescalable.executor.arrow_cut import RangeKey, take_in_range
from kafka_rescalable.executor.arrow_rows import messages_to_batch
from kafka_rescalable.executor.range_events import accept_with_events
from kafka_rescalable.executor.stalls import (
    Stall,
    login_refused_message,
    poll_timeout_message,
    stall,
)
from kafka_rescalable.kafka_clients import ClientErrors, lend_executor_consumer
from kafka_rescalable.state import OffsetRange, TopicPartition
from kafka_rescalable.task import RangeReadSettings

__all__ = ["FETCH_DEFAULTS", "read_ranges"]

FETCH_DEFAULTS: Mapping[str, str] = {
    # librdkafka waits this long before fetching again for a partition whose prefetch queue
    # was full (default 1000 ms). A reader that drains the queue as fast as it can then sits
    # idle most of each second: with the default, a consumer of 100-byte records gets a fifth
    # of the records per second it gets with 1 ms (see benchmarks/RESULTS.md).
    "fetch.queue.backoff.ms": "1",
    # How long the broker may hold a fetch for a partition with nothing new (default 500 ms).
    # When a task's last range ends, its consumer has usually sent one more fetch, for the
    # offsets after the range; librdkafka keeps one fetch in flight per broker, so the next
    # task that borrows the consumer from the pool would wait for that fetch first: up to
    # 500 ms per task on a topic that is not being written (see benchmarks/RESULTS.md).
    "fetch.wait.max.ms": "10",
}
"""Consumer settings the executors use unless ``kafka.*`` options set them."""

# consume() returns when it has as many messages as asked for or when this wait is over. A
# task asks for no more than the offsets its ranges have left, so it only waits when offsets
# hold no record (compaction, transaction markers) and the end-of-log event is still to come.
_CONSUME_WAIT_S = 0.1


def read_ranges(
    ranges: Sequence[OffsetRange], settings: RangeReadSettings
) -> Iterator[pa.RecordBatch]:
    """Yield the records of ``ranges`` as Arrow batches, each record exactly once.

    Ranges of one partition are merged when contiguous; if a task ever holds two disjoint
    ranges of one partition they are read in separate rounds, because one consumer can hold a
    partition at one position only.
    """
    timing = task_timing.start()
    topics = {r.topic for r in ranges}
    # A consumer that is only ever assigned partitions of one topic only ever receives that
    # topic's records, so the topic column can be filled without asking each record.
    single_topic = next(iter(topics)) if len(topics) == 1 else None
    with lend_executor_consumer(
        {**FETCH_DEFAULTS, **settings.consumer_config},
        {
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            # Surface a missing start offset as an error instead of silently jumping.
            "auto.offset.reset": "error",
        },
        settings.consumer_idle_timeout_s,
    ) as loan:
        loan.partitions = len({(r.topic, r.partition) for r in ranges})
        if timing is not None:
            timing.setup_s = time.monotonic() - timing.started
            timing.ranges = len(ranges)
            timing.reused = loan.reused
        for round_ranges in _rounds(ranges):
            yield from _read_round(
                loan.consumer, round_ranges, settings, single_topic, loan.errors, timing
            )
        released = time.monotonic()
    if timing is not None:
        timing.release_s = time.monotonic() - released
        timing.finish()


def _rounds(ranges: Sequence[OffsetRange]) -> list[dict[TopicPartition, OffsetRange]]:
    merged: dict[TopicPartition, list[OffsetRange]] = {}
    for offset_range in sorted(ranges, key=lambda r: (r.topic, r.partition, r.start)):
        if offset_range.size == 0:
            continue
        pieces = merged.setdefault(offset_range.topic_partition, [])
        if pieces and pieces[-1].until == offset_range.start:
            last = pieces.pop()
            offset_range = OffsetRange(last.topic, last.partition, last.start, offset_range.until)
        pieces.append(offset_range)
    depth = max((len(pieces) for pieces in merged.values()), default=0)
    return [
        {tp: pieces[i] for tp, pieces in merged.items() if i < len(pieces)} for i in range(depth)
    ]


def _read_round(
    consumer: object,
    pending: dict[TopicPartition, OffsetRange],
    settings: RangeReadSettings,
    single_topic: str | None,
    errors: ClientErrors,
    timing: task_timing.TaskTiming | None,
) -> Iterator[pa.RecordBatch]:
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    remaining: dict[RangeKey, OffsetRange] = {(r.topic, r.partition): r for r in pending.values()}
    consumer.assign(  # type: ignore[attr-defined]
        [KafkaTopicPartition(r.topic, r.partition, r.start) for r in remaining.values()]
    )
    assigned = last_rows = time.monotonic()

    def finish(key: RangeKey) -> None:
        del remaining[key]
        consumer.incremental_unassign([KafkaTopicPartition(*key)])  # type: ignore[attr-defined]

    last_progress = time.monotonic()
    while remaining:
        with cycle_collector_paused():
            wanted = min(settings.batch_size, _offsets_left(consumer, remaining))
            if timing is not None:
                asked = time.monotonic()
            messages = consumer.consume(wanted, timeout=_CONSUME_WAIT_S)  # type: ignore[attr-defined]
            batch = None
            received = bool(messages)
            if timing is not None:
                _time_consume(timing, asked, received, assigned)
            if received:
                # "is not None": KafkaError's == against None raises inside confluent-kafka.
                if not [message for message in messages if message.error() is not None]:
                    whole = messages_to_batch(messages, settings.include_headers, single_topic)
                    cut = take_in_range(whole, remaining, single_topic)
                    for key in cut.finished:
                        finish(key)
                    batch = cut.rows
                else:
                    rows = accept_with_events(
                        consumer, messages, remaining, settings.fail_on_data_loss, finish
                    )
                    if rows:
                        batch = messages_to_batch(rows, settings.include_headers, single_topic)
                del messages
        if received:
            last_progress = time.monotonic()
            if errors.authentication is not None:
                errors.clear()  # a refusal that passed: a broker was restarting
        else:
            refused = errors.authentication
            why = stall(
                time.monotonic() - last_progress, refused is not None, settings.poll_timeout_ms
            )
            if why is Stall.LOGIN_REFUSED and refused is not None:
                reading = next(iter(remaining.values()))
                raise KafkaAuthenticationError(
                    login_refused_message(reading, refused.str()), refused
                )
            if why is Stall.POLL_TIMEOUT:
                raise KafkaReadError(
                    poll_timeout_message(settings.poll_timeout_ms, remaining.values())
                )
        if batch is not None and batch.num_rows:
            yield batch
            if timing is not None:
                # After the yield: the time Spark spent on the batch is not waiting.
                timing.rows += batch.num_rows
                last_rows = time.monotonic()
    if timing is not None:
        timing.end_wait_s += time.monotonic() - last_rows


def _time_consume(
    timing: task_timing.TaskTiming, asked: float, received: bool, assigned: float
) -> None:
    now = time.monotonic()
    timing.consume_s += now - asked
    if not received:
        timing.empty_polls += 1
        timing.empty_s += now - asked
    elif timing.first_record_s is None:
        timing.first_record_s = now - assigned


def _offsets_left(consumer: object, remaining: Mapping[RangeKey, OffsetRange]) -> int:
    """Count the offsets the remaining ranges have still to read (at least 1).

    A partition's position is the offset after the last record ``consume()`` returned, or
    invalid (negative) before the first one.
    """
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    positions = consumer.position(  # type: ignore[attr-defined]
        [KafkaTopicPartition(topic, partition) for topic, partition in remaining]
    )
    left = 0
    for position in positions:
        offset_range = remaining[(position.topic, position.partition)]
        left += offset_range.until - max(position.offset, offset_range.start)
    return max(1, left)
