"""The connector's exceptions: one base class and one subclass per kind of failure.

Every message names what is wrong (the option, the topic-partition, the offset) and says what
the user can do about it, because these errors surface in a Spark driver log far from the code
that raised them.
"""

from __future__ import annotations

__all__ = [
    "KafkaSourceError",
    "InvalidOptionError",
    "UnsupportedKafkaSettingError",
    "KafkaMetadataError",
    "DataLossError",
    "KafkaReadError",
]


class KafkaSourceError(Exception):
    """Base class of every error this connector raises on purpose."""


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
