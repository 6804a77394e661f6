"""Assign Kafka partitions to reader slots when slots or partitions change.

A pure function, like Flink's split assignment, but balanced over all topics together rather
than per topic: Flink's ``KafkaSourceEnumerator.getSplitOwner`` spreads each topic from a
hash-chosen start index, so two topics of 4 partitions over 8 readers can leave readers idle.

The algorithm has two phases.

1. *Counts.* Every slot gets a quota, ``P // N`` or one more (``P % N`` slots, given to the
   slots that already hold the most, ties to the lower index). Slots ``0..N-1`` keep their
   partitions up to their quota; partitions of slots ``>= N``, partitions over a quota and new
   partitions are placed, heaviest first, on the slot with the least weight (then fewest
   partitions, then lowest index) that is under its quota. Keeping ``min(held, quota)`` per
   slot with the extra quotas on the fullest slots keeps the most partitions possible, so
   exactly the minimum number of partitions moves for count balance.
2. *Weights.* While a slot carries more than ``W/N + w_max`` (total weight over slots plus the
   heaviest single weight), its heaviest original partitions go, one at a time, to the
   lightest slot: moved if the source holds more partitions than the target, else swapped with
   the target's lightest partition, so counts stay balanced. The target's load was at most
   ``W/N`` (it is the minimum) and grows by at most ``w_max``, so it never goes over, and a
   source is never a target while over. A partition swapped in is at most
   ``load(target) / count(target) <= W / (N * count(source))``, so a source whose originals
   have all left carries at most ``W/N``: it is back under the limit before it runs out of
   originals. Hence each slot over the limit after phase 1 costs at most as many steps as it
   has partitions, each step moving at most two partitions.

No step depends on the iteration order of the inputs or on ``hash()``: every choice is made
by sorting on weights, ``(topic, partition)`` and slot indices.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from state.errors import DuplicatePartitionError
from state.offset_state import OffsetState
from state.partitions import PartitionOffset, TopicPartition

__all__ = ["Rebalance", "rebalance"]

# Internal partition key: plain tuples sort like TopicPartition and skip its validation in
# the hot loops.
_Key = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Rebalance:
    """The outcome of :func:`rebalance`.

    Parameters
    ----------
    state : OffsetState
        The new assignment, with ``target_slots`` slots.
    moved : frozenset of TopicPartition
        Partitions that were in ``current`` and are now in a slot with another index.
        Partitions of slots that no longer exist are always moved; added ones never are.
    added : tuple of PartitionOffset
        Live partitions that were not in ``current``, at the offset ``live`` gave them, in
        ``(topic, partition)`` order.
    removed : tuple of TopicPartition
        Partitions of ``current`` that are not live any more, in order. Their unread records
        are the caller's data-loss decision.
    """

    state: OffsetState
    moved: frozenset[TopicPartition]
    added: tuple[PartitionOffset, ...]
    removed: tuple[TopicPartition, ...]


def rebalance(
    current: OffsetState,
    target_slots: int,
    live: Iterable[PartitionOffset],
    weights: Mapping[TopicPartition, int] | None = None,
) -> Rebalance:
    """Distribute the live Kafka partitions over ``target_slots`` reader slots.

    Parameters
    ----------
    current : OffsetState
        The assignment in force; ``OffsetState.empty()`` before the first batch.
    target_slots : int
        The number of slots wanted, ``>= 1``.
    live : iterable of PartitionOffset
        The partitions that exist now. A partition already in ``current`` keeps its offset
        there (the offset given here is ignored); a new one joins at the offset given here.
        Order does not matter.
    weights : mapping of TopicPartition to int, optional
        Non-negative load per partition, such as the records waiting. Missing partitions
        weigh 0; partitions that are not live are ignored. ``None`` balances counts only.

    Returns
    -------
    Rebalance
        The new state and what changed. For all inputs:

        1. *Conservation*: every live partition is in exactly one slot; partitions of
           ``current`` keep their offsets.
        2. *No idle slot*: with at least ``target_slots`` partitions, every slot owns one.
        3. *Balance*: slot partition counts differ by at most one, and no slot weighs more
           than ``W / target_slots + w_max`` (``W`` the total weight, ``w_max`` the largest).
        4. *Stickiness*: when ``current`` has ``target_slots`` slots, exactly the live
           partitions, and already meets 3, the state returned equals ``current``. Otherwise,
           without weights (or with weights under which phase 1 already meets 3), the number
           of moved partitions is the minimum any balanced assignment needs: the partitions
           of slots ``>= target_slots`` plus ``sum(held_i) - sum(min(held_i, quota_i))`` over
           the remaining slots, quotas as in phase 1. Repairing weights moves at most two
           more partitions per partition of each slot phase 1 left over the weight limit.
        5. *Determinism*: the result depends only on the values given, not on their order,
           the process or ``hash()``.

    Raises
    ------
    TypeError
        When an argument has the wrong type.
    ValueError
        When ``target_slots < 1`` or a weight is negative.
    DuplicatePartitionError
        When ``live`` gives one partition two different offsets.
    """
    if not isinstance(current, OffsetState):
        msg = f"current: must be an OffsetState, got {type(current).__name__}"
        raise TypeError(msg)
    if isinstance(target_slots, bool) or not isinstance(target_slots, int):
        msg = f"target_slots: must be an int, got {type(target_slots).__name__} {target_slots!r}"
        raise TypeError(msg)
    if target_slots < 1:
        msg = f"target_slots: must be >= 1, got {target_slots}"
        raise ValueError(msg)
    live_offsets = _live_offsets(live)
    weight = _weights(weights, live_offsets)

    before: dict[_Key, int] = {}
    kept: list[list[PartitionOffset]] = [[] for _ in range(target_slots)]
    free: list[PartitionOffset] = []
    removed: list[TopicPartition] = []
    for index, slot in enumerate(current.slots):
        for sub in slot:
            key = (sub.topic, sub.partition)
            if key not in live_offsets:
                removed.append(sub.topic_partition)
                continue
            before[key] = index
            (kept[index] if index < target_slots else free).append(sub)
    added = sorted(
        PartitionOffset(topic, partition, offset)
        for (topic, partition), offset in live_offsets.items()
        if (topic, partition) not in before
    )

    slots = _balance_counts(kept, free + added, weight)
    _cap_weights(slots, weight)
    state = OffsetState.of(slots)
    moved = frozenset(
        sub.topic_partition
        for index, slot in enumerate(state.slots)
        for sub in slot
        if before.get((sub.topic, sub.partition), index) != index
    )
    return Rebalance(state, moved, tuple(added), tuple(sorted(removed)))


def _live_offsets(live: Iterable[PartitionOffset]) -> dict[_Key, int]:
    offsets: dict[_Key, int] = {}
    for sub in live:
        if not isinstance(sub, PartitionOffset):
            msg = f"live: must hold PartitionOffset values, got {type(sub).__name__} {sub!r}"
            raise TypeError(msg)
        key = (sub.topic, sub.partition)
        if offsets.get(key, sub.offset) != sub.offset:
            tp = sub.topic_partition
            msg = f"live: partition {tp} is given twice, at offsets {offsets[key]} and {sub.offset}"
            raise DuplicatePartitionError(msg, tp)
        offsets[key] = sub.offset
    return offsets


def _weights(
    weights: Mapping[TopicPartition, int] | None, live: Mapping[_Key, int]
) -> dict[_Key, int]:
    """Weight of every live partition: given, or 0."""
    weight = dict.fromkeys(live, 0)
    for tp, value in (weights or {}).items():
        if not isinstance(tp, TopicPartition):
            msg = f"weights: keys must be TopicPartition, got {type(tp).__name__} {tp!r}"
            raise TypeError(msg)
        if isinstance(value, bool) or not isinstance(value, int):
            msg = f"weights[{tp}]: must be an int, got {type(value).__name__} {value!r}"
            raise TypeError(msg)
        if value < 0:
            msg = f"weights[{tp}]: must be >= 0, got {value}"
            raise ValueError(msg)
        key = (tp.topic, tp.partition)
        if key in weight:
            weight[key] = value
    return weight


def _key(sub: PartitionOffset) -> _Key:
    return (sub.topic, sub.partition)


def _balance_counts(
    kept: list[list[PartitionOffset]], free: list[PartitionOffset], weight: Mapping[_Key, int]
) -> list[list[PartitionOffset]]:
    """Phase 1: counts balanced, keeping the most partitions in place (see module doc)."""
    n = len(kept)
    total_weight = sum(weight.values())
    base, extra = divmod(sum(map(len, kept)) + len(free), n)
    quota = [base] * n
    for index in sorted(range(n), key=lambda i: (-len(kept[i]), i))[:extra]:
        quota[index] += 1

    def heaviest_first(sub: PartitionOffset) -> tuple[int, str, int]:
        return (-weight[_key(sub)], sub.topic, sub.partition)

    slots: list[list[PartitionOffset]] = []
    spare = list(free)
    for index, held in enumerate(kept):
        if len(held) <= quota[index]:
            slots.append(list(held))
            continue
        # Over quota: keep heavy partitions while the slot stays under its fair share, so
        # a split of one big slot does not leave all heavy ones on one side. Without
        # weights this keeps the first ``quota`` partitions in (topic, partition) order.
        keep: list[PartitionOffset] = []
        load = 0
        ordered = sorted(held, key=heaviest_first)
        for position, sub in enumerate(ordered):
            need = quota[index] - len(keep)
            w = weight[_key(sub)]
            if need and (len(ordered) - position == need or (load + w) * n <= total_weight):
                keep.append(sub)
                load += w
            else:
                spare.append(sub)
        slots.append(keep)

    spare.sort(key=heaviest_first)
    open_slots = [
        (sum(weight[_key(s)] for s in slot), len(slot), index)
        for index, slot in enumerate(slots)
        if len(slot) < quota[index]
    ]
    heapq.heapify(open_slots)
    for sub in spare:
        load, count, index = heapq.heappop(open_slots)
        slots[index].append(sub)
        if count + 1 < quota[index]:
            heapq.heappush(open_slots, (load + weight[_key(sub)], count + 1, index))
    return slots


def _cap_weights(slots: list[list[PartitionOffset]], weight: Mapping[_Key, int]) -> None:
    """Phase 2, in place: bring every slot to at most ``W/N + w_max`` (see module doc)."""
    n = len(slots)
    # A slot is over when load > W/N + w_max, that is load * n > W + w_max * n: exact in ints.
    limit = sum(weight.values()) + max(weight.values(), default=0) * n
    loads = [sum(weight[_key(sub)] for sub in slot) for slot in slots]
    sources = sorted((i for i in range(n) if loads[i] * n > limit), key=lambda i: (-loads[i], i))
    if not sources:
        return
    # Min-heap of (load, slot); an entry is stale once that slot's load changed.
    lightest = [(load, index) for index, load in enumerate(loads)]
    heapq.heapify(lightest)
    for source in sources:
        originals = sorted(slots[source], key=lambda s: (-weight[_key(s)], s.topic, s.partition))
        for sub in originals:
            if loads[source] * n <= limit:
                break
            while lightest[0][0] != loads[lightest[0][1]]:
                heapq.heappop(lightest)
            target = lightest[0][1]
            moved_weight = weight[_key(sub)]
            if len(slots[source]) <= len(slots[target]):
                # A plain move would unbalance the counts: swap with the target's lightest,
                # which the module doc shows is strictly lighter than ``sub``.
                back = min(slots[target], key=lambda s: (weight[_key(s)], s.topic, s.partition))
                slots[target].remove(back)
                slots[source].append(back)
                moved_weight -= weight[_key(back)]
            slots[source].remove(sub)
            slots[target].append(sub)
            loads[source] -= moved_weight
            loads[target] += moved_weight
            heapq.heappush(lightest, (loads[target], target))
            heapq.heappush(lightest, (loads[source], source))
        # The module doc proves the loop never runs out of originals first.
        assert loads[source] * n <= limit, "weight repair ran out of partitions"
