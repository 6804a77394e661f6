"""The exactly-once write of one sink task: one Kafka transaction, fenced, with its marker.

The protocol, for the task of sink partition ``p`` in micro-batch ``b`` of query ``q``:

1. Open a transactional producer whose ``transactional.id`` is ``<prefix>-<q>-<p>``, the
   same for every attempt of this task in every batch and every run of the query.
   ``init_transactions`` fences any earlier producer with that id (a failed attempt still
   running, a speculative copy, the task of a killed run) and waits until that producer's
   open transaction, if any, is aborted or committed.
2. Read the offset that group ``<prefix>-<q>-<p>`` has committed on partition 0 of the
   task's first record's topic: the marker. If it records batch ``b`` or a later one
   (``kafka_rescalable.state.sink_commits.must_write``), an earlier attempt committed these rows:
   write
   nothing.
3. Otherwise begin a transaction, produce every row, check that the task's input really
   ended (``worker_input``: a failure upstream in the task cuts the input short without an
   error reaching ``write()``), add the marker for ``b`` (``send_offsets_to_transaction``) and
   commit. Rows and marker become visible together to ``read_committed`` readers, or not at
   all.

It assumes what Spark's own exactly-once sinks assume: a replayed batch has the same rows in
the same sink partitions (a deterministic plan). Kafka's group offsets expire
(``offsets.retention.minutes``, 7 days by default) once a group has no commits: a batch
replayed after a longer stop would be written again.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any, Final

from kafka_rescalable import kafka_clients
from kafka_rescalable.errors import KafkaWriteError
from kafka_rescalable.sink.options import KafkaSinkOptions
from kafka_rescalable.sink.producing import DeliveryFailures, TaskOutcome, produce_all
from kafka_rescalable.sink.rows import SinkColumns, first_topic
from kafka_rescalable.sink.worker_input import input_complete
from kafka_rescalable.state.sink_commits import SinkMarker, must_write

__all__ = [
    "CALL_TIMEOUT_S",
    "SinkTask",
    "abort_quietly",
    "init_transactions",
    "transactional_clients",
    "write_exactly_once",
]

CALL_TIMEOUT_S: Final = 120.0
"""Bound on each transactional call; librdkafka retries inside it."""
_INIT_STEP_S: Final = 5.0
"""How long each call of ``init_transactions`` waits before the client's errors are read."""
MARKER_PARTITION: Final = 0


@dataclass(frozen=True)
class SinkTask:
    """Who is writing: the query, the micro-batch, the sink partition and the attempt.

    ``query_id`` is Spark's streaming query id, kept in the checkpoint and so stable across
    restarts; a batch write uses one id per ``save()``.
    """

    query_id: str
    batch_id: int
    partition: int
    attempt: int = 0

    def transactional_id(self, prefix: str) -> str:
        """Return the transactional id (and marker group) of this query's sink partition."""
        return f"{prefix}-{self.query_id}-{self.partition}"


def write_exactly_once(
    options: KafkaSinkOptions, columns: SinkColumns, task: SinkTask, batches: Iterable[Any]
) -> TaskOutcome:
    """Write one task's rows in one transaction, unless an earlier attempt committed them.

    A task without rows opens no transaction: its replay has no rows either.

    Raises
    ------
    KafkaWriteError
        When Kafka refuses a record, fences this attempt, or a transactional call fails; the
        transaction is aborted (when this attempt still may) and Spark retries the task.
    """
    from confluent_kafka import KafkaException, TopicPartition

    rest = iter(batches)
    first = _first_non_empty(rest)
    if first is None:
        return TaskOutcome(0)
    marker_topic = first_topic(first, columns)
    name = task.transactional_id(options.transactional_id_prefix)
    failures = DeliveryFailures()
    errors = kafka_clients.ClientErrors()
    producer, consumer = transactional_clients(
        options.bootstrap_servers, options.client_settings, name, name, failures, errors
    )
    began = False
    try:
        init_transactions(producer, errors)
        marker = TopicPartition(marker_topic, MARKER_PARTITION)
        (committed,) = consumer.committed([marker], timeout=CALL_TIMEOUT_S)
        if committed.error is not None:
            raise KafkaException(committed.error)
        if not must_write(committed.offset, task.batch_id):
            return TaskOutcome(0, already_committed=True)
        producer.begin_transaction()
        began = True
        count = produce_all(producer, chain([first], rest), columns, failures)
        if input_complete() is False:
            began = False
            abort_quietly(producer)
            msg = (
                f"the input of sink partition {task.partition} (batch {task.batch_id}) ended "
                f"early, after {count} rows: something before the sink failed in this task. "
                "Its transaction is aborted; Spark retries the task"
            )
            raise KafkaWriteError(msg)
        done = SinkMarker(task.batch_id, task.partition, task.attempt, count)
        offsets = [TopicPartition(marker_topic, MARKER_PARTITION, done.offset, done.to_metadata())]
        producer.send_offsets_to_transaction(
            offsets, consumer.consumer_group_metadata(), CALL_TIMEOUT_S
        )
        producer.commit_transaction(CALL_TIMEOUT_S)
        failures.raise_if_any()
        return TaskOutcome(count)
    except BaseException as exc:
        if began:
            abort_quietly(producer)
        if not isinstance(exc, KafkaException):
            raise
        failures.raise_if_any()
        error = exc.args[0] if exc.args else None
        text = error.str() if hasattr(error, "str") else str(exc)
        msg = f"transaction {name!r} of batch {task.batch_id} failed: {text}"
        raise KafkaWriteError(msg, error) from exc
    finally:
        consumer.close()


def transactional_clients(
    bootstrap_servers: str,
    settings: Mapping[str, Any],
    transactional_id: str,
    group: str,
    failures: DeliveryFailures,
    errors: kafka_clients.ClientErrors,
) -> tuple[Any, Any]:
    """Open a transactional producer and the consumer that reads and commits its marker.

    Also used by the source's dead letters (``kafka_rescalable.executor.dead_letter_commits``),
    which follow the same protocol. ``errors`` receives the producer's client errors, which
    :func:`init_transactions` looks at.
    """
    producer = kafka_clients.sink_producer(
        bootstrap_servers, settings, errors, failures, transactional_id=transactional_id
    )
    consumer = kafka_clients.sink_marker_consumer(bootstrap_servers, settings, group)
    return producer, consumer


def init_transactions(producer: Any, errors: kafka_clients.ClientErrors) -> None:
    """Fence this task's earlier attempts, giving up at once on a refused OIDC sign-in.

    librdkafka lets ``init_transactions`` be called again after it timed out, so it waits in
    steps, serving the client's error callback between them: an OIDC provider that refused
    the client's secret then fails the task in seconds, not after ``CALL_TIMEOUT_S``.
    """
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + CALL_TIMEOUT_S
    while True:
        step = min(_INIT_STEP_S, max(0.1, deadline - time.monotonic()))
        try:
            producer.init_transactions(step)
            return
        except KafkaException as exc:
            producer.poll(0)  # a refused sign-in reaches only the error callback
            if errors.definitive:
                raise KafkaException(errors.authentication) from exc
            error = exc.args[0] if exc.args else None
            retriable = bool(getattr(error, "retriable", lambda: False)())
            if not retriable or time.monotonic() >= deadline:
                raise


def _first_non_empty(batches: Iterator[Any]) -> Any:
    return next((batch for batch in batches if batch.num_rows), None)


def abort_quietly(producer: Any) -> None:
    """Abort the open transaction; a fenced producer may not, and the next attempt will."""
    from confluent_kafka import KafkaException

    try:
        producer.abort_transaction(CALL_TIMEOUT_S)
    except KafkaException:
        pass
