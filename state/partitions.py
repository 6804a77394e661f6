"""Kafka partitions, their positions and offset ranges as small immutable values.

These are the sub-states of the rescalable offset state: each is validated once, here, so
every other module can trust them. They are ordered by ``(topic, partition, ...)`` because
every listing and every tie in this package is resolved by that order: Python's ``hash()`` of
a string changes from process to process and must never decide anything.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from typing import Any, Final

__all__ = [
    "MAX_OFFSET",
    "MAX_PARTITION",
    "OffsetRange",
    "PartitionOffset",
    "TopicPartition",
    "check_int",
    "describe_partitions",
    "missing_partitions",
    # The package's fast paths, shared by its modules and not re-exported by ``state``:
    "PartitionKey",
    "all_plain",
    "drain",
    "partition_key",
    "slot_setters",
    "trusted_offset_range",
    "trusted_offset_ranges",
    "trusted_partition_offset",
    "trusted_partition_offsets",
    "trusted_topic_partition",
    "trusted_topic_partitions",
]

MAX_PARTITION: Final = 2**31 - 1
"""Largest partition id: Kafka partition ids are 32-bit signed integers."""

MAX_OFFSET: Final = 2**63 - 1
"""Largest offset: Kafka offsets are 64-bit signed integers."""


def _check_topic(topic: object) -> None:
    if type(topic) is str and topic:
        return  # the common case, decided without a call to isinstance
    if not isinstance(topic, str):
        msg = f"topic: must be a string, got {type(topic).__name__} {topic!r}"
        raise TypeError(msg)
    if not topic:
        msg = "topic: must be a non-empty string"
        raise ValueError(msg)


def check_int(
    field: str, value: object, minimum: int = 0, maximum: int | None = None, meaning: str = ""
) -> None:
    """Refuse ``value`` unless it is an int in ``[minimum, maximum]``; the message names ``field``.

    The one integer check of ``state``'s arguments and values. ``bool`` is refused although
    it is an ``int`` subclass: ``True`` as a partition or a slot count is always a mistake. A
    ``maximum`` is Kafka's (partition ids, offsets), and the message says so.

    Raises
    ------
    TypeError
        When ``value`` is not an int.
    ValueError
        When it is out of range; ``meaning``, if given, says what the value is.
    """
    if type(value) is int and minimum <= value and (maximum is None or value <= maximum):
        return  # the common case; bool is excluded by the exact type check
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{field}: must be an int, got {type(value).__name__} {value!r}"
        raise TypeError(msg)
    if value < minimum:
        why = f" ({meaning})" if meaning else ""
        msg = f"{field}: must be >= {minimum}{why}, got {value}"
        raise ValueError(msg)
    msg = f"{field}: must be <= {maximum} (Kafka's limit), got {value}"
    raise ValueError(msg)


def _check_partition(topic: object, partition: object) -> None:
    """Check the ``(topic, partition)`` fields the three value types share."""
    _check_topic(topic)
    check_int("partition", partition, 0, MAX_PARTITION, "a Kafka partition id")


class TopicPartition(tuple[str, int]):
    """One Kafka partition: the unit the rebalancer assigns to reader slots.

    A tuple ``(topic, partition)`` underneath, so that it hashes, compares and sorts in C:
    the driver looks tens of thousands of them up per batch, and a dataclass's generated
    ``__hash__`` and ``__eq__`` run in Python, once per lookup. It therefore also equals the
    plain tuple ``(topic, partition)``.

    Parameters
    ----------
    topic : str
        Topic name, non-empty.
    partition : int
        Partition id, ``0 <= partition <= MAX_PARTITION``.

    Raises
    ------
    TypeError
        When a field has the wrong type (``bool`` is not accepted as an ``int``).
    ValueError
        When the topic is empty or the partition is out of range; the message names the field.
    """

    __slots__ = ()
    __match_args__ = ("topic", "partition")

    def __new__(cls, topic: str, partition: int) -> TopicPartition:
        """Validate once, so that the rest of the package can trust the value."""
        _check_partition(topic, partition)
        return tuple.__new__(cls, (topic, partition))

    def __getnewargs__(self) -> tuple[str, int]:  # type: ignore[override]
        """Pickle as the two fields, validated again when unpickled."""
        return (self[0], self[1])

    @property
    def topic(self) -> str:
        """Topic name."""
        return self[0]

    @property
    def partition(self) -> int:
        """Partition id."""
        return self[1]

    def __repr__(self) -> str:
        """Return the constructor call, as a dataclass would."""
        return f"TopicPartition(topic={self[0]!r}, partition={self[1]!r})"

    def __str__(self) -> str:
        """Return Kafka's ``topic-partition`` notation, for messages and logs only.

        Never parsed back: topic names may themselves contain ``-``.
        """
        return f"{self[0]}-{self[1]}"


@dataclass(frozen=True, order=True, slots=True)
class PartitionOffset:
    """A sub-state: one Kafka partition and the offset to resume it from.

    ``offset`` is the next offset to read, that is the last processed offset plus one, as in
    Kafka's committed offsets and Spark's checkpoints; so a fresh partition read from its
    beginning holds its earliest offset, and ``[start, end)`` ranges need no adjustment.

    Parameters
    ----------
    topic : str
        Topic name, non-empty.
    partition : int
        Partition id, ``0 <= partition <= MAX_PARTITION``.
    offset : int
        Next offset to read, ``0 <= offset <= MAX_OFFSET``. Symbolic positions such as
        "earliest" or "latest" are resolved by the connector before a sub-state exists.

    Raises
    ------
    TypeError
        When a field has the wrong type.
    ValueError
        When a field is out of range; the message names the field.
    """

    topic: str
    partition: int
    offset: int

    def __post_init__(self) -> None:
        """Validate once, so that the rest of the package can trust the value."""
        _check_partition(self.topic, self.partition)
        check_int("offset", self.offset, 0, MAX_OFFSET, "the next offset to read")

    @property
    def topic_partition(self) -> TopicPartition:
        """The Kafka partition this sub-state positions."""
        return trusted_topic_partition(self.topic, self.partition)

    def with_offset(self, offset: int) -> PartitionOffset:
        """Return the same partition positioned at ``offset``; the value itself never changes."""
        check_int("offset", offset, 0, MAX_OFFSET, "the next offset to read")
        return trusted_partition_offset(self.topic, self.partition, offset)  # the rest is checked

    def __str__(self) -> str:
        """Return ``topic-partition@offset``, for messages and logs."""
        return f"{self.topic}-{self.partition}@{self.offset}"


@dataclass(frozen=True, order=True, slots=True)
class OffsetRange:
    """The offsets ``[start, until)`` of one Kafka partition that one task reads.

    Half-open like Spark's ``KafkaOffsetRange``, so consecutive ranges meet without overlap
    and ``until`` is directly the next offset to read afterwards. ``size`` counts offsets, an
    upper bound of the records: compaction and transaction markers leave offsets with no
    record.

    Parameters
    ----------
    topic : str
        Topic name, non-empty.
    partition : int
        Partition id, ``0 <= partition <= MAX_PARTITION``.
    start : int
        First offset to read, ``>= 0``.
    until : int
        Offset after the last one to read, ``>= start``; ``start == until`` is an empty range.

    Raises
    ------
    TypeError
        When a field has the wrong type.
    ValueError
        When a field is out of range or ``until < start``; the message names the field.
    """

    topic: str
    partition: int
    start: int
    until: int

    def __post_init__(self) -> None:
        """Validate once, so that the rest of the package can trust the value."""
        _check_partition(self.topic, self.partition)
        check_int("start", self.start, 0, MAX_OFFSET, "an offset")
        check_int("until", self.until, 0, MAX_OFFSET, "an offset")
        if self.until < self.start:
            msg = f"until: must be >= start ({self.start}), got {self.until}"
            raise ValueError(msg)

    @property
    def size(self) -> int:
        """Number of offsets in the range."""
        return self.until - self.start

    @property
    def topic_partition(self) -> TopicPartition:
        """The Kafka partition this range belongs to."""
        return trusted_topic_partition(self.topic, self.partition)

    def __str__(self) -> str:
        """Return ``topic-partition[start, until)``, for messages and logs."""
        return f"{self.topic}-{self.partition}[{self.start}, {self.until})"


# The package's fast paths. ``state`` handles tens of thousands of partitions per micro-batch,
# where what Python runs per partition is the cost. The names below are public so that the
# modules of ``state`` share them without reaching into each other's private names; the
# package does not re-export them, as they are of no use outside it.

PartitionKey = tuple[str, int]
"""A partition as a plain ``(topic, partition)`` tuple: it hashes and compares in C and sorts
exactly like :class:`TopicPartition`, which is such a tuple underneath: the key of a
``PartitionOffset`` or ``OffsetRange``, whose generated ``__hash__`` and ``__lt__`` run in
Python."""

partition_key: Callable[[Any], PartitionKey] = attrgetter("topic", "partition")
"""The :data:`PartitionKey` of any of the three value types."""

_PLAIN: Final = frozenset({PartitionOffset})


def all_plain(values: Iterable[object]) -> bool:
    """Whether every value is exactly a :class:`PartitionOffset` (no subclass, nothing else).

    Then sorting by :data:`partition_key` gives their own order and needs no type check;
    anything else goes the slow way, whose errors name what is wrong.
    """
    return set(map(type, values)) <= _PLAIN


# Construction without validation, for values whose fields come from values already checked
# (or were checked just before): ``__post_init__`` costs several times the object itself.
# Every value a user or a document supplies still goes through the constructor. The three
# constructors are written out rather than made by one generic loop over the setters: the
# loop costs more than the validation it skips.
_new = object.__new__
_new_tuple = tuple.__new__


def slot_setters(cls: type, *names: str) -> tuple[Callable[[object, object], None], ...]:
    """Setters of the slots ``names`` of the frozen dataclass ``cls``.

    They write through the slot descriptors, bypassing the frozen ``__setattr__`` as the
    generated ``__init__`` does.
    """
    return tuple(cls.__dict__[name].__set__ for name in names)


_PO_TOPIC, _PO_PARTITION, _PO_OFFSET = slot_setters(PartitionOffset, "topic", "partition", "offset")
_OR_TOPIC, _OR_PARTITION, _OR_START, _OR_UNTIL = slot_setters(
    OffsetRange, "topic", "partition", "start", "until"
)


def trusted_topic_partition(topic: str, partition: int) -> TopicPartition:
    """``TopicPartition(topic, partition)`` for fields already validated."""
    return _new_tuple(TopicPartition, (topic, partition))


def trusted_partition_offset(topic: str, partition: int, offset: int) -> PartitionOffset:
    """``PartitionOffset(topic, partition, offset)`` for fields already validated."""
    value = _new(PartitionOffset)
    _PO_TOPIC(value, topic)
    _PO_PARTITION(value, partition)
    _PO_OFFSET(value, offset)
    return value


def trusted_offset_range(topic: str, partition: int, start: int, until: int) -> OffsetRange:
    """``OffsetRange(topic, partition, start, until)`` for fields already validated."""
    value = _new(OffsetRange)
    _OR_TOPIC(value, topic)
    _OR_PARTITION(value, partition)
    _OR_START(value, start)
    _OR_UNTIL(value, until)
    return value


# The same for thousands of values: ``map`` over the slot setters, drained in C (no call each).
drain: Callable[[Iterable[object]], None] = deque(maxlen=0).extend
_topic_of = attrgetter("topic")
_partition_of = attrgetter("partition")


def trusted_topic_partitions(keys: Iterable[PartitionKey]) -> list[TopicPartition]:
    """``TopicPartition(*key)`` for each ``(topic, partition)`` key already validated."""
    return list(map(_new_tuple, repeat(TopicPartition), keys))


def trusted_partition_offsets(subs: Sequence[Any], offsets: Sequence[int]) -> list[PartitionOffset]:
    """Each of ``subs`` (anything with a valid topic and partition) at its offset in ``offsets``."""
    values = list(map(_new, repeat(PartitionOffset, len(offsets))))
    drain(map(_PO_TOPIC, values, map(_topic_of, subs)))
    drain(map(_PO_PARTITION, values, map(_partition_of, subs)))
    drain(map(_PO_OFFSET, values, offsets))
    return values


def trusted_offset_ranges(
    subs: Sequence[Any], starts: Sequence[int], untils: Sequence[int]
) -> list[OffsetRange]:
    """``[start, until)`` of each of ``subs`` (anything with a valid topic and partition)."""
    values = list(map(_new, repeat(OffsetRange, len(starts))))
    drain(map(_OR_TOPIC, values, map(_topic_of, subs)))
    drain(map(_OR_PARTITION, values, map(_partition_of, subs)))
    drain(map(_OR_START, values, starts))
    drain(map(_OR_UNTIL, values, untils))
    return values


def missing_partitions(
    wanted: Collection[TopicPartition], existing: Collection[TopicPartition]
) -> list[TopicPartition]:
    """Return the partitions of ``wanted`` that do not exist, sorted for stable messages."""
    existing_set = set(existing)
    return sorted(tp for tp in wanted if tp not in existing_set)


def describe_partitions(
    partitions: Collection[TopicPartition] | Mapping[TopicPartition, Any],
) -> str:
    """``orders-0, orders-3, orders-5..9`` for messages and logs: the one partition-list text.

    Three or more consecutive partitions of a topic are one run (``orders-0..999``), so a
    message about a whole topic of thousands of partitions stays one short line; shorter runs
    are listed, as they read more easily that way.
    """
    parts: list[str] = []
    run: list[TopicPartition] = []
    for tp in sorted(partitions):
        if run and (tp.topic != run[-1].topic or tp.partition != run[-1].partition + 1):
            parts.extend(_run_text(run))
            run = []
        run.append(tp)
    parts.extend(_run_text(run))
    return ", ".join(parts)


def _run_text(run: list[TopicPartition]) -> list[str]:
    """Spell one run of consecutive partitions of a topic: as one text when it is long."""
    if len(run) >= _SHORTEST_RUN:
        return [f"{run[0].topic}-{run[0].partition}..{run[-1].partition}"]
    return [f"{tp.topic}-{tp.partition}" for tp in run]


_SHORTEST_RUN: Final = 3
"""``t-0..2`` saves characters from three partitions on; ``t-0, t-1`` reads better as it is."""
