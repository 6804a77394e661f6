"""The errors ``state`` raises on purpose, and the root of every error of the library.

:class:`KafkaRescalableError` is the one base class of every error kafka-rescalable raises on
purpose, the connector's included: ``except KafkaRescalableError`` catches them all. It lives
here, beside state's own errors, because ``state`` is the one package that both ``connector``
and the pure code import: ``connector`` depends on ``state`` and never the reverse, and
``state`` imports nothing outside the standard library, so a root in ``connector/errors.py``
could not be the base of the errors raised here. ``kafka_rescalable.errors`` re-exports it.

The connector can catch :class:`StateError` for anything this package rejects, or one of the
subclasses when it reacts differently (a foreign checkpoint deserves advice for the user, an
offset regression is a data-loss decision). Every class also derives from the built-in
exception a generic caller would expect (``ValueError`` or ``KeyError``).

Each error keeps the values it is about as attributes, so callers never parse messages, and
defines ``__reduce__`` so it survives pickling between the driver and the executors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kafka_rescalable.state.partitions import TopicPartition

__all__ = [
    "KafkaRescalableError",
    "DuplicatePartitionError",
    "ForeignCheckpointError",
    "OffsetDocumentError",
    "OffsetRegressionError",
    "StateError",
    "UnknownPartitionError",
]


class KafkaRescalableError(Exception):
    """Base class of every error kafka-rescalable raises on purpose, in any package."""


class StateError(KafkaRescalableError):
    """Base class of every error raised on purpose by ``state``."""


class OffsetDocumentError(StateError, ValueError):
    """A slots document cannot be read; nothing of it was used.

    Parameters
    ----------
    reason : str
        What is wrong, in words a person reading the checkpoint can act on.
    path : str or None
        Where in the document, such as ``slots[2]['orders']['x']``; ``None`` when the
        problem concerns the whole document. The message starts with it.
    """

    def __init__(self, reason: str, path: str | None = None) -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.reason = reason
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuild from the constructor's arguments, which are not ``self.args``."""
        return type(self), (self.reason, self.path)


class ForeignCheckpointError(OffsetDocumentError):
    """The checkpoint offset was written by another source, not by this connector.

    Kept apart from :class:`OffsetDocumentError` because the cure differs: the document is
    not damaged, it belongs to something else (typically Spark's built-in Kafka source), and
    the user must start a new checkpoint directory.

    Parameters
    ----------
    reason : str
        The explanation and the advice.
    starting_offsets : str or None
        When the document holds Kafka offsets in Spark's per-topic form, that JSON in the
        ``startingOffsets`` option's form; ``None`` otherwise. They are the offsets of this
        document, whose batch may never have been committed: the offsets that continue a
        query are those of its last committed batch (``kafka-rescalable-inspect
        <checkpoint> --starting-offsets``).
    offsets : Mapping[TopicPartition, int] or None
        The same offsets as values, next offset per partition.
    """

    def __init__(
        self,
        reason: str,
        starting_offsets: str | None = None,
        offsets: Mapping[TopicPartition, int] | None = None,
    ) -> None:
        super().__init__(reason)
        self.starting_offsets = starting_offsets
        self.offsets = offsets

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuild from the constructor's arguments, which are not ``self.args``."""
        return type(self), (self.reason, self.starting_offsets, self.offsets)


class DuplicatePartitionError(StateError, ValueError):
    """One Kafka partition appears twice where it must appear once.

    Two positions for one partition would make a batch read its records twice, or resume
    from an ambiguous offset, so it is refused rather than resolved silently.

    Parameters
    ----------
    reason : str
        The message, naming the partition and where it appears.
    topic_partition : TopicPartition
        The partition listed twice.
    """

    def __init__(self, reason: str, topic_partition: TopicPartition) -> None:
        super().__init__(reason)
        self.topic_partition = topic_partition

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuild from the constructor's arguments, which are not ``self.args``."""
        return type(self), (self.args[0], self.topic_partition)


class UnknownPartitionError(StateError, KeyError):
    """A Kafka partition was asked for that the offset state does not hold.

    Parameters
    ----------
    reason : str
        The message, naming the partition.
    topic_partition : TopicPartition
        The partition that is not in the state.
    """

    def __init__(self, reason: str, topic_partition: TopicPartition) -> None:
        super().__init__(reason)
        self.topic_partition = topic_partition

    def __str__(self) -> str:
        """Return the sentence as is: ``KeyError`` would show it with ``repr()``."""
        return str(self.args[0])

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuild from the constructor's arguments, which are not ``self.args``."""
        return type(self), (self.args[0], self.topic_partition)


class OffsetRegressionError(StateError, ValueError):
    """A partition's end offset is before its start offset.

    Planning cannot tell data loss (topic re-created, retention) from a bug, so it refuses;
    the caller applies its ``failOnDataLoss`` policy first and plans with consistent offsets.

    Parameters
    ----------
    topic_partition : TopicPartition
        The partition whose offset went backwards.
    start : int
        Its offset in the start state.
    end : int
        Its offset in the end state, smaller than ``start``.
    """

    def __init__(self, topic_partition: TopicPartition, start: int, end: int) -> None:
        msg = (
            f"partition {topic_partition}: end offset {end} is before start offset {start}; "
            "the offsets went backwards (topic re-created or records lost?). Decide the "
            "data-loss policy and clip the start offsets before planning"
        )
        super().__init__(msg)
        self.topic_partition = topic_partition
        self.start = start
        self.end = end

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuild from the constructor's arguments, which are not ``self.args``."""
        return type(self), (self.topic_partition, self.start, self.end)
