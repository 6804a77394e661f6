"""Executor side: read a task's offset ranges with one consumer and yield Arrow batches.

The consumer is borrowed from the Python worker's pool (:mod:`connector.consumer_pool`) and
every round assigns its partitions with explicit start offsets, so a consumer an earlier task
used reads exactly what a new one would; records below a range's start, which librdkafka
already drops after a re-assignment, are dropped here too.

A range ``[start, until)`` is finished by whichever comes first: a record at ``until - 1`` or
beyond, or the partition's end-of-log event at or beyond ``until``. The second rule is what
keeps the reader from hanging on offset gaps: compacted-away records, transaction markers and
(under ``read_committed``) aborted records leave offsets no record will ever be delivered for,
yet the end-of-log event still arrives once the consumer has passed them.

Each ``consume()`` batch without error events (nearly all of them) is turned into one Arrow
batch first and then cut with Arrow kernels, per run of consecutive records of one partition,
so no Python code runs per record beyond the accessor calls in
:func:`connector.executor.arrow_rows.messages_to_batch`. A batch holding an error event (end of log,
lost records, a failure) is handled record by record, which gives the same result.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from connector._gc import cycle_collector_paused
from connector.config.kafka_config import redacted_settings
from connector.consumer_pool import IDLE_TIMEOUT_S
from connector.errors import (
    KafkaAuthenticationError,
    KafkaReadError,
)
from connector.executor import task_timing
from connector.executor.arrow_rows import messages_to_batch
from connector.executor.range_events import accept_with_events, describe_range
from connector.formats.decoding import DecodePlan
from connector.kafka_clients import ClientErrors, lend_executor_consumer
from state import OffsetRange, TopicPartition

__all__ = ["FETCH_DEFAULTS", "RangeReadSettings", "read_ranges"]

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

# Partition identity inside the hot loops: a plain tuple, not a validated TopicPartition.
_Key = tuple[str, int]


@dataclass(frozen=True, repr=False)
class RangeReadSettings:
    """What an executor needs to read: picklable, it travels with the pickled reader.

    Its ``repr`` hides secret consumer settings, as the options' does.
    """

    consumer_config: Mapping[str, str]
    include_headers: bool
    fail_on_data_loss: bool
    poll_timeout_ms: int
    batch_size: int
    consumer_idle_timeout_s: float = IDLE_TIMEOUT_S
    """How long the worker's pool keeps a consumer no task uses (see connector.consumer_pool)."""
    decode: DecodePlan | None = None
    """How typed keys and values are decoded (``valueFormat``, ...); ``None``: raw bytes."""

    def __repr__(self) -> str:
        """Every field, with secret consumer settings replaced by ``'***'``."""
        return (
            f"RangeReadSettings(consumer_config={redacted_settings(self.consumer_config)!r}, "
            f"include_headers={self.include_headers!r}, "
            f"fail_on_data_loss={self.fail_on_data_loss!r}, "
            f"poll_timeout_ms={self.poll_timeout_ms!r}, batch_size={self.batch_size!r}, "
            f"consumer_idle_timeout_s={self.consumer_idle_timeout_s!r}, "
            f"decode={self.decode!r})"
        )


_LOGIN_REFUSED_GRACE_S = 5.0
"""How long a refused login may last before a task fails: a restarting broker may refuse one."""


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

    remaining: dict[_Key, OffsetRange] = {(r.topic, r.partition): r for r in pending.values()}
    consumer.assign(  # type: ignore[attr-defined]
        [KafkaTopicPartition(r.topic, r.partition, r.start) for r in remaining.values()]
    )
    assigned = last_rows = time.monotonic()

    def finish(key: _Key) -> None:
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
                    batch = _take_in_range(whole, remaining, finish, single_topic)
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
        elif (
            errors.authentication is not None
            and time.monotonic() - last_progress > _LOGIN_REFUSED_GRACE_S
        ):
            msg = (
                "authentication failed while reading "
                f"{describe_range(next(iter(remaining.values())))}"
                f": {errors.authentication.str()}. Check the user name, password and mechanism"
            )
            raise KafkaAuthenticationError(msg, errors.authentication)
        elif (time.monotonic() - last_progress) * 1000 > settings.poll_timeout_ms:
            waiting = ", ".join(describe_range(r) for r in sorted(remaining.values(), key=_key))
            msg = (
                f"no record arrived for {settings.poll_timeout_ms} ms while reading {waiting}; "
                "check that the brokers are reachable from the executors, or raise "
                "'kafkaConsumer.pollTimeoutMs'"
            )
            raise KafkaReadError(msg)
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


def _offsets_left(consumer: object, remaining: Mapping[_Key, OffsetRange]) -> int:
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


def _take_in_range(
    batch: pa.RecordBatch,
    remaining: dict[_Key, OffsetRange],
    finish: Callable[[_Key], None],
    single_topic: str | None,
) -> pa.RecordBatch | None:
    """Return the rows of ``batch`` (records, no error event) that their ranges want.

    The same rule as :func:`connector.executor.range_events.accept_with_events` applies
    record by record, computed once per run of consecutive records of one partition: a run of
    a partition not (or no longer) remaining is dropped; otherwise its records are kept up to
    the first one at or past ``until - 1``, which is kept itself when it is below ``until``,
    and the partition is done.
    """
    import pyarrow.compute as pc  # not at the top: the driver imports this module too

    count = batch.num_rows
    partitions = batch.column(3)
    offsets = batch.column(4)
    if count > 1:
        changes = pc.not_equal(partitions.slice(1), partitions.slice(0, count - 1))
        if single_topic is None:
            topic_column = batch.column(2)
            changes = pc.or_(
                changes, pc.not_equal(topic_column.slice(1), topic_column.slice(0, count - 1))
            )
        starts = [0, *(index + 1 for index in pc.indices_nonzero(changes).to_pylist())]
    else:
        starts = [0]
    first_rows = pa.array(starts, pa.int64())
    run_partitions = partitions.take(first_rows).to_pylist()
    if single_topic is None:
        run_topics = batch.column(2).take(first_rows).to_pylist()
    else:
        run_topics = [single_topic] * len(starts)
    bounds = [*starts, count]
    kept: list[list[int]] = []
    for index, key in enumerate(zip(run_topics, run_partitions, strict=True)):
        offset_range = remaining.get(key)
        if offset_range is None:
            continue  # fetched before its range finished; not ours to emit
        low, high = bounds[index], bounds[index + 1]
        last = offset_range.until - 1
        run = offsets.slice(low, high - low)
        stop = high
        extremes = pc.min_max(run)
        if extremes["max"].as_py() >= last:
            first = pc.indices_nonzero(pc.greater_equal(run, last))[0].as_py()
            stop = low + first + (1 if run[first].as_py() < offset_range.until else 0)
            finish(key)
        if stop == low:
            continue
        pieces = [[low, stop]]
        if extremes["min"].as_py() < offset_range.start:
            # Records below the range: left from an earlier assignment of a reused consumer.
            # librdkafka drops those itself; this keeps reuse from ever changing the rows.
            pieces = _at_or_above(offsets, low, stop, offset_range.start)
        for piece in pieces:
            if kept and kept[-1][1] == piece[0]:
                kept[-1][1] = piece[1]
            else:
                kept.append(piece)
    if not kept:
        return None
    if len(kept) == 1:
        low, stop = kept[0]
        return batch if stop - low == count else batch.slice(low, stop - low)
    rows = [row for low, stop in kept for row in range(low, stop)]
    return batch.take(pa.array(rows, pa.int64()))


def _at_or_above(offsets: pa.Array, low: int, stop: int, start: int) -> list[list[int]]:
    """Return the runs of rows in ``[low, stop)`` whose offset is at least ``start``."""
    pieces: list[list[int]] = []
    for row, offset in enumerate(offsets.slice(low, stop - low).to_pylist(), low):
        if offset < start:
            continue
        if pieces and pieces[-1][1] == row:
            pieces[-1][1] = row + 1
        else:
            pieces.append([row, row + 1])
    return pieces


def _key(offset_range: OffsetRange) -> tuple[str, int]:
    return (offset_range.topic, offset_range.partition)
