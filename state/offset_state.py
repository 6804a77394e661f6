"""The checkpointed offset: per reader slot, the list of its sub-states.

This is FLIP-8's idea applied to Spark: instead of one opaque position, the source checkpoints
a list of sub-states per slot, so the lists can be split and merged when the number of slots
changes. The value here is purely in-memory; ``state.document`` turns it into JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from state.errors import DuplicatePartitionError, OffsetRegressionError, UnknownPartitionError
from state.partitions import OffsetRange, PartitionOffset, TopicPartition

__all__ = ["OffsetState"]


@dataclass(frozen=True, slots=True)
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
    _where: dict[TopicPartition, tuple[int, int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the slots and sort each, so equal assignments compare and serialize equal."""
        if not isinstance(self.slots, tuple):
            msg = (
                f"slots: must be a tuple of tuples of PartitionOffset, got "
                f"{type(self.slots).__name__}; OffsetState.of(...) accepts any iterables"
            )
            raise TypeError(msg)
        where: dict[TopicPartition, tuple[int, int]] = {}
        normalized = []
        for index, slot in enumerate(self.slots):
            if not isinstance(slot, tuple):
                msg = (
                    f"slots[{index}]: must be a tuple of PartitionOffset, got {type(slot).__name__}"
                )
                raise TypeError(msg)
            for sub_state in slot:
                if not isinstance(sub_state, PartitionOffset):
                    msg = (
                        f"slots[{index}]: must hold PartitionOffset values, got "
                        f"{type(sub_state).__name__} {sub_state!r}"
                    )
                    raise TypeError(msg)
                tp = sub_state.topic_partition
                if tp in where:
                    other = where[tp][0]
                    if other == index:
                        place = f"twice in slot {index}"
                    else:
                        place = f"in slot {other} and in slot {index}"
                    msg = (
                        f"partition {tp} is listed {place}; each Kafka partition must belong "
                        "to exactly one slot"
                    )
                    raise DuplicatePartitionError(msg, tp)
                where[tp] = (index, sub_state.offset)
            normalized.append(tuple(sorted(slot)))
        object.__setattr__(self, "slots", tuple(normalized))
        object.__setattr__(self, "_where", where)

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
        return frozenset(self._where)

    def offsets(self) -> dict[TopicPartition, int]:
        """Return the next offset to read of every partition, in ``(topic, partition)`` order."""
        return {tp: self._where[tp][1] for tp in sorted(self._where)}

    def sub_states(self) -> tuple[PartitionOffset, ...]:
        """Every sub-state, slot membership forgotten, in ``(topic, partition)`` order."""
        return tuple(sorted(sub for slot in self.slots for sub in slot))

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
        try:
            return self._where[tp]
        except KeyError:
            msg = f"partition {tp} is not in this offset state ({len(self._where)} partitions)"
            raise UnknownPartitionError(msg, tp) from None

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
        for tp in sorted(offsets):
            self._lookup(tp)
        return OffsetState(
            tuple(
                tuple(
                    sub.with_offset(offsets[sub.topic_partition])
                    if sub.topic_partition in offsets
                    else sub
                    for sub in slot
                )
                for slot in self.slots
            )
        )

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
        per_slot = []
        for slot in end.slots:
            ranges = []
            for sub in slot:
                found = self._where.get(sub.topic_partition)
                start = sub.offset if found is None else found[1]
                if sub.offset < start:
                    raise OffsetRegressionError(sub.topic_partition, start, sub.offset)
                if sub.offset > start:
                    ranges.append(OffsetRange(sub.topic, sub.partition, start, sub.offset))
            per_slot.append(tuple(ranges))
        return tuple(per_slot)

    def records_between(self, end: OffsetState) -> int:
        """Count the offsets the batch ``[self, end)`` reads; see :meth:`ranges_to`.

        Raises
        ------
        OffsetRegressionError
            When a partition's offset in ``end`` is before its offset in ``self``.
        """
        return sum(r.size for slot in self.ranges_to(end) for r in slot)
