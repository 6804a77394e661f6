"""Example-based tests of ``rebalance``: the documented scenarios, one by one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_rescalable.state import (
    DuplicatePartitionError,
    OffsetState,
    PartitionOffset,
    Rebalance,
    TopicPartition,
    rebalance,
)
from kafka_rescalable.state.rebalancer import settled

P = PartitionOffset
TP = TopicPartition
ROOT = Path(__file__).resolve().parents[2]


def counts(result: Rebalance) -> list[int]:
    return [len(slot) for slot in result.state.slots]


def test_first_batch_starts_from_the_state_with_no_slot() -> None:
    live = [P("t", p, 100 + p) for p in range(5)]
    result = rebalance(OffsetState.empty(), 2, live)
    assert counts(result) == [3, 2]
    assert result.state.offsets() == {TP("t", p): 100 + p for p in range(5)}
    assert result.added == tuple(live)
    assert result.moved == frozenset()
    assert result.removed == ()


def test_new_partitions_are_spread_over_slots_not_packed() -> None:
    live = [P(t, p, 0) for t in ("a", "b") for p in range(8)]
    result = rebalance(OffsetState.empty(), 4, live)
    # Each slot gets two partitions of each topic, so one hot topic loads every slot.
    for slot in result.state.slots:
        assert [s.topic for s in slot] == ["a", "a", "b", "b"]


def test_two_topics_of_four_partitions_on_eight_slots_give_one_each() -> None:
    live = [P(t, p, 0) for t in ("orders", "payments") for p in range(4)]
    result = rebalance(OffsetState.empty(), 8, live)
    assert counts(result) == [1] * 8


def _java_string_hash(text: str) -> int:
    value = 0
    for char in text:
        value = (31 * value + ord(char)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _per_topic_owner(tp: TopicPartition, readers: int) -> int:
    """Per-topic round robin from a hashed start index, as Flink's getSplitOwner does."""
    start = ((_java_string_hash(tp.topic) * 31) & 0x7FFFFFFF) % readers
    return (start + tp.partition) % readers


def test_per_topic_hashing_leaves_slots_idle_where_global_balance_does_not() -> None:
    tps = [TP(t, p) for t in ("orders", "payments") for p in range(4)]
    per_topic = [_per_topic_owner(tp, 8) for tp in tps]
    assert sorted(set(range(8)) - set(per_topic)) == [0, 1, 2, 7]  # four idle readers
    result = rebalance(OffsetState.empty(), 8, [P(tp.topic, tp.partition, 0) for tp in tps])
    assert sorted(result.state.slot_of(tp) for tp in tps) == list(range(8))


def test_explicit_parallelism_sequence_1_7_3_64_2() -> None:
    live = [P(t, p, 10 * p) for t in ("a", "b", "c") for p in range(6)]  # 18 partitions
    state = rebalance(OffsetState.empty(), 1, live).state
    expected = {
        7: ([3, 3, 3, 3, 2, 2, 2], 15),  # slot 0 keeps its quota of 3, the rest spread out
        3: ([6, 6, 6], 9),  # only the 9 partitions of slots 3..6 move, into slots 0..2
        64: ([1] * 18 + [0] * 46, 15),  # each old slot keeps one partition
        2: ([9, 9], 16),  # two kept, sixteen move in
    }
    for target, (sizes, moved) in expected.items():
        result = rebalance(state, target, live)
        assert counts(result) == sizes
        assert len(result.moved) == moved, target
        assert result.state.offsets() == {TP(s.topic, s.partition): s.offset for s in live}
        assert rebalance(result.state, target, live) == Rebalance(result.state, frozenset(), (), ())
        state = result.state


def test_scale_out_moves_only_the_excess() -> None:
    live = [P("t", p, 0) for p in range(12)]
    three = rebalance(OffsetState.empty(), 3, live).state
    four = rebalance(three, 4, live)
    assert counts(four) == [3, 3, 3, 3]
    assert len(four.moved) == 3  # one from each old slot
    for index in range(3):
        assert set(four.state.slots[index]) <= set(three.slots[index])


def test_scale_in_keeps_the_surviving_slots_partitions() -> None:
    live = [P("t", p, 0) for p in range(12)]
    four = rebalance(OffsetState.empty(), 4, live).state
    three = rebalance(four, 3, live)
    assert counts(three) == [4, 4, 4]
    assert three.moved == frozenset(s.topic_partition for s in four.slots[3])
    for index in range(3):
        assert set(four.slots[index]) <= set(three.state.slots[index])


def test_balanced_state_is_returned_unchanged() -> None:
    current = OffsetState.of(
        [[P("a", 5, 1), P("b", 0, 2)], [P("a", 0, 3)], [P("a", 1, 4), P("z", 9, 5)]]
    )
    live = [P(tp.topic, tp.partition, 999) for tp in current.partitions()]
    result = rebalance(current, 3, live)
    assert result == Rebalance(current, frozenset(), (), ())


def test_settled_is_told_from_names_and_says_no_to_anything_unusual() -> None:
    current = OffsetState.of(
        [[P("a", 0, 1), P("a", 1, 2)], [P("b", 0, 3), P("b", 1, 4)], [P("c", 0, 5), P("c", 1, 6)]]
    )
    names = sorted(current.partitions())
    assert settled(current, 3, names)
    assert settled(current, 3, names, {TP("a", 0): 5, TP("b", 0): 5})
    heavy = {TP("a", 0): 10, TP("a", 1): 10}  # 20 in one slot: over 20 / 3 + 10
    assert not settled(current, 3, names, heavy)
    assert rebalance(current, 3, [sub for slot in current.slots for sub in slot], heavy).moved
    assert not settled(current, 2, names)  # another slot count
    assert not settled(current, 3, names[:-1])  # a partition gone
    assert not settled(current, 3, [*names, TP("d", 0)])  # one joined
    assert not settled(current, 3, [*names, names[0]])  # given twice
    assert not settled(current, 3, [(tp.topic, tp.partition) for tp in names])  # plain tuples
    assert not settled(current, 0, names)
    assert not settled(current, 3, names, {TP("a", 0): -1})


def test_live_offset_is_ignored_for_known_partitions_and_used_for_new_ones() -> None:
    current = OffsetState.of([[P("t", 0, 50)], [P("t", 1, 60)]])
    live = [P("t", 0, 0), P("t", 1, 0), P("t", 2, 7)]
    result = rebalance(current, 2, live)
    assert result.state.offsets() == {TP("t", 0): 50, TP("t", 1): 60, TP("t", 2): 7}
    assert result.added == (P("t", 2, 7),)
    assert result.moved == frozenset()


def test_removed_partitions_leave_and_the_rest_rebalances() -> None:
    current = OffsetState.of([[P("t", 0, 1), P("t", 1, 1)], [P("t", 2, 1), P("t", 3, 1)]])
    result = rebalance(current, 2, [P("t", 0, 0), P("t", 1, 0), P("t", 2, 0)] + [P("u", 0, 0)])
    assert result.removed == (TP("t", 3),)
    assert result.added == (P("u", 0, 0),)
    assert counts(result) == [2, 2]
    assert result.state.slot_of(TP("u", 0)) == 1


def test_more_slots_than_partitions_leaves_the_extra_slots_empty() -> None:
    result = rebalance(OffsetState.empty(), 5, [P("t", 0, 0), P("t", 1, 0)])
    assert counts(result) == [1, 1, 0, 0, 0]


def test_no_live_partition_gives_empty_slots() -> None:
    current = OffsetState.of([[P("t", 0, 1)]])
    result = rebalance(current, 3, [])
    assert result.state == OffsetState.of([[], [], []])
    assert result.removed == (TP("t", 0),)


def test_weights_spread_heavy_partitions() -> None:
    live = [P("t", p, 0) for p in range(6)]
    weights = {TP("t", p): w for p, w in enumerate([100, 100, 100, 1, 1, 1])}
    result = rebalance(OffsetState.empty(), 2, live, weights)
    loads = [sum(weights[s.topic_partition] for s in slot) for slot in result.state.slots]
    assert counts(result) == [3, 3]
    assert sorted(loads) == [102, 201]


def test_weight_repair_swaps_when_counts_forbid_a_move() -> None:
    # Slot 0 holds the three light partitions, slot 1 the three heavy ones: counts are
    # balanced, but slot 1 carries 300 > 303/2 + 100, so one heavy partition must swap.
    current = OffsetState.of(
        [[P("t", p, 0) for p in range(3)], [P("t", p, 0) for p in range(3, 6)]]
    )
    weights = {TP("t", p): (1 if p < 3 else 100) for p in range(6)}
    live = list(current.sub_states())
    result = rebalance(current, 2, live, weights)
    loads = [sum(weights[s.topic_partition] for s in slot) for slot in result.state.slots]
    assert counts(result) == [3, 3]
    assert max(loads) * 2 <= 303 + 100 * 2
    assert len(result.moved) == 2  # one swap
    assert rebalance(current, 2, live).state == current  # without weights it is balanced


def test_zero_and_missing_weights_balance_counts_only() -> None:
    current = OffsetState.of([[P("t", 0, 0)], [P("t", 1, 0), P("t", 2, 0)]])
    live = list(current.sub_states())
    assert rebalance(current, 2, live, {}).state == current
    assert rebalance(current, 2, live, {TP("t", 0): 0, TP("gone", 3): 7}).state == current


def test_input_order_does_not_matter() -> None:
    live = [P(t, p, p) for t in ("x", "y", "zz") for p in range(7)]
    weights = {s.topic_partition: (s.partition * 37) % 11 for s in live}
    current = OffsetState.of([live[:3], live[3:4], live[4:12]])
    forward = rebalance(current, 5, live, weights)
    backward = rebalance(current, 5, reversed(live), dict(reversed(list(weights.items()))))
    assert forward == backward
    assert rebalance(current, 5, set(live), weights) == forward


_DETERMINISM_SCRIPT = """
import json
from kafka_rescalable.state import (
    OffsetState, PartitionOffset, SlotsDocument, TopicPartition, rebalance
)
live = {PartitionOffset(f"topic-{t}", p, 7 * p) for t in range(5) for p in range(13)}
weights = {s.topic_partition: (s.partition * 7919 + len(s.topic)) % 1000 for s in live}
state = OffsetState.empty()
out = []
for n in (1, 7, 3, 64, 2, 9):
    result = rebalance(state, n, live, weights if n % 2 else None)
    state = result.state
    out.append([SlotsDocument(state).to_json(), sorted(map(str, result.moved))])
print(json.dumps(out))
"""


def test_same_result_in_processes_with_different_string_hashes() -> None:
    outputs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        completed = subprocess.run(
            [sys.executable, "-c", _DETERMINISM_SCRIPT],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(completed.stdout)
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())) == 6


@pytest.mark.parametrize(
    ("target", "error", "words"),
    [
        (0, ValueError, r"target_slots: must be >= 1"),
        (-3, ValueError, "target_slots"),
        (True, TypeError, "target_slots"),
        (2.0, TypeError, "target_slots"),
    ],
)
def test_target_slots_must_be_a_positive_int(
    target: object, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        rebalance(OffsetState.empty(), target, [])  # type: ignore[arg-type]


def test_bad_live_and_weights_are_refused() -> None:
    with pytest.raises(DuplicatePartitionError, match="t-0 is given twice, at offsets 1 and 2"):
        rebalance(OffsetState.empty(), 1, [P("t", 0, 1), P("t", 0, 2)])
    assert rebalance(OffsetState.empty(), 1, [P("t", 0, 1), P("t", 0, 1)]).added == (P("t", 0, 1),)
    with pytest.raises(TypeError, match="live: must hold PartitionOffset"):
        rebalance(OffsetState.empty(), 1, [TP("t", 0)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"weights\[t-0\]: must be >= 0"):
        rebalance(OffsetState.empty(), 1, [P("t", 0, 1)], {TP("t", 0): -1})
    with pytest.raises(TypeError, match=r"weights\[t-0\]: must be an int"):
        rebalance(OffsetState.empty(), 1, [P("t", 0, 1)], {TP("t", 0): 1.5})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="weights: keys must be TopicPartition"):
        rebalance(OffsetState.empty(), 1, [P("t", 0, 1)], {("t", 0): 1})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="current: must be an OffsetState"):
        rebalance({}, 1, [])  # type: ignore[arg-type]
