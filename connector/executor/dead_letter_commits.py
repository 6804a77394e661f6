"""The exactly-once write of one source partition's dead letters: a transaction and its marker.

The protocol, for the dead letters a task of micro-batch ``b`` of query ``q`` found in the
source topic-partition ``t-p`` (see :mod:`kafka_rescalable.state.dead_letters` for why the unit
is a source partition and the marker a set of offsets):

1. Open a transactional producer whose ``transactional.id`` is ``<prefix>-<q>-<t>-<p>``, the
   same for every task, attempt, replay and run of the query that meets bad records of that
   partition. ``init_transactions`` fences any earlier producer with that id and waits until
   its open transaction, if any, is aborted (an attempt killed mid-way) or committed.
2. Read the marker: the offset that group ``<prefix>-<q>`` has committed on ``t-p``, with its
   metadata. Only the dead letters it does not record (``must_write``) are due; none due,
   nothing is opened.
3. Begin a transaction, produce the due dead letters, add the new marker
   (``send_offsets_to_transaction``) and commit: dead letters and marker become visible to
   ``read_committed`` readers together, or not at all.

Two tasks of one batch may hold pieces of the same partition's range and commit at the same
time: the second ``init_transactions`` fences the first, whose commit then fails. The fenced
task starts again from step 1 (with a new producer, after a short random pause), finds the
other's marker, and adds its own intervals to it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from kafka_rescalable.errors import DeadLetterWriteError, KafkaWriteError
from kafka_rescalable.kafka_clients import ClientErrors
from kafka_rescalable.sink.producing import DeliveryFailures
from kafka_rescalable.sink.transactions import (
    CALL_TIMEOUT_S,
    abort_quietly,
    init_transactions,
    transactional_clients,
)
from kafka_rescalable.state.dead_letters import (
    DeadLetterMarker,
    Interval,
    after_commit,
    must_write,
)
from kafka_rescalable.state.errors import StateError
from kafka_rescalable.task.dead_letters import DeadLetterTarget

__all__ = ["DeadLetter", "DeadLetterUnit", "commit_dead_letters"]

_RETRY_BUDGET_S: Final = 120.0
"""How long a fenced or interrupted commit keeps starting again before the task fails: tasks
reading pieces of one partition share its transactional id and fence each other, and a dozen
of them at once may need more than a few tries."""
_LONGEST_PAUSE_S: Final = 2.0
_ROOM_WAIT_S: Final = 0.05


@dataclass(frozen=True)
class DeadLetter:
    """One record that did not decode, as it is written: raw key and value, all headers."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]

    @property
    def size(self) -> int:
        """Bytes of key and value: what the task holds in memory for it."""
        return len(self.key or b"") + len(self.value or b"")


@dataclass(frozen=True)
class DeadLetterUnit:
    """Whose dead letters: the query, the micro-batch and the source topic-partition."""

    query_id: str
    batch_id: int
    topic: str
    partition: int

    def transactional_id(self, prefix: str) -> str:
        """Return the transactional id of this query's source partition."""
        return f"{prefix}-{self.query_id}-{self.topic}-{self.partition}"

    def group(self, prefix: str) -> str:
        """Return the query's marker group."""
        return f"{prefix}-{self.query_id}"


@dataclass(frozen=True)
class _Again:
    """Why an attempt was fenced or interrupted: a new producer may succeed."""

    reason: str
    kafka_error: Any


def commit_dead_letters(
    target: DeadLetterTarget,
    unit: DeadLetterUnit,
    letters: Sequence[DeadLetter],
    done: Sequence[Interval],
) -> int:
    """Write the dead letters of ``unit`` no earlier attempt committed; return how many.

    ``done`` are the offsets of the partition the task has read whole (every dead letter in
    them is in ``letters``): the new marker records them.

    Raises
    ------
    DeadLetterWriteError
        When Kafka refuses a dead letter or the transaction, or the attempts run out.
    """
    deadline = time.monotonic() + _RETRY_BUDGET_S
    attempts = 0
    while True:
        if attempts:
            # Jittered and growing, so that pieces fencing each other fall out of step.
            pause = min(_LONGEST_PAUSE_S, 0.05 * 2**attempts)
            time.sleep(random.uniform(pause / 2, pause))  # noqa: S311 - a pause, not a key
        attempts += 1
        outcome = _commit_once(target, unit, letters, done)
        if not isinstance(outcome, _Again):
            return outcome
        again = outcome
        if time.monotonic() >= deadline:
            break
    msg = (
        f"the dead letters of {unit.topic}-{unit.partition} (batch {unit.batch_id}) could not "
        f"be committed in {attempts} attempts over {_RETRY_BUDGET_S:.0f} s to "
        f"{target.topic!r}: {again.reason}. Spark retries the task"
    )
    raise DeadLetterWriteError(msg, again.kafka_error)


def _commit_once(
    target: DeadLetterTarget,
    unit: DeadLetterUnit,
    letters: Sequence[DeadLetter],
    done: Sequence[Interval],
) -> int | _Again:
    from confluent_kafka import KafkaException, TopicPartition

    name = unit.transactional_id(target.prefix)
    failures = DeliveryFailures()
    errors = ClientErrors()
    producer, consumer = transactional_clients(
        target.bootstrap_servers,
        target.kafka_settings,
        name,
        unit.group(target.prefix),
        failures,
        errors,
    )
    began = False
    try:
        init_transactions(producer, errors)
        source = TopicPartition(unit.topic, unit.partition)
        (committed,) = consumer.committed([source], timeout=CALL_TIMEOUT_S)
        if committed.error is not None:
            raise KafkaException(committed.error)
        marker = _marker(committed, unit, target)
        due = [letter for letter in letters if must_write(marker, unit.batch_id, letter.offset)]
        if not due:
            return 0
        producer.begin_transaction()
        began = True
        for letter in due:
            _produce(producer, target.topic, letter)
        _raise_failures(failures, target)
        after = after_commit(marker, unit.batch_id, done)
        offsets = [TopicPartition(unit.topic, unit.partition, after.offset, _metadata(after))]
        producer.send_offsets_to_transaction(
            offsets, consumer.consumer_group_metadata(), CALL_TIMEOUT_S
        )
        producer.commit_transaction(CALL_TIMEOUT_S)
        _raise_failures(failures, target)
        return len(due)
    except KafkaException as exc:
        error = exc.args[0] if exc.args else None
        _refuse_if_too_large(error, target)
        if began and not _fenced(error):
            abort_quietly(producer)
        if failures.first is None and _worth_again(error):
            return _Again(_describe(error, exc), error)
        _raise_failures(failures, target)
        msg = f"transaction {name!r} of dead letters to {target.topic!r} failed: " + _describe(
            error, exc
        )
        raise DeadLetterWriteError(msg, error) from exc
    except BaseException:
        if began:
            abort_quietly(producer)
        raise
    finally:
        consumer.close()


def _metadata(marker: DeadLetterMarker) -> str:
    try:
        return marker.to_metadata()
    except StateError as error:
        raise DeadLetterWriteError(str(error)) from error


def _marker(
    committed: Any, unit: DeadLetterUnit, target: DeadLetterTarget
) -> DeadLetterMarker | None:
    if committed.offset is None or committed.offset < 0:
        return None
    try:
        return DeadLetterMarker.from_metadata(committed.metadata or "")
    except StateError as error:
        msg = (
            f"group {unit.group(target.prefix)!r} has an offset on {unit.topic}-"
            f"{unit.partition} that is no dead-letter marker ({error}); another application "
            "uses the group: set 'deadLetterTransactionalIdPrefix' to a prefix of its own"
        )
        raise DeadLetterWriteError(msg) from error


def _raise_failures(failures: DeliveryFailures, target: DeadLetterTarget) -> None:
    try:
        failures.raise_if_any()
    except KafkaWriteError as error:
        _refuse_if_too_large(error.kafka_error, target)
        msg = f"dead letters to {target.topic!r}: {error}"
        raise DeadLetterWriteError(msg, error.kafka_error) from error


def _refuse_if_too_large(error: Any, target: DeadLetterTarget) -> None:
    """Say which limit to raise when a dead letter is larger than the producer or topic takes.

    A raw record plus our headers can exceed what the source read: no retry helps, so the
    message names the settings rather than leaving Spark to retry the same refusal.
    """
    from confluent_kafka import KafkaError

    too_large = (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE)
    if not hasattr(error, "code") or error.code() not in too_large:
        return
    msg = (
        f"a dead letter is larger than {target.topic!r} or the producer accepts "
        f"({_describe(error, Exception())}): raise the topic's max.message.bytes and, on the "
        "source, 'kafka.message.max.bytes' (the dead-letter producer's limit), which must "
        "both exceed the source topic's largest record plus about 1 KB of headers"
    )
    raise DeadLetterWriteError(msg, error)


def _produce(producer: Any, topic: str, letter: DeadLetter) -> None:
    while True:
        try:
            producer.produce(
                topic, value=letter.value, key=letter.key, headers=list(letter.headers)
            )
            return
        except BufferError:
            producer.poll(_ROOM_WAIT_S)  # the queue is full: let deliveries make room


def _fenced(error: Any) -> bool:
    from confluent_kafka import KafkaError

    fenced = (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)
    return hasattr(error, "code") and error.code() in fenced


def _worth_again(error: Any) -> bool:
    """Say whether a new producer may succeed: after a fence, a retriable or abortable error."""
    if not hasattr(error, "code"):
        return False
    return _fenced(error) or error.retriable() or error.txn_requires_abort()


def _describe(error: Any, exc: Exception) -> str:
    return error.str() if hasattr(error, "str") else str(exc)
