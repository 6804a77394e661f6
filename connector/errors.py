"""The connector's exceptions: one base class and one subclass per kind of failure.

Every message names what is wrong (the option, the topic-partition, the offset) and says what
the user can do about it, because these errors surface in a Spark driver log far from the code
that raised them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafka_rescalable.state.errors import KafkaRescalableError

__all__ = [
    "KafkaRescalableError",
    "KafkaSourceError",
    "InvalidOptionError",
    "UnsupportedKafkaSettingError",
    "KafkaMetadataError",
    "DataLossError",
    "KafkaReadError",
    "KafkaAuthenticationError",
    "KafkaAuthorizationError",
    "TokenProviderError",
    "MissingTopicError",
    "CheckpointOffsetError",
    "SinkInputError",
    "KafkaWriteError",
    "DeadLetterWriteError",
    "MissingExtraError",
    "MetricsEndpointError",
    "PayloadDecodeError",
    "RecordDecodeError",
    "SchemaRegistryError",
    "SchemaReferenceError",
    "PysparkZipError",
]


class KafkaSourceError(KafkaRescalableError):
    """Base class of every error the connector package raises on purpose.

    ``state``'s errors share the root :class:`state.KafkaRescalableError` with it.
    """


class InvalidOptionError(KafkaSourceError, ValueError):
    """A source option is missing, malformed, or combined with one it excludes.

    Parameters
    ----------
    option
        The option's name as Spark users spell it (``startingOffsets``, ``kafka.group.id``).
    message
        What is wrong and what would be valid.
    """

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        super().__init__(f"Invalid option '{option}': {message}")


class UnsupportedKafkaSettingError(InvalidOptionError):
    """A ``kafka.*`` setting only the Java client understands, with the librdkafka way out."""


class KafkaMetadataError(KafkaSourceError):
    """Kafka could not answer a metadata or offset query the driver needs to plan a batch.

    The underlying confluent-kafka error, when there is one, is kept in ``kafka_error``.
    """

    def __init__(self, message: str, kafka_error: object | None = None) -> None:
        self.kafka_error = kafka_error
        super().__init__(message)


class DataLossError(KafkaSourceError):
    """Records the query should read no longer exist (retention, deleted topic or partition).

    Raised only under ``failOnDataLoss=true``; otherwise the same condition is logged as a
    warning and the query goes on from the first offset that still exists.
    """


class KafkaReadError(KafkaSourceError):
    """An executor could not read an offset range it was given.

    The underlying confluent-kafka error, when there is one, is kept in ``kafka_error``.
    """

    def __init__(self, message: str, kafka_error: object | None = None) -> None:
        self.kafka_error = kafka_error
        super().__init__(message)


class KafkaAuthenticationError(KafkaSourceError):
    """The brokers refused the connector's credentials (SASL handshake or TLS failed).

    Never retried: a wrong password does not get right by waiting. ``kafka_error`` is the
    confluent-kafka error that said so.
    """

    def __init__(self, message: str, kafka_error: object | None = None) -> None:
        self.kafka_error = kafka_error
        super().__init__(message)


class TokenProviderError(KafkaAuthenticationError):
    """The Python token provider named by ``kafkaTokenProvider`` failed to give a token.

    It raised, returned something that is not ``(token, expiry)``, or could not be imported
    on an executor. The provider's own exception, if any, is the ``__cause__``; the message
    names the provider.
    """


class KafkaAuthorizationError(KafkaSourceError):
    """The principal lacks a Kafka ACL the connector needs on a topic.

    Parameters
    ----------
    message
        Names the topic, the missing operation and how to grant it.
    topics
        The topics concerned.
    operation
        The Kafka ACL operation that is missing (``DESCRIBE``, ``READ``).
    kafka_error
        The confluent-kafka error, when there is one.
    """

    def __init__(
        self,
        message: str,
        topics: Sequence[str] = (),
        operation: str = "",
        kafka_error: object | None = None,
    ) -> None:
        self.topics = tuple(topics)
        self.operation = operation
        self.kafka_error = kafka_error
        super().__init__(message)


class MissingTopicError(KafkaSourceError):
    """Subscribed topics (or assigned partitions) did not exist for ``missingTopicTimeout``.

    A typo in ``subscribe`` would otherwise leave a query idle forever.
    """

    def __init__(self, message: str, topics: Sequence[str] = ()) -> None:
        self.topics = tuple(topics)
        super().__init__(message)


class CheckpointOffsetError(KafkaSourceError, ValueError):
    """An offset read back from the query's checkpoint cannot be used.

    ``cause`` is the ``state`` error that says what is wrong and where in the document.
    """

    def __init__(self, message: str, cause: Exception | None = None) -> None:
        self.cause = cause
        super().__init__(message)


class SinkInputError(KafkaSourceError, ValueError):
    """The DataFrame given to the Kafka sink cannot be written as Kafka records.

    A missing ``value`` column, a column of the wrong type, or a row with no topic. The
    message names the column (and, for a row, its index in the task's input).
    """

    def __init__(self, message: str, column: str | None = None) -> None:
        self.column = column
        super().__init__(message)


class KafkaWriteError(KafkaSourceError):
    """A sink task could not deliver its records, or could not commit its transaction.

    The underlying confluent-kafka error, when there is one, is kept in ``kafka_error``; Spark
    retries the task, and an exactly-once retry fences whatever this attempt left open.
    """

    def __init__(self, message: str, kafka_error: object | None = None) -> None:
        self.kafka_error = kafka_error
        super().__init__(message)


class DeadLetterWriteError(KafkaWriteError):
    """A reader task could not write its dead letters to ``deadLetterTopic``, or commit them.

    The task fails rather than drop a record that did not decode; Spark retries it, and the
    retry writes only the dead letters no attempt committed. ``kafka_error`` keeps the cause.
    """


class MissingExtraError(KafkaSourceError, ImportError):
    """An optional feature was used without the extra that installs its dependency.

    ``extra`` is the name of the extra, as in ``pip install 'kafka-rescalable[<extra>]'``.
    """

    def __init__(self, message: str, extra: str) -> None:
        self.extra = extra
        super().__init__(message)


class MetricsEndpointError(KafkaSourceError, OSError):
    """The metrics' HTTP endpoint could not listen on the address and port it was given.

    The message names both and says how to pick others; ``__cause__`` is the socket error.
    """


class PayloadDecodeError(KafkaSourceError, ValueError):
    """One key or value could not be decoded: why, and the writer's schema id when framed.

    Raised by a decoder for one payload; the source turns it into a :class:`RecordDecodeError`
    naming the record (``FAILFAST``) or into that record's ``decodeError`` (``PERMISSIVE``).
    ``partial`` is what the decoder could read of it, kept as the value under ``PERMISSIVE``
    (``json`` keeps the fields that were read, as ``from_json`` does); ``None`` keeps nothing.
    """

    def __init__(self, reason: str, schema_id: int | None = None, partial: Any = None) -> None:
        self.reason = reason
        self.schema_id = schema_id
        self.partial = partial
        super().__init__(reason)


class RecordDecodeError(KafkaSourceError):
    """A record's key or value could not be decoded, under ``mode`` ``FAILFAST``.

    The message names the topic-partition, the offset, the column, the writer's schema id (for
    registry-framed records) and the reason, and says how to read on past such records.
    """

    def __init__(
        self,
        message: str,
        topic: str,
        partition: int,
        offset: int,
        schema_id: int | None = None,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.schema_id = schema_id
        super().__init__(message)


class SchemaRegistryError(KafkaSourceError):
    """The schema registry could not give a schema: unreachable, refused, or no such subject.

    The message names the registry's URL, the subject or schema id, and the option to check;
    ``__cause__`` is confluent-kafka's error.
    """


class SchemaReferenceError(SchemaRegistryError):
    """A registry schema's references cannot be followed: one is missing, or they form a cycle.

    A schema that references other subjects (shared Avro types, imported ``.proto`` files) is
    read only with every schema it references, so a reference the registry does not have, or
    one leading back to a schema already on the way, leaves nothing to read it with.

    Parameters
    ----------
    message
        Names the schema (subject or id), the reference and the way to it, and what to do.
    subject
        The subject (or ``schema id N``) whose references were followed.
    reference
        ``(subject, version)`` of the reference that is missing or closes the cycle.
    """

    def __init__(self, message: str, subject: str, reference: tuple[str, int]) -> None:
        self.subject = subject
        self.reference = reference
        super().__init__(message)


class EnvironmentPackError(KafkaSourceError):
    """``kafka-rescalable-pack`` cannot pack this Python environment for the executors.

    The message names the distribution that is not installed and the Python that lacks it.
    """


class PysparkZipError(KafkaSourceError):
    """``kafka-rescalable-compile-pyspark`` cannot find, read or replace Spark's ``pyspark.zip``.

    The message names the path it looked at and what to pass or whom to run it as instead.
    """
