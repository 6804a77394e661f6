"""Feeding a producer with bounded memory, and the at-least-once write of one task.

librdkafka queues records in memory until they are sent. Its queue is bounded (see
``kafka_clients.sink_producer``); when it is full, ``produce`` raises ``BufferError`` and the
task waits for deliveries to make room instead of reading more input: that is the sink's
backpressure, and what keeps a task's memory flat however large its partition is.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from kafka_rescalable import kafka_clients
from kafka_rescalable.errors import KafkaWriteError
from kafka_rescalable.sink.options import KafkaSinkOptions
from kafka_rescalable.sink.rows import SinkColumns, kafka_records

__all__ = ["DeliveryFailures", "TaskOutcome", "produce_all", "write_at_least_once"]

_ROOM_WAIT_S: Final = 0.01
"""How long a task waits for deliveries when the producer's queue is full, per try.

Short: with ``delivery.report.only.error`` a poll returns early only for failures, so it
always waits this long while deliveries go on in librdkafka's threads."""
_POLL_EVERY: Final = 10_000
"""Serve delivery reports every this many records, so a failure stops the task early."""
_FLUSH_STEP_S: Final = 1.0
"""How long one ``flush`` waits before the task looks at the client's errors again."""


@dataclass(frozen=True)
class TaskOutcome:
    """What one sink task did: how many records it wrote, and whether it found them written.

    ``already_committed`` is true when an exactly-once attempt found its batch's marker
    committed by an earlier attempt and wrote nothing.
    """

    records: int
    already_committed: bool = False


class DeliveryFailures:
    """The producer's ``on_delivery`` callback: keeps the first record Kafka refused.

    With ``delivery.report.only.error`` librdkafka calls it for failures only.
    """

    def __init__(self) -> None:
        self.first: Any = None
        self.count = 0
        self._lock = threading.Lock()

    def __call__(self, error: Any, message: Any) -> None:
        """Record a failed delivery (librdkafka's delivery report)."""
        if error is None:
            return
        with self._lock:
            self.count += 1
            if self.first is None:
                self.first = (error, message.topic(), message.partition())

    def raise_if_any(self) -> None:
        """Raise :class:`KafkaWriteError` for the first failed delivery, if there was one."""
        if self.first is not None:
            error, topic, partition = self.first
            where = f"{topic}" + (f" partition {partition}" if partition >= 0 else "")
            msg = (
                f"Kafka refused {self.count} record(s) of this task; the first, to {where}: "
                f"{error.str()}"
            )
            raise KafkaWriteError(msg, error)


def produce_all(
    producer: Any, batches: Iterable[Any], columns: SinkColumns, failures: DeliveryFailures
) -> int:
    """Hand every row of ``batches`` (Arrow record batches) to ``producer``; return the count.

    It returns once every record is queued, not delivered: the caller flushes or commits.
    Typed columns are encoded by encoders built once for the task.

    Raises
    ------
    SinkInputError
        For a row that cannot be written (no topic, a value that does not encode).
    KafkaWriteError
        When Kafka refuses a record.
    KafkaException
        When the producer refuses a record at once; for a producer that hit a fatal error,
        the error that made it so (see :func:`_fatal_cause`), not librdkafka's bare "Fatal
        error".
    """
    from confluent_kafka import KafkaException

    encoders = columns.encoders()
    produce = producer.produce
    # Fewer arguments make a faster call: some 30% of a small record's cost.
    plain = not (columns.has_partition or columns.has_headers)
    count = 0
    for batch in batches:
        for topic, value, key, partition, headers in kafka_records(batch, columns, count, encoders):
            while True:
                try:
                    if plain:
                        produce(topic, value, key)
                    else:
                        produce(topic, value, key, partition, headers=headers)
                    break
                except BufferError:
                    producer.poll(_ROOM_WAIT_S)  # full queue: wait for deliveries
                    failures.raise_if_any()
                except KafkaException as refused:
                    cause = _fatal_cause(producer, refused)
                    if cause is refused:
                        raise
                    raise cause from refused
            count += 1
            if count % _POLL_EVERY == 0:
                producer.poll(0)
                failures.raise_if_any()
    return count


def _fatal_cause(producer: Any, refused: Exception) -> Exception:
    """Return the error that made ``producer`` fatal, when ``refused`` only says it is.

    Once a producer has hit a fatal error (fenced by a newer attempt of its task, say),
    librdkafka refuses every further record with a bare "Local: Fatal error"; the error that
    says why is raised by the producer's next ``poll``. Any other refusal is returned as is.
    """
    from confluent_kafka import KafkaError, KafkaException

    error = refused.args[0] if refused.args else None
    if not isinstance(error, KafkaError) or error.code() != KafkaError._FATAL:
        return refused
    try:
        producer.poll(0)
    except KafkaException as cause:
        return cause
    return refused


def write_at_least_once(
    options: KafkaSinkOptions, columns: SinkColumns, batches: Iterable[Any]
) -> TaskOutcome:
    """Write a task's rows with the idempotent producer and wait until Kafka has them all.

    A retried task, or a replayed micro-batch, writes its rows again: at least once.
    """
    failures = DeliveryFailures()
    errors = kafka_clients.ClientErrors()
    producer = kafka_clients.sink_producer(
        options.bootstrap_servers, options.client_settings, errors, failures
    )
    count = produce_all(producer, batches, columns, failures)
    # flush() in steps: as flush() alone, until every record is delivered or has timed out,
    # unless an OIDC provider refused the client's secret, which waiting does not change.
    left = producer.flush(_FLUSH_STEP_S)
    while left and not errors.definitive:
        left = producer.flush(_FLUSH_STEP_S)
    failures.raise_if_any()
    if left:
        reason = f": {errors.last.str()}" if errors.last is not None else ""
        msg = f"{left} of this task's {count} records were not delivered{reason}"
        raise KafkaWriteError(msg, errors.last)
    return TaskOutcome(count)
