"""The small immutable values options turn into: subscriptions, offsets, parallelism, guarantee.

They live apart from the parsing so that the driver and the executors can hold and compare
them without the option table coming along.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kafka_rescalable.state import TopicPartition

__all__ = [
    "EARLIEST_OFFSET",
    "LATEST_OFFSET",
    "AssignPartitions",
    "DeliveryGuarantee",
    "Mode",
    "OffsetBound",
    "Parallelism",
    "Side",
    "SubscribePattern",
    "SubscribeTopics",
    "Subscription",
]

EARLIEST_OFFSET = -2
"""Spark's JSON marker for "the first offset that still exists" in a partition."""
LATEST_OFFSET = -1
"""Spark's JSON marker for "the offset the next produced record will get" in a partition."""

Mode = Literal["batch", "stream"]
"""How a source is read: ``spark.read`` (``batch``) or ``spark.readStream`` (``stream``)."""
Side = Literal["source", "sink"]
"""Which direction an option serves: reading from Kafka (``source``) or writing to it."""


class DeliveryGuarantee(enum.Enum):
    """How often a row reaches Kafka when tasks fail, are retried or a batch is replayed.

    The sink's ``deliveryGuarantee`` option; its values are the option's spellings.
    """

    AT_LEAST_ONCE = "at-least-once"
    EXACTLY_ONCE = "exactly-once"


@dataclass(frozen=True)
class SubscribeTopics:
    """``subscribe``: a fixed list of topic names."""

    topics: tuple[str, ...]

    def matches(self, topic: str) -> bool:
        """Say whether ``topic`` belongs to the subscription."""
        return topic in self.topics

    def describe(self) -> str:
        """Name the subscription in error messages."""
        return f"subscribe={','.join(self.topics)}"


@dataclass(frozen=True)
class SubscribePattern:
    """``subscribePattern``: every topic whose whole name matches a regular expression."""

    pattern: str

    def matches(self, topic: str) -> bool:
        """Say whether ``topic`` belongs to the subscription (whole-name match, as in Java)."""
        return re.fullmatch(self.pattern, topic) is not None

    def describe(self) -> str:
        """Name the subscription in error messages."""
        return f"subscribePattern={self.pattern}"


@dataclass(frozen=True)
class AssignPartitions:
    """``assign``: an explicit set of topic-partitions."""

    partitions: frozenset[TopicPartition]

    @property
    def topics(self) -> tuple[str, ...]:
        """The distinct topics of the assigned partitions."""
        return tuple(sorted({tp.topic for tp in self.partitions}))

    def matches(self, topic: str) -> bool:
        """Say whether ``topic`` has at least one assigned partition."""
        return any(tp.topic == topic for tp in self.partitions)

    def describe(self) -> str:
        """Name the subscription in error messages."""
        return f"assign={sorted((tp.topic, tp.partition) for tp in self.partitions)}"


Subscription = SubscribeTopics | SubscribePattern | AssignPartitions


@dataclass(frozen=True)
class OffsetBound:
    """A starting or ending position: ``earliest``, ``latest``, offsets, or a time.

    ``specific`` maps each named partition to an offset, where ``EARLIEST_OFFSET`` (-2) and
    ``LATEST_OFFSET`` (-1) keep Spark's meaning. ``keyword == "timestamp"`` resolves through
    Kafka's offsets-for-times lookup: ``timestamp`` for every partition
    (``startingTimestamp``), or ``by_timestamp`` per partition
    (``startingOffsetsByTimestamp``); ``no_match`` says what a partition with no record at or
    after the time gets (Spark's ``startingOffsetsByTimestampStrategy``; ends use latest).
    """

    keyword: Literal["earliest", "latest", "specific", "timestamp"]
    specific: Mapping[TopicPartition, int] | None = None
    timestamp: int | None = None
    by_timestamp: Mapping[TopicPartition, int] | None = None
    no_match: Literal["error", "latest"] = "error"

    @classmethod
    def earliest(cls) -> OffsetBound:
        """Start or end at the first offset still in each partition."""
        return cls("earliest")

    @classmethod
    def latest(cls) -> OffsetBound:
        """Start or end at the end of each partition at the time the bound is resolved."""
        return cls("latest")

    def has_marker(self, marker: int) -> bool:
        """Say whether a specific offset is the ``EARLIEST_OFFSET`` or ``LATEST_OFFSET`` marker."""
        return self.specific is not None and marker in self.specific.values()


@dataclass(frozen=True)
class Parallelism:
    """The ``parallelism`` option: unset, ``auto``, or a fixed number of reader slots.

    One value rather than a count plus a flag, so that "not given" and "auto" cannot be
    confused: unset means one slot per partition (Spark's built-in source has one task per
    partition), ``auto`` follows the application's executor cores at each batch boundary, and
    a count is used as given.

    Parameters
    ----------
    kind
        ``"unset"``, ``"auto"`` or ``"fixed"``.
    count
        The number of slots; set exactly when ``kind`` is ``"fixed"``.

    Raises
    ------
    ValueError
        When ``count`` does not fit ``kind``, or is not a positive integer.
    """

    kind: Literal["unset", "auto", "fixed"]
    count: int | None = None

    def __post_init__(self) -> None:
        """Refuse combinations that would make the value mean two things."""
        if self.kind not in ("unset", "auto", "fixed"):
            msg = f"kind must be 'unset', 'auto' or 'fixed', not {self.kind!r}"
            raise ValueError(msg)
        if self.kind == "fixed":
            if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
                msg = f"a fixed parallelism needs a count >= 1, not {self.count!r}"
                raise ValueError(msg)
        elif self.count is not None:
            msg = f"parallelism {self.kind!r} takes no count (got {self.count!r})"
            raise ValueError(msg)

    @classmethod
    def unset(cls) -> Parallelism:
        """No ``parallelism`` option: one slot per partition."""
        return cls("unset")

    @classmethod
    def auto(cls) -> Parallelism:
        """``parallelism=auto``: as many slots as the application has executor cores."""
        return cls("auto")

    @classmethod
    def fixed(cls, count: int) -> Parallelism:
        """``parallelism=<count>``: exactly that many slots."""
        return cls("fixed", count)

    def __str__(self) -> str:
        """Spell the value as a user would write it (``unset`` when not given)."""
        return str(self.count) if self.kind == "fixed" else self.kind
