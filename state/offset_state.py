"""The checkpointed offset: per reader slot, the list of its sub-states.

This is FLIP-8's idea applied to Spark: instead of one opaque position, the source checkpoints
a list of sub-states per slot, so the lists can be split and merged when the number of slots
changes. The value here is purely in-memory; ``kafka_rescalable.state.document`` turns it into JSON.

The module is long because each operation has two paths side by side: a fast one, a few
C-level passes over all sub-states, for the thousands of partitions a batch may hold, and a
slow one, taken only when something is wrong, that names the first bad value.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, count, islice, repeat
from operator import attrgetter, gt, is_not, itemgetter, lt, sub
from typing import TypeVar

from kafka_rescalable.state.errors import (
    DuplicatePartitionError,
    OffsetRegressionError,
    UnknownPartitionError,
)
from kafka_rescalable.state.partitions import (
    MAX_OFFSET,
    OffsetRange,
    PartitionKey,
    PartitionOffset,
    TopicPartition,
    all_plain,
    drain,
    partition_key,
    trusted_offset_ranges,
    trusted_partition_offsets,
    trusted_topic_partitions,
)

__all__ = [
    "OffsetState",
    "Places",
    "places_of",
    "plain_of",
    "sorted_slot",
    "sums_per_slot",
    "trusted_state",
]

Places = dict[PartitionKey, tuple[int, int]]
"""Where each partition lives: its slot and its offset, by :data:`PartitionKey`."""

_offset = attrgetter("offset")
_TUPLE = frozenset({tuple})
_INT = frozenset({int})  # exactly: bool is no offset
_TOPIC_PARTITION = frozenset({TopicPartition})
_ABSENT = object()
_Value = TypeVar("_Value")


def sorted_slot(slot: Sequence[PartitionOffset]) -> tuple[PartitionOffset, ...]:
    """Sort sub-states of distinct partitions by ``(topic, partition)``, their own order.

    Plain ``PartitionOffset`` values sort on key tuples, compared in C; a slot holding
    anything else (a subclass) keeps the generated ``__lt__``, errors on mixed types included.
    """
    if len(slot) < 2:
        return tuple(slot)  # the common slot of one partition: nothing to compare
    if all_plain(slot):
        return tuple(sorted(slot, key=partition_key))
    return tuple(sorted(slot))


def _index_of(slots: tuple[tuple[PartitionOffset, ...], ...]) -> Places:
    """Key of every partition to its ``(slot, offset)``; a partition listed twice is lost.

    Built in C-level passes over all sub-states at once: a slot often holds one partition,
    and Python-level work per slot would cost as much as per partition.
    """
    subs = list(chain.from_iterable(slots))
    owners = chain.from_iterable(map(repeat, range(len(slots)), map(len, slots)))
    return dict(
        zip(map(partition_key, subs), zip(owners, map(_offset, subs), strict=True), strict=True)
    )


def _index_if_plain(slots: tuple[tuple[PartitionOffset, ...], ...]) -> Places | None:
    """Index tuples of plain ``PartitionOffset`` values; ``None`` if anything is unusual.

    The fast path of ``__post_init__``. ``None`` (a slot that is not a tuple, a value that
    is not exactly a ``PartitionOffset``, a partition twice) sends the caller to
    :func:`_index_checked`, which finds the problem and names it.
    """
    if not set(map(type, slots)) <= _TUPLE:
        return None
    if not all_plain(chain.from_iterable(slots)):
        return None
    where = _index_of(slots)
    return where if len(where) == sum(map(len, slots)) else None


def _valid_offsets(offsets: Collection[object]) -> bool:
    """Whether every value is a valid next offset, told in C-level passes over all of them."""
    return set(map(type, offsets)) <= _INT and (
        not offsets or (min(offsets) >= 0 and max(offsets) <= MAX_OFFSET)  # type: ignore[type-var]
    )


def _scatter(base: list[_Value], chosen: list[bool], values: Iterable[_Value]) -> list[_Value]:
    """Replace the items of ``base`` where ``chosen`` is true by ``values``, in order.

    One C-level pass (``list.__setitem__`` mapped over the chosen positions), for the
    thousands of sub-states a batch moves: a Python loop over them would cost more than
    building the values.
    """
    drain(map(base.__setitem__, compress(count(), chosen), values))
    return base


def sums_per_slot(values: Iterable[int], like: tuple[tuple[object, ...], ...]) -> list[int]:
    """Sum ``values``, one per sub-state of ``like``, per slot of ``like`` (0 for an empty one).

    In C-level passes (running totals read at the slots' bounds): a slot often holds a single
    partition, and a Python-level sum per slot costs as much as the values themselves.
    """
    running = [0, *accumulate(values)]
    bounds = list(accumulate(map(len, like)))
    return list(map(sub, map(running.__getitem__, bounds), map(running.__getitem__, [0, *bounds])))


def _regroup(
    values: list[_Value], like: tuple[tuple[object, ...], ...], *, drop_none: bool = False
) -> tuple[tuple[_Value, ...], ...]:
    """Cut ``values``, one per sub-state of ``like``, into tuples shaped like its slots.

    Done in C (``islice`` per slot), since a slot often holds a single partition; when
    every slot holds one, ``zip`` makes the 1-tuples at once. With ``drop_none``, the
    ``None`` values are left out of their slot's tuple.
    """
    if not drop_none and len(values) == len(like) and all(like):
        return tuple(zip(values))  # one value per slot
    flat = iter(values)
    pieces = map(islice, repeat(flat), map(len, like))
    if drop_none:
        pieces = map(filter, repeat(None), pieces)
    return tuple(map(tuple, pieces))


def _index_checked(slots: tuple[tuple[PartitionOffset, ...], ...]) -> Places:
    """Index the slots one value at a time, raising on the first one that is wrong."""
    where: Places = {}
    for index, slot in enumerate(slots):
        if not isinstance(slot, tuple):
            msg = f"slots[{index}]: must be a tuple of PartitionOffset, got {type(slot).__name__}"
            raise TypeError(msg)
        for sub_state in slot:
            if not isinstance(sub_state, PartitionOffset):
                msg = (
                    f"slots[{index}]: must hold PartitionOffset values, got "
                    f"{type(sub_state).__name__} {sub_state!r}"
                )
                raise TypeError(msg)
            key = (sub_state.topic, sub_state.partition)
            if key in where:
                other = where[key][0]
                if other == index:
                    place = f"twice in slot {index}"
                else:
                    place = f"in slot {other} and in slot {index}"
                tp = sub_state.topic_partition
                msg = (
                    f"partition {tp} is listed {place}; each Kafka partition must belong "
                    "to exactly one slot"
                )
                raise DuplicatePartitionError(msg, tp)
            where[key] = (index, sub_state.offset)
    return where


@dataclass(frozen=True, slots=True, eq=False)
class OffsetState:
    """Where every reader slot stands: one tuple of sub-states per slot.

    Slot ``i`` is ``slots[i]``. A slot may own no partition (more slots than partitions), and
    the state may have no slot at all: that is the state before the first batch, which the
    rebalancer fills. Each slot's tuple is kept sorted by ``(topic, partition)``, so two
    states holding the same assignment and offsets are equal whatever order they were built
    in, and serialize to the same bytes.

    Parameters
    ----------
    slots : tuple of tuple of PartitionOffset
        The sub-states of each slot. Use :meth:`of` to build from lists or other iterables.

    Raises
    ------
    TypeError
        When ``slots`` is not a tuple of tuples of :class:`PartitionOffset`.
    DuplicatePartitionError
        When a Kafka partition appears twice, in one slot or in two; the message names it.
    """

    slots: tuple[tuple[PartitionOffset, ...], ...]
    # Where each partition lives, for O(1) lookups; derived, so neither compared nor shown.
    # ``None`` until first needed when the state was built inside the package (trusted_state).
    _where: Places | None = field(init=False, repr=False, compare=False)
    # partitions(), kept once made: building TopicPartitions costs more than the lookups.
    _partitions: frozenset[TopicPartition] | None = field(init=False, repr=False, compare=False)
    # offsets(), kept once made, for the same reason; copied out, as callers may change it.
    _offsets: dict[TopicPartition, int] | None = field(init=False, repr=False, compare=False)
    # topics(), and whether every value is a plain PartitionOffset (see places_of, plain_of):
    # asked several times per batch, each a pass over every partition.
    _topics: frozenset[str] | None = field(init=False, repr=False, compare=False)
    _plain: bool | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the slots and sort each, so equal assignments compare and serialize equal."""
        if not isinstance(self.slots, tuple):
            msg = (
                f"slots: must be a tuple of tuples of PartitionOffset, got "
                f"{type(self.slots).__name__}; OffsetState.of(...) accepts any iterables"
            )
            raise TypeError(msg)
        where = _index_if_plain(self.slots)
        plain = where is not None and type(self.slots) is tuple
        if where is None:
            where = _index_checked(self.slots)
        # Plain tuples of at most one partition each (a slot per partition) are sorted and
        # normalized already: no call per slot.
        if not plain or max(map(len, self.slots), default=0) > 1:
            object.__setattr__(self, "slots", tuple(map(sorted_slot, self.slots)))
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_partitions", None)
        object.__setattr__(self, "_offsets", None)
        object.__setattr__(self, "_topics", None)
        object.__setattr__(self, "_plain", True if plain else None)  # else told when asked

    @classmethod
    def _trusted(
        cls, slots: tuple[tuple[PartitionOffset, ...], ...], where: Places | None = None
    ) -> OffsetState:
        """Wrap slots built inside the package, skipping the checks of ``__post_init__``.

        The caller guarantees what ``__post_init__`` would establish: a tuple of tuples of
        ``PartitionOffset``, no partition twice, each slot sorted by ``(topic, partition)``.
        ``where``, when given, must be the index of exactly these slots.
        """
        state = object.__new__(cls)
        object.__setattr__(state, "slots", slots)
        object.__setattr__(state, "_where", where)
        object.__setattr__(state, "_partitions", None)
        object.__setattr__(state, "_offsets", None)
        object.__setattr__(state, "_topics", None)
        object.__setattr__(state, "_plain", None)
        return state

    def __eq__(self, other: object) -> bool:
        """Compare slots and sub-states, as the generated ``__eq__`` did, in C-level passes.

        Comparing the places (slot and offset by partition key) is that comparison done in
        C: both sides keep each slot sorted, so equal places and slot counts mean equal slots.
        The generated one called ``PartitionOffset.__eq__`` once per partition, in Python.
        A state holding a subclass of ``PartitionOffset`` is compared value by value, since a
        subclass never equals the plain value with the same fields.
        """
        if other.__class__ is not self.__class__:
            return NotImplemented
        if self is other:
            return True
        if len(self.slots) != len(other.slots):  # type: ignore[attr-defined]
            return False
        if not (plain_of(self) and plain_of(other)):  # type: ignore[arg-type]
            return self.slots == other.slots  # type: ignore[attr-defined]
        return self._index() == other._index()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        """Hash of the slots, as the generated one (``eq=False`` leaves none to inherit)."""
        return hash(self.slots)

    def _index(self) -> Places:
        """Key of every partition to its ``(slot, offset)``, built on first use."""
        where = self._where
        if where is None:
            where = _index_of(self.slots)
            object.__setattr__(self, "_where", where)
        return where

    @classmethod
    def of(cls, slots: Iterable[Iterable[PartitionOffset]]) -> OffsetState:
        """Build a state from any iterables; each slot is sorted, the slot order is kept."""
        return cls(tuple(tuple(slot) for slot in slots))

    @classmethod
    def empty(cls) -> OffsetState:
        """Return the state with no slot: the "current" state before the first batch."""
        return cls(())

    @property
    def num_slots(self) -> int:
        """Number of reader slots, including slots that own no partition."""
        return len(self.slots)

    def partitions(self) -> frozenset[TopicPartition]:
        """Every Kafka partition held, in any slot."""
        if self._partitions is None:
            made = frozenset(trusted_topic_partitions(self._index()))
            object.__setattr__(self, "_partitions", made)
        return self._partitions

    def offsets(self) -> dict[TopicPartition, int]:
        """Return the next offset to read of every partition, in ``(topic, partition)`` order.

        A fresh dict each call, copied from one made once: a batch's end state is the next
        batch's start, and both batches ask.
        """
        if self._offsets is None:
            where = self._index()
            keys = sorted(where)
            at = map(itemgetter(1), map(where.__getitem__, keys))
            made = dict(zip(trusted_topic_partitions(keys), at, strict=True))
            object.__setattr__(self, "_offsets", made)
        return dict(self._offsets)  # type: ignore[arg-type]  # set just above

    def topics(self) -> frozenset[str]:
        """Return the topics of the partitions held, in any slot."""
        if self._topics is None:
            object.__setattr__(self, "_topics", frozenset(map(itemgetter(0), self._index())))
        return self._topics  # type: ignore[return-value]  # set just above

    def sub_states(self) -> tuple[PartitionOffset, ...]:
        """Every sub-state, slot membership forgotten, in ``(topic, partition)`` order."""
        return sorted_slot(list(chain.from_iterable(self.slots)))

    def slot_of(self, tp: TopicPartition) -> int:
        """Index of the slot that owns ``tp``.

        Raises
        ------
        UnknownPartitionError
            When no slot owns ``tp``.
        """
        return self._lookup(tp)[0]

    def offset_of(self, tp: TopicPartition) -> int:
        """Next offset to read of ``tp``.

        Raises
        ------
        UnknownPartitionError
            When no slot owns ``tp``.
        """
        return self._lookup(tp)[1]

    def _lookup(self, tp: TopicPartition) -> tuple[int, int]:
        where = self._index()
        # Only a TopicPartition itself names a partition: a plain tuple or a subclass never
        # compared equal to one, so it is unknown here too.
        if type(tp) is TopicPartition:
            found = where.get((tp.topic, tp.partition))
            if found is not None:
                return found
        else:
            hash(tp)  # an unhashable argument is a TypeError, as for any dict key
        msg = f"partition {tp} is not in this offset state ({len(where)} partitions)"
        raise UnknownPartitionError(msg, tp)

    def with_offsets(self, offsets: Mapping[TopicPartition, int]) -> OffsetState:
        """Return the same assignment with new offsets; partitions not in ``offsets`` keep theirs.

        This is how the end of a batch is made from its (rebalanced) start: the assignment
        decided at the batch boundary must not change while offsets move forward.

        Raises
        ------
        UnknownPartitionError
            When ``offsets`` names a partition the state does not hold: adding partitions is
            the rebalancer's job, and doing it here would bypass its balance.
        TypeError, ValueError
            When an offset is not a valid next offset (see :class:`PartitionOffset`).
        """
        where = self._index()
        new: Mapping[PartitionKey, int]
        if type(offsets) is dict and set(map(type, offsets)) <= _TOPIC_PARTITION:
            new = offsets  # a TopicPartition equals and hashes as its (topic, partition) key
        else:
            new = {
                (tp.topic, tp.partition): o
                for tp, o in offsets.items()
                if type(tp) is TopicPartition
            }
        if len(new) != len(offsets) or not where.keys() >= new.keys():
            for tp in sorted(offsets):  # the first unknown one in order, as documented
                self._lookup(tp)
        subs = list(chain.from_iterable(self.slots))
        given = list(map(new.get, map(partition_key, subs), repeat(_ABSENT)))
        if _valid_offsets(new.values()):
            moving = list(map(is_not, given, repeat(_ABSENT)))
            if all(moving):  # the end of a batch: every partition moves
                moved = trusted_partition_offsets(subs, given)  # type: ignore[arg-type]
            else:
                made = trusted_partition_offsets(
                    list(compress(subs, moving)),
                    list(compress(given, moving)),  # type: ignore[arg-type]
                )
                moved = _scatter(list(subs), moving, made)
        else:  # one at a time, so that the first bad offset is named
            moved = [
                sub if offset is _ABSENT else sub.with_offset(offset)
                for sub, offset in zip(subs, given, strict=True)
            ]
        return OffsetState._trusted(_regroup(moved, self.slots))

    def ranges_to(self, end: OffsetState) -> tuple[tuple[OffsetRange, ...], ...]:
        """Return the offsets between this state and ``end``, grouped by the slots of ``end``.

        ``end`` decides the assignment: the batch ``[self, end)`` is read with the slots the
        batch boundary chose. A partition only in ``end`` has just joined, placed at the
        offset it will be read from next batch, so it reads nothing now; a partition only in
        ``self`` has been removed and reads nothing. Empty ranges are left out.

        Returns
        -------
        tuple of tuple of OffsetRange
            One tuple per slot of ``end`` (possibly empty), ranges in ``(topic, partition)``
            order.

        Raises
        ------
        OffsetRegressionError
            When a partition's offset in ``end`` is before its offset in ``self``.
        """
        where = self._index()
        begins = dict(zip(where, map(itemgetter(1), where.values()), strict=True))
        subs = list(chain.from_iterable(end.slots))
        untils = list(map(_offset, subs))
        # A partition only in ``end`` starts where it ends: it reads nothing.
        starts = list(map(begins.get, map(partition_key, subs), untils))
        if any(map(lt, untils, starts)):
            sub, start = next(compress(zip(subs, starts, strict=True), map(lt, untils, starts)))
            raise OffsetRegressionError(sub.topic_partition, start, sub.offset)
        reads = list(map(gt, untils, starts))
        if all(reads):  # a busy batch: every partition reads
            return _regroup(trusted_offset_ranges(subs, starts, untils), end.slots)
        made = trusted_offset_ranges(
            list(compress(subs, reads)),
            list(compress(starts, reads)),
            list(compress(untils, reads)),
        )
        ranges: list[OffsetRange | None] = [None] * len(subs)
        _scatter(ranges, reads, made)
        return _regroup(ranges, end.slots, drop_none=True)

    def records_between(self, end: OffsetState) -> int:
        """Count the offsets the batch ``[self, end)`` reads; see :meth:`ranges_to`.

        Raises
        ------
        OffsetRegressionError
            When a partition's offset in ``end`` is before its offset in ``self``.
        """
        return sum(r.size for slot in self.ranges_to(end) for r in slot)


def trusted_state(
    slots: tuple[tuple[PartitionOffset, ...], ...], where: Places | None = None
) -> OffsetState:
    """Wrap slots built inside the package, skipping the checks of ``OffsetState``.

    For ``state``'s own modules (the package does not re-export it): the caller guarantees
    what the constructor would establish, a tuple of tuples of ``PartitionOffset``, no
    partition twice, each slot sorted by ``(topic, partition)``. ``where``, when given, must
    be the :data:`Places` of exactly these slots.
    """
    return OffsetState._trusted(slots, where)


def places_of(state: OffsetState) -> Places:
    """Where each partition of ``state`` lives, built once per state and kept with it.

    For ``state``'s own modules (the package does not re-export it); do not change the
    mapping returned: the state keeps it.
    """
    return state._index()


def plain_of(state: OffsetState) -> bool:
    """Whether every value of ``state`` is exactly a ``PartitionOffset``, told once per state.

    For ``state``'s own modules, as :func:`places_of`: their fast paths rest on it.
    """
    plain = state._plain
    if plain is None:
        plain = all_plain(chain.from_iterable(state.slots))
        object.__setattr__(state, "_plain", plain)
    return plain
