"""Property tests of ``rebalance``: every documented invariant, after every step.

Hypothesis draws the shape of each scenario (slot counts, how many partitions join and
leave, the kind of weights); a seeded ``random.Random`` fills in the bulk (which partitions,
which weights) because drawing hundreds of values one by one through Hypothesis is slow.
Failures still reproduce and shrink, since the seed is drawn too.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from unittest.mock import patch

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from kafka_rescalable.state import (
    OffsetState,
    PartitionOffset,
    Rebalance,
    TopicPartition,
    rebalance,
)

# phase 1 only, to state the weighted bound; the shortcut
from kafka_rescalable.state.rebalancer import (
    _already_balanced,
    _balance_counts,
    _place_evenly,
    _place_lightest_first,
    settled,
)

TOPICS = ("a", "b", "orders", "orders-1", "ü")
UNIVERSE = tuple(TopicPartition(t, p) for t in TOPICS for p in range(20))
WEIGHT_KINDS = (None, "zeros", "ties", "uniform", "skewed")

Weights = Mapping[TopicPartition, int] | None


@dataclass(frozen=True)
class Step:
    """One batch boundary: a new slot count, partitions leaving and joining, new weights."""

    slots: int
    leave: int
    join: int
    weights: str | None
    seed: int


def _weights(kind: str | None, live: list[TopicPartition], rng: random.Random) -> Weights:
    if kind is None:
        return None
    if kind == "zeros":
        return dict.fromkeys(live, 0)
    if kind == "ties":
        return {tp: rng.randint(0, 3) for tp in live}
    if kind == "uniform":
        return {tp: rng.randint(0, 10**6) for tp in live if rng.random() < 0.9}  # some missing
    # A few partitions with a huge backlog, most nearly idle: where repairs happen.
    return {
        tp: (rng.randint(10**5, 10**7) if rng.random() < 0.15 else rng.randint(0, 50))
        for tp in live
    }


def _arbitrary_state(size: int, slots: int, rng: random.Random) -> OffsetState:
    """Any assignment at all, unbalanced and sparse, to start a scenario from."""
    if slots == 0:
        return OffsetState.empty()
    chosen = rng.sample(UNIVERSE, size)
    owners = (
        [min(slots - 1, int(rng.expovariate(0.7))) for _ in chosen]
        if rng.random() < 0.5
        else [rng.randrange(slots) for _ in chosen]
    )
    return OffsetState.of(
        [
            [
                PartitionOffset(tp.topic, tp.partition, rng.randint(0, 10**12))
                for tp, o in zip(chosen, owners, strict=True)
                if o == i
            ]
            for i in range(slots)
        ]
    )


_steps = st.builds(
    Step,
    slots=st.one_of(st.integers(1, 8), st.integers(1, 70)),
    leave=st.integers(0, 12),
    join=st.integers(0, 12),
    weights=st.sampled_from(WEIGHT_KINDS),
    seed=st.integers(0, 2**32 - 1),
)


def _load(slot: tuple[PartitionOffset, ...], weights: Weights) -> int:
    return sum((weights or {}).get(s.topic_partition, 0) for s in slot)


def _weight_limit(live: set[TopicPartition], weights: Weights, slots: int) -> int:
    """``W + w_max * N``: a slot is within the weight bound when ``load * N`` is at most this."""
    values = [(weights or {}).get(tp, 0) for tp in live]
    return sum(values) + max(values, default=0) * slots


def _is_balanced(state: OffsetState, live: set[TopicPartition], weights: Weights) -> bool:
    sizes = [len(slot) for slot in state.slots]
    limit = _weight_limit(live, weights, state.num_slots)
    return max(sizes) - min(sizes) <= 1 and all(
        _load(slot, weights) * state.num_slots <= limit for slot in state.slots
    )


def minimum_moves(current: OffsetState, slots: int, live: set[TopicPartition]) -> int:
    """Count the fewest partitions of ``current`` any count-balanced assignment must move.

    Partitions of slots ``>= slots`` must move. Slot ``i < slots`` can keep at most
    ``min(held_i, quota_i)``, quotas being ``q = P // N`` or ``q + 1`` for ``P % N`` slots;
    the ``q + 1`` quotas are worth one more only on slots holding more than ``q``.
    """
    held = [sum(1 for s in slot if s.topic_partition in live) for slot in current.slots]
    kept = (held + [0] * slots)[:slots]
    base, extra = divmod(len(live), slots)
    keepable = sum(min(k, base) for k in kept) + min(extra, sum(1 for k in kept if k > base))
    return sum(held) - keepable


def repair_budget(
    current: OffsetState, slots: int, live: dict[TopicPartition, int], weights: Weights
) -> int:
    """Extra moves the weight repair may make: two per partition of each slot phase 1 left over."""
    weight = {(tp.topic, tp.partition): (weights or {}).get(tp, 0) for tp in live}
    kept: list[list[PartitionOffset]] = [[] for _ in range(slots)]
    free = []
    for index, slot in enumerate(current.slots):
        for sub in slot:
            if sub.topic_partition in live:
                (kept[index] if index < slots else free).append(sub)
    known = current.partitions()
    free += sorted(
        PartitionOffset(tp.topic, tp.partition, o) for tp, o in live.items() if tp not in known
    )
    phase_one, _ = _balance_counts(kept, sorted(free), weight)
    limit = _weight_limit(set(live), weights, slots)
    over = [
        slot
        for slot in phase_one
        if sum(weight[(s.topic, s.partition)] for s in slot) * slots > limit
    ]
    if over:
        event("weight repair needed")
    return 2 * sum(len(slot) for slot in over)


def check_step(
    current: OffsetState, slots: int, live: dict[TopicPartition, int], weights: Weights
) -> Rebalance:
    """Rebalance once and check every invariant of the contract; return the result."""
    sub_states = [PartitionOffset(tp.topic, tp.partition, o) for tp, o in live.items()]
    result = rebalance(current, slots, sub_states, weights)
    state = result.state
    live_set = set(live)
    before = current.offsets()

    # The state is built without the constructor's checks: it must be what they would give.
    checked = OffsetState(state.slots)
    assert checked == state
    assert checked.offsets() == state.offsets()

    # The shortcut for a state already balanced gives what the two phases give.
    with patch("kafka_rescalable.state.rebalancer._already_balanced", return_value=False):
        assert rebalance(current, slots, sub_states, weights) == result
    # Told from the partitions' names (the batch planner's question), it says the same, and
    # whenever it says "settled" the full path changes nothing.
    names = list(live)
    said = settled(current, slots, names, weights)
    assert said == _already_balanced(current, slots, sub_states, weights)
    if said:
        event("settled")
        assert result == Rebalance(current, frozenset(), (), ())

    # 5. Determinism: again, and with every input in another order.
    assert rebalance(current, slots, sub_states, weights) == result
    reordered = dict(reversed(list(weights.items()))) if weights is not None else None
    assert rebalance(current, slots, reversed(sub_states), reordered) == result

    # 1. Conservation: each live partition once (OffsetState refuses duplicates), offsets kept.
    assert state.num_slots == slots
    assert state.partitions() == live_set
    assert sum(len(slot) for slot in state.slots) == len(live)
    for tp, offset in state.offsets().items():
        assert offset == before.get(tp, live[tp])

    # Bookkeeping matches the states.
    assert result.added == tuple(
        sorted(PartitionOffset(tp.topic, tp.partition, live[tp]) for tp in live_set - set(before))
    )
    assert result.removed == tuple(sorted(set(before) - live_set))
    assert result.moved == frozenset(
        tp for tp in live_set & set(before) if current.slot_of(tp) != state.slot_of(tp)
    )

    # 2. No idle slot, and 3. balance.
    sizes = [len(slot) for slot in state.slots]
    if len(live) >= slots:
        assert min(sizes) >= 1
    assert max(sizes) - min(sizes) <= 1
    limit = _weight_limit(live_set, weights, slots)
    for slot in state.slots:
        assert _load(slot, weights) * slots <= limit

    # 4. Stickiness: minimal moves, and a balanced state is left alone.
    fewest = minimum_moves(current, slots, live_set)
    if weights is None:
        assert len(result.moved) == fewest
    else:
        assert fewest <= len(result.moved) <= fewest + repair_budget(current, slots, live, weights)
    if (
        current.num_slots == slots
        and current.partitions() == live_set
        and _is_balanced(current, live_set, weights)
    ):
        assert result == Rebalance(current, frozenset(), (), ())
        event("current already balanced")
    assert rebalance(state, slots, sub_states, weights) == Rebalance(state, frozenset(), (), ())
    return result


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    initial_size=st.integers(0, 60),
    initial_slots=st.integers(0, 12),
    seed=st.integers(0, 2**32 - 1),
    steps=st.lists(_steps, min_size=1, max_size=5),
)
@example(
    initial_size=18,
    initial_slots=0,
    seed=0,
    steps=[Step(n, 0, 0, None, 0) for n in (1, 7, 3, 64, 2)],
)
@example(
    initial_size=18,
    initial_slots=0,
    seed=0,
    steps=[Step(n, 0, 0, "skewed", n) for n in (1, 7, 3, 64, 2)],
)
@example(initial_size=8, initial_slots=0, seed=0, steps=[Step(8, 0, 0, None, 0)])
def test_every_invariant_holds_after_every_step(
    initial_size: int, initial_slots: int, seed: int, steps: list[Step]
) -> None:
    rng = random.Random(seed)
    state = _arbitrary_state(initial_size, initial_slots, rng)
    live = {tp: offset for tp, offset in state.offsets().items() if rng.random() < 0.9}
    for step in steps:
        rng = random.Random(step.seed)
        for tp in rng.sample(sorted(live), min(step.leave, len(live))):
            del live[tp]
        absent = [tp for tp in UNIVERSE if tp not in live]
        for tp in rng.sample(absent, min(step.join, len(absent))):
            live[tp] = rng.randint(0, 10**9)
        weights = _weights(step.weights, sorted(live), rng)
        state = check_step(state, step.slots, live, weights).state


@settings(max_examples=1000, deadline=None)
@given(
    size=st.integers(0, 100),
    slots=st.integers(1, 40),
    kind=st.sampled_from(WEIGHT_KINDS),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_balanced_state_is_a_fixed_point(
    size: int, slots: int, kind: str | None, seed: int
) -> None:
    """Any count-balanced assignment within the weight bound comes back unchanged.

    The states here are dealt at random rather than produced by ``rebalance``, so this does
    not rely on the rebalancer recognising its own output.
    """
    rng = random.Random(seed)
    chosen = rng.sample(UNIVERSE, size)
    rng.shuffle(chosen)
    dealt = [
        [
            PartitionOffset(tp.topic, tp.partition, i)
            for i, tp in enumerate(chosen)
            if i % slots == s
        ]
        for s in range(slots)
    ]
    rng.shuffle(dealt)
    current = OffsetState.of(dealt)
    weights = _weights(kind, chosen, rng)
    live = set(chosen)
    balanced = _is_balanced(current, live, weights)
    event(f"balanced under weights: {balanced}")
    result = check_step(current, slots, current.offsets(), weights)
    assert (result.state == current) == balanced


@settings(max_examples=500)
@given(
    shape=st.lists(
        st.tuples(st.integers(0, 9), st.integers(0, 9)).map(sorted), min_size=1, max_size=15
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_even_placement_is_the_weighted_placement_when_nothing_weighs(
    shape: list[list[int]], seed: int
) -> None:
    """With no weight, one slice per slot and level gives what one heap step per partition does."""
    counts = [held for held, _ in shape]
    quota = [most for _, most in shape]
    subs = [PartitionOffset(t, p, 0) for t in TOPICS for p in range(30)]
    random.Random(seed).shuffle(subs)
    taken = iter(subs)
    slots = [sorted(next(taken) for _ in range(c)) for c in counts]
    spare = sorted(next(taken) for _ in range(sum(quota) - sum(counts)))
    evenly = [list(slot) for slot in slots]
    _place_evenly(evenly, quota, spare)
    by_heap = [list(slot) for slot in slots]
    _place_lightest_first(by_heap, quota, spare, {})
    assert evenly == by_heap
    assert [len(slot) for slot in evenly] == quota
