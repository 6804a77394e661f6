"""Executor side: read a task's offset ranges with one consumer and yield Arrow batches.

A range ``[start, until)`` is finished by whichever comes first: a record at ``until - 1`` or
beyond, or the partition's end-of-log event at or beyond ``until``. The second rule is what
keeps the reader from hanging on offset gaps: compacted-away records, transaction markers and
(under ``read_committed``) aborted records leave offsets no record will ever be delivered for,
yet the end-of-log event still arrives once the consumer has passed them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from connector._logging import logger
from connector.arrow_rows import messages_to_batch
from connector.errors import DataLossError, KafkaReadError
from state import OffsetRange, TopicPartition

__all__ = ["RangeReadSettings", "read_ranges"]



@dataclass(frozen=True)
class RangeReadSettings:
    """What an executor needs to read: picklable, shipped inside each input partition."""

    consumer_config: Mapping[str, str]
    include_headers: bool
    fail_on_data_loss: bool
    poll_timeout_ms: int
    batch_size: int


def read_ranges(ranges: Sequence[OffsetRange], settings: RangeReadSettings) -> Iterator[pa.RecordBatch]:
    """Yield the records of ``ranges`` as Arrow batches, each record exactly once.

    Ranges of one partition are merged when contiguous; if a task ever holds two disjoint
    ranges of one partition they are read in separate rounds, because one consumer can hold a
    partition at one position only.
    """
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            **settings.consumer_config,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            # Surface a missing start offset as an error instead of silently jumping.
            "auto.offset.reset": "error",
        }
    )
    try:
        for round_ranges in _rounds(ranges):
            yield from _read_round(consumer, round_ranges, settings)
    finally:
        consumer.close()


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
    consumer: object, pending: dict[TopicPartition, OffsetRange], settings: RangeReadSettings
) -> Iterator[pa.RecordBatch]:
    from confluent_kafka import KafkaError
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    remaining = dict(pending)
    consumer.assign(  # type: ignore[attr-defined]
        [KafkaTopicPartition(r.topic, r.partition, r.start) for r in remaining.values()]
    )

    def finish(tp: TopicPartition) -> None:
        del remaining[tp]
        consumer.incremental_unassign([KafkaTopicPartition(tp.topic, tp.partition)])  # type: ignore[attr-defined]

    last_progress = time.monotonic()
    while remaining:
        messages = consumer.consume(settings.batch_size, timeout=1.0)  # type: ignore[attr-defined]
        rows = []
        for message in messages:
            tp = TopicPartition(message.topic(), message.partition())
            offset_range = remaining.get(tp)
            if offset_range is None:
                continue  # fetched before its range finished; not ours to emit
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    if message.offset() < offset_range.until:
                        _report_truncation(offset_range, message.offset(), settings)
                    finish(tp)
                elif error.code() == KafkaError._AUTO_OFFSET_RESET:
                    _skip_lost_records(consumer, offset_range, remaining, settings, finish)
                else:
                    msg = f"reading {_describe(offset_range)} failed: {error.str()}"
                    raise KafkaReadError(msg, error)
                continue
            offset = message.offset()
            if offset >= offset_range.until:
                finish(tp)
                continue
            rows.append(message)
            if offset >= offset_range.until - 1:
                finish(tp)
        if messages:
            last_progress = time.monotonic()
        elif (time.monotonic() - last_progress) * 1000 > settings.poll_timeout_ms:
            waiting = ", ".join(_describe(r) for r in sorted(remaining.values(), key=_key))
            msg = (
                f"no record arrived for {settings.poll_timeout_ms} ms while reading {waiting}; "
                "check that the brokers are reachable from the executors, or raise "
                "'kafkaConsumer.pollTimeoutMs'"
            )
            raise KafkaReadError(msg)
        if rows:
            yield messages_to_batch(rows, settings.include_headers)


def _skip_lost_records(
    consumer: object,
    offset_range: OffsetRange,
    remaining: dict[TopicPartition, OffsetRange],
    settings: RangeReadSettings,
    finish: object,
) -> None:
    """The range's start is gone (retention or truncation): fail, or go on from what is left."""
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    tp = offset_range.topic_partition
    low, _high = consumer.get_watermark_offsets(  # type: ignore[attr-defined]
        KafkaTopicPartition(tp.topic, tp.partition), timeout=10.0, cached=False
    )
    lost_until = min(max(low, offset_range.start), offset_range.until)
    msg = (
        f"{tp.topic}-{tp.partition}: offsets [{offset_range.start}, {lost_until}) were deleted "
        f"before they were read (the partition now starts at {low}), probably by retention"
    )
    if settings.fail_on_data_loss:
        raise DataLossError(
            msg + ". Set 'failOnDataLoss' to false to skip lost records with a warning instead."
        )
    logger.warning("%s; skipping them because failOnDataLoss is false", msg)
    if lost_until >= offset_range.until:
        finish(tp)  # type: ignore[operator]
        return
    remaining[tp] = OffsetRange(tp.topic, tp.partition, lost_until, offset_range.until)
    # After an out-of-range error librdkafka refuses seek(); assigning anew restarts the fetch.
    consumer.incremental_unassign([KafkaTopicPartition(tp.topic, tp.partition)])  # type: ignore[attr-defined]
    consumer.incremental_assign([KafkaTopicPartition(tp.topic, tp.partition, lost_until)])  # type: ignore[attr-defined]


def _report_truncation(offset_range: OffsetRange, log_end: int, settings: RangeReadSettings) -> None:
    """The log ends before a range planned from it: records were removed after planning."""
    tp = offset_range.topic_partition
    msg = (
        f"{tp.topic}-{tp.partition}: the log ends at {log_end} but offsets up to "
        f"{offset_range.until} were planned; offsets [{log_end}, {offset_range.until}) are gone "
        "(topic deleted and re-created, or an unclean leader election)"
    )
    if settings.fail_on_data_loss:
        raise DataLossError(msg + ". Set 'failOnDataLoss' to false to go on with a warning.")
    logger.warning("%s; going on because failOnDataLoss is false", msg)


def _key(offset_range: OffsetRange) -> tuple[str, int]:
    return (offset_range.topic, offset_range.partition)


def _describe(offset_range: OffsetRange) -> str:
    return (
        f"{offset_range.topic}-{offset_range.partition} "
        f"[{offset_range.start}, {offset_range.until})"
    )
