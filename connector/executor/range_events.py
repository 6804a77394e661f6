"""Error events met while reading a range: end of log, lost records, refusals.

A ``consume()`` batch holding an error event is handled here, one message at a time; the
common batch without one is cut with Arrow kernels (:mod:`kafka_rescalable.executor.arrow_cut`).
What
to do about lost records is decided by :mod:`kafka_rescalable.state.lost_records`; this module
looks up the
watermark and re-assigns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kafka_rescalable._logging import logger
from kafka_rescalable.errors import DataLossError, KafkaAuthorizationError, KafkaReadError
from kafka_rescalable.executor.arrow_cut import RangeKey
from kafka_rescalable.state import OffsetRange
from kafka_rescalable.state.lost_records import LostRecords, log_ends_early, records_deleted

__all__ = ["accept_with_events"]


def accept_with_events(
    consumer: object,
    messages: Sequence[object],
    remaining: dict[RangeKey, OffsetRange],
    fail_on_data_loss: bool,
    finish: Callable[[RangeKey], None],
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
            continue  # from an earlier assignment of a reused consumer (see arrow_cut)
        error = message.error()  # type: ignore[attr-defined]
        if error is not None:
            if error.code() == KafkaError._PARTITION_EOF:  # type: ignore[attr-defined]
                if message.offset() < offset_range.until:  # type: ignore[attr-defined]
                    log_end = message.offset()  # type: ignore[attr-defined]
                    _report(log_ends_early(offset_range, log_end, fail_on_data_loss))
                finish(key)
            elif error.code() == KafkaError._AUTO_OFFSET_RESET:  # type: ignore[attr-defined]
                _skip_lost_records(consumer, offset_range, remaining, fail_on_data_loss, finish)
            elif error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:  # type: ignore[attr-defined]
                topic = offset_range.topic
                msg = (
                    f"not authorized to READ topic {topic} (reading {offset_range}): "
                    "the connector's principal lacks the READ permission on it. Grant it, e.g. "
                    "kafka-acls --add --allow-principal User:<name> --operation READ "
                    f"--topic {topic}"
                )
                raise KafkaAuthorizationError(msg, [topic], "READ", error)
            else:
                msg = f"reading {offset_range} failed: {error.str()}"  # type: ignore[attr-defined]
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
    remaining: dict[RangeKey, OffsetRange],
    fail_on_data_loss: bool,
    finish: Callable[[RangeKey], None],
) -> None:
    """Look up where the partition now starts and do what :func:`records_deleted` decides."""
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    topic, partition = offset_range.topic, offset_range.partition
    key = (topic, partition)
    low, _high = consumer.get_watermark_offsets(  # type: ignore[attr-defined]
        KafkaTopicPartition(topic, partition), timeout=10.0, cached=False
    )
    decision = records_deleted(offset_range, low, fail_on_data_loss)
    _report(decision)
    if decision.resume_at is None:
        finish(key)
        return
    remaining[key] = OffsetRange(topic, partition, decision.resume_at, offset_range.until)
    # After an out-of-range error librdkafka refuses seek(); assigning anew restarts the fetch.
    consumer.incremental_unassign([KafkaTopicPartition(topic, partition)])  # type: ignore[attr-defined]
    consumer.incremental_assign(  # type: ignore[attr-defined]
        [KafkaTopicPartition(topic, partition, decision.resume_at)]
    )


def _report(decision: LostRecords) -> None:
    """Fail with the decision's message, or log it as a warning."""
    if decision.fatal:
        raise DataLossError(decision.message)
    logger.warning("%s", decision.message)
