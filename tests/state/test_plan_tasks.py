"""Tests of ``plan_tasks``: examples of each rule, then properties over random batches."""

from __future__ import annotations

import heapq
import pickle
import random
from collections import defaultdict
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rescalable.state import (
    OffsetRange,
    OffsetRegressionError,
    OffsetState,
    PartitionOffset,
    PlannedTask,
    TopicPartition,
    plan_tasks,
)
from kafka_rescalable.state.planning import _add_pieces

P = PartitionOffset
R = OffsetRange


def test_nothing_to_read_plans_nothing() -> None:
    state = OffsetState.of([[P("t", 0, 5)], [P("t", 1, 9)]])
    assert plan_tasks(state, state) == ()
    assert plan_tasks(state, state, min_partitions=10) == ()
    assert plan_tasks(OffsetState.empty(), OffsetState.empty()) == ()


def test_each_slot_with_data_is_one_task_when_all_slots_have_data() -> None:
    start = OffsetState.of([[P("a", 0, 0), P("b", 0, 0)], [P("a", 1, 10)]])
    end = start.with_offsets(
        {TopicPartition("a", 0): 5, TopicPartition("b", 0): 1, TopicPartition("a", 1): 12}
    )
    assert plan_tasks(start, end) == (
        PlannedTask(0, (R("a", 0, 0, 5), R("b", 0, 0, 1))),
        PlannedTask(1, (R("a", 1, 10, 12),)),
    )


def test_one_busy_partition_is_cut_so_every_slot_has_work() -> None:
    start = OffsetState.of([[P("t", 0, 100)], [P("t", 1, 0)], [], [P("t", 2, 0)]])
    end = start.with_offsets({TopicPartition("t", 0): 110})
    assert plan_tasks(start, end) == (
        PlannedTask(0, (R("t", 0, 100, 103),)),
        PlannedTask(0, (R("t", 0, 103, 106),)),
        PlannedTask(0, (R("t", 0, 106, 108),)),
        PlannedTask(0, (R("t", 0, 108, 110),)),
    )


def test_never_more_tasks_than_offsets() -> None:
    start = OffsetState.of([[P("t", 0, 0)], [], [], [], []])
    end = start.with_offsets({TopicPartition("t", 0): 2})
    assert plan_tasks(start, end, min_partitions=50) == (
        PlannedTask(0, (R("t", 0, 0, 1),)),
        PlannedTask(0, (R("t", 0, 1, 2),)),
    )


def test_a_slot_with_several_ranges_is_cut_as_one_sequence() -> None:
    start = OffsetState.of([[P("a", 0, 0), P("b", 0, 0)], []])
    even = start.with_offsets({TopicPartition("a", 0): 1000, TopicPartition("b", 0): 1000})
    assert plan_tasks(start, even) == (
        PlannedTask(0, (R("a", 0, 0, 1000),)),
        PlannedTask(0, (R("b", 0, 0, 1000),)),
    )
    uneven = start.with_offsets({TopicPartition("a", 0): 1000, TopicPartition("b", 0): 10})
    assert plan_tasks(start, uneven) == (
        PlannedTask(0, (R("a", 0, 0, 505),)),
        PlannedTask(0, (R("a", 0, 505, 1000), R("b", 0, 0, 10))),
    )


def test_extra_tasks_go_to_the_slot_with_the_largest_tasks() -> None:
    start = OffsetState.of([[P("t", 0, 0)], [P("t", 1, 0)], [], []])
    end = start.with_offsets({TopicPartition("t", 0): 10, TopicPartition("t", 1): 90})
    tasks = plan_tasks(start, end)
    assert [(t.slot, t.records) for t in tasks] == [(0, 10), (1, 30), (1, 30), (1, 30)]


def test_min_partitions_above_the_slot_count_adds_tasks() -> None:
    start = OffsetState.of([[P("t", 0, 0)], [P("t", 1, 0)]])
    end = start.with_offsets({TopicPartition("t", 0): 100, TopicPartition("t", 1): 100})
    tasks = plan_tasks(start, end, min_partitions=6)
    assert [(t.slot, t.records) for t in tasks] == [
        (0, 34),
        (0, 33),
        (0, 33),
        (1, 34),
        (1, 33),
        (1, 33),
    ]
    assert len(plan_tasks(start, end, min_partitions=1)) == 2  # the slot count is the floor


def test_max_records_per_partition_caps_every_task() -> None:
    start = OffsetState.of([[P("t", 0, 0), P("u", 0, 0)], [P("t", 1, 0)]])
    end = start.with_offsets(
        {TopicPartition("t", 0): 25, TopicPartition("u", 0): 5, TopicPartition("t", 1): 7}
    )
    tasks = plan_tasks(start, end, max_records_per_partition=10)
    assert [(t.slot, t.records) for t in tasks] == [(0, 10), (0, 10), (0, 10), (1, 7)]
    assert tasks[2].ranges == (R("t", 0, 20, 25), R("u", 0, 0, 5))


def test_new_partitions_read_from_the_next_batch_and_removed_ones_are_dropped() -> None:
    start = OffsetState.of([[P("t", 0, 0), P("gone", 0, 0)]])
    end = OffsetState.of([[P("t", 0, 4)], [P("new", 0, 30)]])
    assert plan_tasks(start, end) == (
        PlannedTask(0, (R("t", 0, 0, 2),)),
        PlannedTask(0, (R("t", 0, 2, 4),)),
    )


def test_the_end_assignment_decides_the_slot() -> None:
    start = OffsetState.of([[P("t", 0, 0), P("t", 1, 0)]])
    end = OffsetState.of([[P("t", 0, 3)], [P("t", 1, 4)]])
    assert plan_tasks(start, end) == (
        PlannedTask(0, (R("t", 0, 0, 3),)),
        PlannedTask(1, (R("t", 1, 0, 4),)),
    )


def test_an_offset_going_backwards_is_refused() -> None:
    start = OffsetState.of([[P("orders", 1, 50)]])
    end = OffsetState.of([[P("orders", 1, 40)]])
    with pytest.raises(
        OffsetRegressionError, match="orders-1: end offset 40 is before start offset 50"
    ):
        plan_tasks(start, end)


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"min_partitions": 0}, ValueError, "min_partitions: must be >= 1, got 0"),
        ({"min_partitions": True}, TypeError, "min_partitions"),
        ({"max_records_per_partition": -1}, ValueError, "max_records_per_partition: must be >= 1"),
        ({"max_records_per_partition": 1.5}, TypeError, "max_records_per_partition"),
    ],
)
def test_bad_options_are_named(
    options: dict[str, object], error: type[Exception], words: str
) -> None:
    state = OffsetState.of([[P("t", 0, 0)]])
    with pytest.raises(error, match=words):
        plan_tasks(state, state, **options)  # type: ignore[arg-type]


def test_planned_task_validates_and_pickles() -> None:
    task = PlannedTask(3, (R("t", 0, 0, 5), R("u", 1, 2, 3)))
    assert task.records == 6
    assert pickle.loads(pickle.dumps(task)) == task
    with pytest.raises(ValueError, match="ranges"):
        PlannedTask(0, ())
    with pytest.raises(ValueError, match="ranges"):
        PlannedTask(0, (R("t", 0, 5, 5),))
    with pytest.raises(ValueError, match="slot"):
        PlannedTask(-1, (R("t", 0, 0, 5),))
    with pytest.raises(TypeError, match="ranges"):
        PlannedTask(0, [R("t", 0, 0, 5)])  # type: ignore[arg-type]


@st.composite
def batches(draw: st.DrawFn) -> tuple[OffsetState, OffsetState, int | None, int | None]:
    """Draw a batch ``[start, end)`` with new, removed, idle and busy partitions, and options."""
    slots = draw(st.integers(1, 24))
    count = draw(st.integers(0, 30))
    cap = draw(st.none() | st.integers(1, 40) | st.integers(1, 10**4))
    minimum = draw(st.none() | st.integers(1, 100))
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    busy = draw(st.floats(0, 1))
    huge = cap is None and draw(st.booleans())
    tps = rng.sample([TopicPartition(t, p) for t in ("a", "b", "c") for p in range(15)], count)
    end_slots: list[list[PartitionOffset]] = [[] for _ in range(slots)]
    start_subs = []
    for tp in tps:
        begin = rng.randint(0, 10**12)
        length = 0
        if rng.random() < busy:
            length = rng.randint(1, 10**9) if huge else rng.randint(1, 60)
        if rng.random() < 0.85:
            start_subs.append(P(tp.topic, tp.partition, begin))
        if rng.random() < 0.9:  # else removed: only in start
            end_slots[rng.randrange(slots)].append(P(tp.topic, tp.partition, begin + length))
    start = OffsetState.of([start_subs])
    return start, OffsetState.of(end_slots), minimum, cap


def offsets_to_read(
    start: OffsetState, end: OffsetState
) -> tuple[dict[TopicPartition, tuple[int, int]], dict[int, int]]:
    """``[start, end)`` per partition in both states that moves on, and the offsets per slot."""
    before = start.offsets()
    wanted = {
        tp: (before[tp], offset)
        for tp, offset in end.offsets().items()
        if tp in before and offset > before[tp]
    }
    per_slot: dict[int, int] = defaultdict(int)
    for tp, (low, high) in wanted.items():
        per_slot[end.slot_of(tp)] += high - low
    return wanted, per_slot


@settings(max_examples=2000, deadline=None)
@given(batches())
def test_plans_cover_the_batch_exactly_and_respect_every_rule(
    batch: tuple[OffsetState, OffsetState, int | None, int | None],
) -> None:
    start, end, minimum, cap = batch
    tasks = plan_tasks(start, end, min_partitions=minimum, max_records_per_partition=cap)
    assert plan_tasks(start, end, min_partitions=minimum, max_records_per_partition=cap) == tasks

    # Expected offsets per partition: [start, end) for partitions in both, nothing otherwise.
    wanted, per_slot = offsets_to_read(start, end)
    total = sum(per_slot.values())

    # Union of pieces = exactly [start, end) per partition; pieces contiguous and in order.
    reached = {tp: low for tp, (low, _) in wanted.items()}
    for task in tasks:
        assert task.ranges and all(r.size > 0 for r in task.ranges)
        assert list(task.ranges) == sorted(task.ranges)
        assert len({r.topic_partition for r in task.ranges}) == len(task.ranges)
        for r in task.ranges:
            tp = r.topic_partition
            assert end.slot_of(tp) == task.slot
            assert r.start == reached[tp], "gap or overlap"
            reached[tp] = r.until
    assert reached == {tp: high for tp, (_, high) in wanted.items()}

    # Task count: max(min(T, D), fewest tasks the cap allows), and none when D == 0.
    target = max(end.num_slots, minimum or 0)
    base = {s: 1 if cap is None else -(-d // cap) for s, d in per_slot.items()}
    expected = 0 if total == 0 else max(min(target, total), sum(base.values()))
    assert len(tasks) == expected
    if cap is None and total >= target:
        assert len(tasks) == target  # in particular: every slot has work

    # Caps respected; within a slot, tasks differ by at most one offset; slots in order.
    sizes = defaultdict(list)
    for task in tasks:
        if cap is not None:
            assert task.records <= cap
        sizes[task.slot].append(task.records)
    assert [t.slot for t in tasks] == sorted(t.slot for t in tasks)
    assert all(max(s) - min(s) <= 1 for s in sizes.values())
    assert {s: sum(v) for s, v in sizes.items()} == dict(per_slot)

    # Extra tasks went where tasks were largest: a slot given n_a > base_a tasks had, before
    # its last extra, tasks at least as large as any slot b that could still be cut.
    pieces = {s: len(v) for s, v in sizes.items()}
    for a in pieces:
        if pieces[a] > base[a]:
            for b in pieces:
                if b != a and pieces[b] < per_slot[b]:
                    assert per_slot[a] * pieces[b] >= per_slot[b] * (pieces[a] - 1)


@settings(max_examples=500)
@given(
    records=st.lists(st.integers(1, 10**18) | st.integers(1, 12), min_size=1, max_size=12),
    extra=st.integers(1, 40),
)
def test_extra_tasks_follow_exact_shares(records: list[int], extra: int) -> None:
    """The cross-multiplied comparison picks as exact fractions do, ties to the lower slot."""
    pieces = dict.fromkeys(range(len(records)), 1)
    extra = min(extra, sum(records) - len(records))
    expected = dict(pieces)
    queue = [(-Fraction(r, 1), s) for s, r in enumerate(records) if r > 1]
    heapq.heapify(queue)
    for _ in range(extra):
        _, slot = heapq.heappop(queue)
        expected[slot] += 1
        if expected[slot] < records[slot]:
            heapq.heappush(queue, (-Fraction(records[slot], expected[slot]), slot))
    if extra > 0:
        _add_pieces(pieces, dict(enumerate(records)), extra)
    assert pieces == expected


@settings(max_examples=1000, deadline=None)
@given(batches(), st.integers(1, 400))
def test_a_small_batch_is_coalesced_into_fewer_tasks_reading_whole_slots(
    batch: tuple[OffsetState, OffsetState, int | None, int | None], least: int
) -> None:
    start, end, minimum, _ = batch
    tasks = plan_tasks(start, end, min_partitions=minimum, min_records_per_partition=least)
    wanted, per_slot = offsets_to_read(start, end)
    total = sum(per_slot.values())
    uncoalesced = plan_tasks(start, end, min_partitions=minimum)
    worth = max(-(-total // least), minimum or 1)
    if worth >= len(per_slot):
        assert tasks == uncoalesced, "a batch worth its tasks is planned as before"
        return
    assert len(tasks) == worth
    covered = {}
    for task in tasks:
        assert list(task.ranges) == sorted(task.ranges) and task.records > 0
        slots = {end.slot_of(r.topic_partition) for r in task.ranges}
        assert task.slot == min(slots)
        for r in task.ranges:
            assert r.topic_partition not in covered, "a partition read twice"
            covered[r.topic_partition] = (r.start, r.until)
    assert covered == wanted, "every offset of the batch read once, whole ranges"
    sizes = sorted(task.records for task in tasks)
    assert sizes[-1] - sizes[0] <= max(per_slot.values()), "largest first onto the smallest"


def test_coalescing_gives_way_to_the_cap_and_is_checked() -> None:
    start = OffsetState.of([[P("t", 0, 0)], [P("t", 1, 0)]])
    end = start.with_offsets({TopicPartition("t", 0): 5, TopicPartition("t", 1): 5})
    assert len(plan_tasks(start, end, min_records_per_partition=100)) == 1
    capped = plan_tasks(start, end, min_records_per_partition=100, max_records_per_partition=4)
    assert len(capped) == 4
    with pytest.raises(ValueError, match="min_records_per_partition"):
        plan_tasks(start, end, min_records_per_partition=0)
