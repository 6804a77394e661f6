"""Assign Kafka partitions to reader slots when slots or partitions change.

A pure function, like Flink's split assignment, but balanced over all topics together rather
than per topic: Flink's ``KafkaSourceEnumerator.getSplitOwner`` spreads each topic from a
hash-chosen start index, so two topics of 4 partitions over 8 readers can leave readers idle.

The module is long because the proof that it keeps its invariants (listed under *Returns* in
:func:`rebalance`'s docstring: no partition dropped or duplicated, no idle slot, balance, the
fewest moves, determinism; README, section *Rescaling*, for the user's view) is written next to
the code it is about.

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
from bisect import insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, groupby, pairwise, repeat
from operator import attrgetter

from kafka_rescalable.state.errors import DuplicatePartitionError
from kafka_rescalable.state.offset_state import OffsetState, places_of, plain_of, trusted_state
from kafka_rescalable.state.partitions import (
    PartitionKey,
    PartitionOffset,
    TopicPartition,
    all_plain,
    check_int,
    partition_key,
    trusted_topic_partition,
)

__all__ = ["Rebalance", "rebalance", "settled"]

# Speed, for 100,000 partitions. The algorithm moves the sub-states themselves and looks
# live partitions up by topic, then partition number: no object is made per partition, and
# the C-level passes (map, all, slicing) do the per-partition work. A tuple key per
# partition would do, but hundreds of thousands of new objects make the cycle collector run
# full passes that cost more than the rest. Weights are kept by ``partition_key`` tuples,
# which a TopicPartition equals and hashes like. Every list of sub-states
# passed around here is in ``(topic, partition)`` order unless said otherwise, so the result
# needs no sorting.
_Live = dict[str, dict[int, PartitionOffset]]
_topic = attrgetter("topic")
_partition = attrgetter("partition")
_NONE: dict[int, PartitionOffset] = {}  # the partitions of a topic that is not live


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
    check_int("target_slots", target_slots, 1)
    live = list(live)
    if _already_balanced(current, target_slots, live, weights):
        return Rebalance(current, frozenset(), (), ())
    live_subs = _live_sub_states(live)
    weight = _weights(weights, live_subs)

    # Each slot's live partitions, in order: current's sub-states, since a partition
    # already held keeps its offset.
    held: list[Sequence[PartitionOffset]] = []
    removed: list[PartitionOffset] = []
    for slot in current.slots:
        if not _all_live(slot, live_subs):
            removed += [sub for sub in slot if not _is_live(sub, live_subs)]
            slot = [sub for sub in slot if _is_live(sub, live_subs)]
        held.append(slot)
    added = _added(held, live_subs)

    kept = held[:target_slots] + [() for _ in range(target_slots - len(held))]
    leaving = list(chain(*held[target_slots:]))
    free = sorted(leaving + added, key=partition_key) if leaving else added
    slots, overflow = _balance_counts(kept, free, weight)
    if _cap_weights(slots, weight):
        moved = _moved(held, slots)
    else:
        # Phase 1 moves exactly the partitions it takes from slots that go or are over
        # quota; a slot over quota is full, so none returns to the slot it came from.
        moved = leaving + overflow
    # The result needs no check, unless ``current`` holds a subclass of PartitionOffset:
    # then the constructor sorts it as it always did (refusing to mix it with plain ones).
    plain = plain_of(current)
    return Rebalance(
        (trusted_state if plain else OffsetState)(tuple(map(tuple, slots))),
        frozenset(map(trusted_topic_partition, map(_topic, moved), map(_partition, moved))),
        tuple(added),
        tuple(trusted_topic_partition(*key) for key in sorted(map(partition_key, removed))),
    )


def settled(
    current: OffsetState,
    target_slots: int,
    live: Iterable[TopicPartition],
    weights: Mapping[TopicPartition, int] | None = None,
) -> bool:
    """Whether :func:`rebalance` would return ``current`` unchanged, as stickiness (4) says.

    That is the steady state of a running query, once per batch: the same slots, the same
    partitions, still balanced. Told from the live partitions' names alone, in a few C-level
    passes, so that a caller need not make the sub-states :func:`rebalance` takes (at 10,000
    partitions, making them and running the two phases cost more than the rest of a batch's
    planning). Anything unusual (a value that is not plainly a ``TopicPartition``, a bad
    weight, a partition given twice) answers ``False``: :func:`rebalance` checks it and names
    the problem.
    """
    if not isinstance(current, OffsetState) or type(target_slots) is not int or target_slots < 1:
        return False
    live = list(live)
    if not set(map(type, live)) <= {TopicPartition}:
        return False
    # A TopicPartition equals and hashes as its (topic, partition) key.
    return _settled(current, target_slots, set(live), len(live), weights)


def _settled(
    current: OffsetState,
    target_slots: int,
    keys: set[PartitionKey],
    given: int,
    weights: Mapping[TopicPartition, int] | None,
) -> bool:
    """:func:`settled` for the ``(topic, partition)`` keys of ``given`` live values."""
    if current.num_slots != target_slots:
        return False
    where = places_of(current)
    if given != len(keys) or keys != where.keys():
        return False
    counts = list(map(len, current.slots))
    if max(counts) - min(counts) > 1 or not plain_of(current):
        return False
    if not weights:
        return True
    values = list(weights.values())
    if not set(map(type, values)) <= {int} or min(values) < 0:
        return False
    if not set(map(type, weights)) <= {TopicPartition}:
        return False
    if max(counts) <= 1:
        return True  # one partition a slot: no load is over the heaviest single weight
    # Loads over the live partitions only, as the full path weighs them. A TopicPartition is
    # its (topic, partition) key, so the places are looked up with it directly.
    weight = {tp: value for tp, value in weights.items() if tp in where}
    heaviest = max(weight.values(), default=0)
    limit = sum(weight.values()) + heaviest * target_slots
    get = weight.get
    return all(
        sum(get(partition_key(sub), 0) for sub in slot) * target_slots <= limit
        for slot in current.slots
    )


def _already_balanced(
    current: OffsetState,
    target_slots: int,
    live: list[PartitionOffset],
    weights: Mapping[TopicPartition, int] | None,
) -> bool:
    """:func:`settled`, for the sub-states :func:`rebalance` was given."""
    if not all_plain(live):
        return False
    return _settled(current, target_slots, set(map(partition_key, live)), len(live), weights)


def _live_sub_states(live: Iterable[PartitionOffset]) -> _Live:
    """Each live partition's sub-state, as a plain ``PartitionOffset``, by topic and number."""
    live = list(live)
    by_topic: _Live = {}
    if all_plain(live):
        # One dict update per topic. Sorting on the topic alone compares strings in C, and
        # costs one pass when ``live`` comes grouped by topic, as it usually does.
        for topic, run in groupby(sorted(live, key=_topic), key=_topic):
            subs = list(run)
            by_topic.setdefault(topic, {}).update(zip(map(_partition, subs), subs, strict=True))
        if sum(map(len, by_topic.values())) == len(live):
            return by_topic
        by_topic = {}
    # A partition given twice (maybe at two offsets), or a value that is not plainly a
    # PartitionOffset: one at a time, to name the first problem.
    for sub in live:
        if not isinstance(sub, PartitionOffset):
            msg = f"live: must hold PartitionOffset values, got {type(sub).__name__} {sub!r}"
            raise TypeError(msg)
        numbers = by_topic.setdefault(sub.topic, {})
        other = numbers.get(sub.partition)
        if other is not None and other.offset != sub.offset:
            tp = sub.topic_partition
            msg = f"live: partition {tp} is given twice, at offsets {other.offset} and {sub.offset}"
            raise DuplicatePartitionError(msg, tp)
        if type(sub) is not PartitionOffset:
            sub = PartitionOffset(sub.topic, sub.partition, sub.offset)
        numbers[sub.partition] = sub
    return by_topic


def _is_live(sub: PartitionOffset, live: _Live) -> bool:
    return sub.partition in live.get(sub.topic, _NONE)


def _all_live(slot: Sequence[PartitionOffset], live: _Live) -> bool:
    """Whether every partition of ``slot`` is live, in one C-level pass and no allocation."""
    numbers = map(live.get, map(_topic, slot), repeat(_NONE))
    return all(map(dict.__contains__, numbers, map(_partition, slot)))


def _added(held: list[Sequence[PartitionOffset]], live: _Live) -> list[PartitionOffset]:
    """Return the live partitions no slot holds, in order."""
    count = sum(map(len, held))  # all distinct and all live
    if count == sum(map(len, live.values())):
        return []
    known = set(map(partition_key, chain(*held)))
    return [
        numbers[number]
        for topic, numbers in sorted(live.items())
        for number in sorted(numbers)
        if (topic, number) not in known
    ]


def _moved(
    held: list[Sequence[PartitionOffset]], slots: list[list[PartitionOffset]]
) -> list[PartitionOffset]:
    """Return the partitions of ``held`` whose slot index differs in ``slots``."""
    was: dict[PartitionKey, int] = {}
    for index, slot in enumerate(held):
        was.update(zip(map(partition_key, slot), repeat(index)))
    return [
        sub
        for index, slot in enumerate(slots)
        for sub in slot
        if was.get((sub.topic, sub.partition), index) != index
    ]


def _weights(weights: Mapping[TopicPartition, int] | None, live: _Live) -> dict[PartitionKey, int]:
    """Weight of the live partitions that weigh something; all others weigh 0."""
    weight: dict[PartitionKey, int] = {}
    for tp, value in (weights or {}).items():
        if type(tp) is not TopicPartition and not isinstance(tp, TopicPartition):
            msg = f"weights: keys must be TopicPartition, got {type(tp).__name__} {tp!r}"
            raise TypeError(msg)
        if type(value) is not int or value < 0:  # the message is built only when it is needed
            check_int(f"weights[{tp}]", value)
        if value and tp.partition in live.get(tp.topic, _NONE):
            weight[tp.topic, tp.partition] = value
    return weight


def _weight_of(weight: Mapping[PartitionKey, int]) -> Callable[[PartitionOffset], int]:
    return lambda sub: weight.get((sub.topic, sub.partition), 0)


def _heaviest_first(weight: Mapping[PartitionKey, int]) -> Callable[[PartitionOffset], tuple]:
    """Sort key: heaviest first, ties in ``(topic, partition)`` order."""
    return lambda sub: (-weight.get((sub.topic, sub.partition), 0), sub.topic, sub.partition)


def _balance_counts(
    kept: list[Sequence[PartitionOffset]],
    free: list[PartitionOffset],
    weight: Mapping[PartitionKey, int],
) -> tuple[list[list[PartitionOffset]], list[PartitionOffset]]:
    """Phase 1: counts balanced, keeping the most partitions in place (see module doc).

    ``kept[i]`` holds what slot ``i`` keeps if it can, ``free`` what must be placed anyway,
    both in order. Returns the slots, in order, and the partitions taken off slots over
    their quota.
    """
    n = len(kept)
    total_weight = sum(weight.values())
    base, extra = divmod(sum(map(len, kept)) + len(free), n)
    quota = [base] * n
    for index in sorted(range(n), key=lambda i: (-len(kept[i]), i))[:extra]:
        quota[index] += 1
    weight_of = _weight_of(weight)
    heaviest_first = _heaviest_first(weight)

    slots: list[list[PartitionOffset]] = []
    overflow: list[PartitionOffset] = []
    for index, held in enumerate(kept):
        if len(held) <= quota[index]:
            slots.append(list(held))
        elif not total_weight:
            # What the loop below does when all weigh 0: keep the first ``quota``.
            slots.append(list(held[: quota[index]]))
            overflow += held[quota[index] :]
        else:
            # Over quota: keep heavy partitions while the slot stays under its fair share,
            # so a split of one big slot does not leave all heavy ones on one side.
            keep: list[PartitionOffset] = []
            load = 0
            ordered = sorted(held, key=heaviest_first)
            for position, sub in enumerate(ordered):
                need = quota[index] - len(keep)
                w = weight_of(sub)
                if need and (len(ordered) - position == need or (load + w) * n <= total_weight):
                    keep.append(sub)
                    load += w
                else:
                    overflow.append(sub)
            slots.append(sorted(keep, key=partition_key))

    if total_weight:
        _place_lightest_first(slots, quota, sorted(free + overflow, key=heaviest_first), weight)
    else:
        spare = sorted(free + overflow, key=partition_key) if overflow else free
        _place_evenly(slots, quota, spare)
    return slots, overflow


def _place_lightest_first(
    slots: list[list[PartitionOffset]],
    quota: list[int],
    spare: list[PartitionOffset],
    weight: Mapping[PartitionKey, int],
) -> None:
    """Give each partition of ``spare``, in turn, to the open slot with the least weight.

    Ties go to the fewest partitions, then the lowest index; a slot closes at its quota.
    """
    weight_of = _weight_of(weight)
    open_slots = [
        (sum(map(weight_of, slot)), len(slot), index)
        for index, slot in enumerate(slots)
        if len(slot) < quota[index]
    ]
    receivers = [index for _, _, index in open_slots]
    heapq.heapify(open_slots)
    for sub in spare:
        load, count, index = heapq.heappop(open_slots)
        slots[index].append(sub)
        if count + 1 < quota[index]:
            heapq.heappush(open_slots, (load + weight_of(sub), count + 1, index))
    for index in receivers:
        slots[index].sort(key=partition_key)


def _place_evenly(
    slots: list[list[PartitionOffset]], quota: list[int], spare: list[PartitionOffset]
) -> None:
    """Place ``spare`` (in order) as :func:`_place_lightest_first` does when all weigh 0.

    With no weight, each partition goes to the open slot with the fewest partitions, then
    the lowest index: slot ``i`` takes a partition at turn ``(c, i)`` in sorted order, for
    each ``len(slots[i]) <= c < quota[i]``. Between two consecutive levels of ``c`` at
    which some slot opens or closes, the same slots take turns in index order, so each
    one's share of that stretch of ``spare`` is every ``m``-th partition: one slice, not
    one heap operation per partition. The slices come in order, so only a slot that held
    partitions before needs sorting.
    """
    opening = sorted(
        (len(slot), index) for index, slot in enumerate(slots) if len(slot) < quota[index]
    )
    closing = {quota[index] for _, index in opening}
    levels = sorted({count for count, _ in opening} | closing)
    takers: list[int] = []
    position = next_open = 0
    for low, high in pairwise(levels):
        if low in closing:
            takers = [index for index in takers if quota[index] > low]
        while next_open < len(opening) and opening[next_open][0] == low:
            insort(takers, opening[next_open][1])
            next_open += 1
        step = len(takers)
        end = position + step * (high - low)
        for rank, index in enumerate(takers):
            slots[index] += spare[position + rank : end : step]
        position = end
    for count, index in opening:
        if count:
            slots[index].sort(key=partition_key)


def _cap_weights(slots: list[list[PartitionOffset]], weight: Mapping[PartitionKey, int]) -> bool:
    """Phase 2, in place: bring every slot to at most ``W/N + w_max`` (see module doc).

    Returns whether any partition changed slot; the slots stay in order.
    """
    heaviest = max(weight.values(), default=0)
    if not heaviest:
        return False  # all weigh 0: every load is 0, within any limit
    n = len(slots)
    # A slot is over when load > W/N + w_max, that is load * n > W + w_max * n: exact in ints.
    limit = sum(weight.values()) + heaviest * n
    weight_of = _weight_of(weight)
    loads = [sum(map(weight_of, slot)) for slot in slots]
    sources = sorted((i for i in range(n) if loads[i] * n > limit), key=lambda i: (-loads[i], i))
    if not sources:
        return False
    heaviest_first = _heaviest_first(weight)
    changed: set[int] = set()
    # Min-heap of (load, slot); an entry is stale once that slot's load changed.
    lightest = [(load, index) for index, load in enumerate(loads)]
    heapq.heapify(lightest)
    for source in sources:
        for sub in sorted(slots[source], key=heaviest_first):
            if loads[source] * n <= limit:
                break
            while lightest[0][0] != loads[lightest[0][1]]:
                heapq.heappop(lightest)
            target = lightest[0][1]
            moved_weight = weight_of(sub)
            if len(slots[source]) <= len(slots[target]):
                # A plain move would unbalance the counts: swap with the target's lightest,
                # which the module doc shows is strictly lighter than ``sub``.
                back = min(slots[target], key=lambda s: (weight_of(s), s.topic, s.partition))
                slots[target].remove(back)
                slots[source].append(back)
                moved_weight -= weight_of(back)
            slots[source].remove(sub)
            slots[target].append(sub)
            loads[source] -= moved_weight
            loads[target] += moved_weight
            changed.update((source, target))
            heapq.heappush(lightest, (loads[target], target))
            heapq.heappush(lightest, (loads[source], source))
        # The module doc proves the loop never runs out of originals first.
        assert loads[source] * n <= limit, "weight repair ran out of partitions"
    for index in changed:
        slots[index].sort(key=partition_key)
    return True
