"""Error events met while reading a range: end of log, lost records, refusals.

A ``consume()`` batch holding an error event is handled here, one message at a time; the
common batch without one is cut with Arrow kernels in :mod:`connector.executor.range_reader`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from connector._logging import logger
from connector.errors import DataLossError, KafkaAuthorizationError, KafkaReadError
from state import OffsetRange

__all__ = ["accept_with_events", "describe_range"]

_Key = tuple[str, int]


def accept_with_events(
    consumer: object,
    messages: Sequence[object],
    remaining: dict[_Key, OffsetRange],
    fail_on_data_loss: bool,
    finish: Callable[[_Key], None],
) -> list[object]:
    """Return the records of a batch that holds error events, one message at a time.

    ``finish`` marks a range done; ``remaining`` is changed in place when lost records move a
    range's start.
    """
    from confluent_kafka import KafkaError

    rows = []
    for message in messages:
        key = (message.topic(), message.partition())  # type: ignore[attr-defined]
        offset_range = remaining.get(key)
        if offset_range is None:
            continue  # fetched before its range finished; not ours to emit
        if message.offset() < offset_range.start:  # type: ignore[attr-defined]
            continue  # from an earlier assignment of a reused consumer (see _take_in_range)
        error = message.error()  # type: ignore[attr-defined]
        if error is not None:
            if error.code() == KafkaError._PARTITION_EOF:  # type: ignore[attr-defined]
                if message.offset() < offset_range.until:  # type: ignore[attr-defined]
                    _report_truncation(offset_range, message.offset(), fail_on_data_loss)  # type: ignore[attr-defined]
                finish(key)
            elif error.code() == KafkaError._AUTO_OFFSET_RESET:  # type: ignore[attr-defined]
                _skip_lost_records(consumer, offset_range, remaining, fail_on_data_loss, finish)
            elif error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:  # type: ignore[attr-defined]
                topic = offset_range.topic
                msg = (
                    f"not authorized to READ topic {topic} "
                    f"(reading {describe_range(offset_range)}): "
                    "the connector's principal lacks the READ permission on it. Grant it, e.g. "
                    "kafka-acls --add --allow-principal User:<name> --operation READ "
                    f"--topic {topic}"
                )
                raise KafkaAuthorizationError(msg, [topic], "READ", error)
            else:
                msg = f"reading {describe_range(offset_range)} failed: {error.str()}"  # type: ignore[attr-defined]
                raise KafkaReadError(msg, error)
            continue
        offset = message.offset()  # type: ignore[attr-defined]
        if offset >= offset_range.until:
            finish(key)
            continue
        rows.append(message)
        if offset >= offset_range.until - 1:
            finish(key)
    return rows


def _skip_lost_records(
    consumer: object,
    offset_range: OffsetRange,
    remaining: dict[_Key, OffsetRange],
    fail_on_data_loss: bool,
    finish: Callable[[_Key], None],
) -> None:
    """Fail, or go on from what is left, when a range's start is gone (retention or truncation)."""
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    tp = offset_range.topic_partition
    key = (tp.topic, tp.partition)
    low, _high = consumer.get_watermark_offsets(  # type: ignore[attr-defined]
        KafkaTopicPartition(tp.topic, tp.partition), timeout=10.0, cached=False
    )
    lost_until = min(max(low, offset_range.start), offset_range.until)
    msg = (
        f"{tp.topic}-{tp.partition}: offsets [{offset_range.start}, {lost_until}) were deleted "
        f"before they were read (the partition now starts at {low}), probably by retention"
    )
    if fail_on_data_loss:
        raise DataLossError(
            msg + ". Set 'failOnDataLoss' to false to skip lost records with a warning instead."
        )
    logger.warning("%s; skipping them because failOnDataLoss is false", msg)
    if lost_until >= offset_range.until:
        finish(key)
        return
    remaining[key] = OffsetRange(tp.topic, tp.partition, lost_until, offset_range.until)
    # After an out-of-range error librdkafka refuses seek(); assigning anew restarts the fetch.
    consumer.incremental_unassign([KafkaTopicPartition(tp.topic, tp.partition)])  # type: ignore[attr-defined]
    consumer.incremental_assign([KafkaTopicPartition(tp.topic, tp.partition, lost_until)])  # type: ignore[attr-defined]


def _report_truncation(
    offset_range: OffsetRange, log_end: int, fail_on_data_loss: bool
) -> None:
    """Report a log ending before a range planned from it: records were removed after planning."""
    tp = offset_range.topic_partition
    msg = (
        f"{tp.topic}-{tp.partition}: the log ends at {log_end} but offsets up to "
        f"{offset_range.until} were planned; offsets [{log_end}, {offset_range.until}) are gone "
        "(topic deleted and re-created, or an unclean leader election)"
    )
    if fail_on_data_loss:
        raise DataLossError(msg + ". Set 'failOnDataLoss' to false to go on with a warning.")
    logger.warning("%s; going on because failOnDataLoss is false", msg)


def describe_range(offset_range: OffsetRange) -> str:
    """``orders-0 [5, 9)`` for messages."""
    return (
        f"{offset_range.topic}-{offset_range.partition} "
        f"[{offset_range.start}, {offset_range.until})"
    )
