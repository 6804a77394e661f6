"""The batch edges' C-level passes against the plain per-partition rules they stand for."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state import OffsetState, PartitionOffset, TopicPartition
from kafka_rescalable.state.batch_edges import backlog_report, clip_to

TOPICS = ("a", "b", "c")


@st.composite
def edges(draw: st.DrawFn) -> tuple[OffsetState, OffsetState, dict[TopicPartition, int]]:
    """Two states of the same partitions (some only in one), and latest offsets for some."""
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    slots = draw(st.integers(1, 8))
    tps = rng.sample([TopicPartition(t, p) for t in TOPICS for p in range(6)], rng.randint(0, 18))
    start: list[list[PartitionOffset]] = [[] for _ in range(slots)]
    end: list[list[PartitionOffset]] = [[] for _ in range(draw(st.integers(1, 8)))]
    latest = {}
    for tp in tps:
        at = rng.randint(0, 50)
        if rng.random() < 0.85:
            start[rng.randrange(slots)].append(PartitionOffset(tp.topic, tp.partition, at))
        if rng.random() < 0.85:  # ahead, equal or (gone back) behind
            until = max(0, at + rng.choice((-7, -1, 0, 0, 1, 9)))
            end[rng.randrange(len(end))].append(PartitionOffset(tp.topic, tp.partition, until))
            if rng.random() < 0.8:
                latest[tp] = max(0, until + rng.choice((-3, 0, 0, 4, 20)))
    return OffsetState.of(start), OffsetState.of(end), latest


def _plain_clip(start: OffsetState, end: OffsetState, recreated: frozenset[str]) -> OffsetState:
    end_at = end.offsets()
    back = {}
    for sub in start.sub_states():
        until = end_at.get(sub.topic_partition, sub.offset)
        if until < sub.offset or (sub.topic in recreated and until != sub.offset):
            back[sub.topic_partition] = until
    return start.with_offsets(back)


@given(edges(), st.frozensets(st.sampled_from(TOPICS)))
def test_clip_to_moves_back_exactly_the_partitions_the_rule_names(
    drawn: tuple[OffsetState, OffsetState, dict[TopicPartition, int]], recreated: frozenset[str]
) -> None:
    start, end, _ = drawn
    assert clip_to(start, end, recreated) == _plain_clip(start, end, recreated)


@given(edges())
def test_the_backlog_sums_each_partitions_records_left_per_slot(
    drawn: tuple[OffsetState, OffsetState, dict[TopicPartition, int]],
) -> None:
    _, end, latest = drawn
    behind = [
        [max(0, latest.get(sub.topic_partition, sub.offset) - sub.offset) for sub in slot]
        for slot in end.slots
    ]
    flat = [n for slot in behind for n in slot]
    report = backlog_report(end, latest)
    assert report["perSlot"] == [sum(slot) for slot in behind]
    assert report["total"] == sum(flat)
    assert report["perPartition"] == {
        "min": min(flat, default=0),
        "max": max(flat, default=0),
        "avg": round(sum(flat) / len(flat), 1) if flat else 0.0,
    }
