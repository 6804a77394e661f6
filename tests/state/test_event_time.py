"""Alignment frontier and the checkpointed event-time section."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state import (
    EventTimePositions,
    OffsetDocumentError,
    PartitionClock,
    TopicPartition,
)
from kafka_rescalable.state.event_time import advance_clocks, aligned_ends, alignment_frontier

A, B, C = (TopicPartition("t", i) for i in range(3))


def test_slowest_waiting_partition_sets_the_frontier() -> None:
    heads = {A: 1_000, B: 50_000}
    assert alignment_frontier(heads, {}, now_ms=0, drift_ms=10_000, idle_ms=5_000) == 11_000


def test_caught_up_partition_holds_until_idle() -> None:
    clocks = {C: PartitionClock(last_event_ms=2_000, last_active_ms=100_000)}
    heads = {A: 60_000}
    held = alignment_frontier(heads, clocks, now_ms=103_000, drift_ms=5_000, idle_ms=5_000)
    assert held == 7_000
    idle = alignment_frontier(heads, clocks, now_ms=105_000, drift_ms=5_000, idle_ms=5_000)
    assert idle == 65_000


def test_nothing_active_means_no_frontier() -> None:
    clocks = {A: PartitionClock(None, 0), B: PartitionClock(5, 0)}
    assert alignment_frontier({}, clocks, now_ms=10_000, drift_ms=1, idle_ms=1_000) is None


@given(
    heads=st.dictionaries(
        st.sampled_from([A, B, C]), st.integers(0, 10**12), min_size=1
    ),
    drift=st.integers(0, 10**6),
)
def test_the_slowest_partition_can_always_read_its_head(heads: dict, drift: int) -> None:
    frontier = alignment_frontier(heads, {}, now_ms=0, drift_ms=drift, idle_ms=1)
    assert frontier is not None and min(heads.values()) <= frontier


def test_section_round_trip() -> None:
    positions = EventTimePositions({A: PartitionClock(10, 20), B: PartitionClock(None, 30)})
    as_dict = positions.to_dict()
    assert as_dict == {"partitions": {"t": {"0": [10, 20], "1": [None, 30]}}}
    assert EventTimePositions.from_dict(as_dict) == positions


@pytest.mark.parametrize(
    "section",
    [None, {}, {"partitions": []}, {"partitions": {"t": {"x": [1, 2]}}},
     {"partitions": {"t": {"0": [1]}}}, {"partitions": {"t": {"0": [True, 2]}}}],
)
def test_malformed_section_is_rejected(section: object) -> None:
    with pytest.raises(OffsetDocumentError, match="eventTime"):
        EventTimePositions.from_dict(section)


def test_alignment_cuts_at_the_frontier_and_holds_partitions_past_it() -> None:

    fast, slow, unseen = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
    known = {fast: 10, slow: 10, unseen: 10}
    ends = {fast: 100, slow: 100, unseen: 100}
    heads = {fast: 5_000, slow: 1_000}
    aligned, held = aligned_ends(
        known, ends, {fast, slow, unseen}, heads, frontier=2_000, cuts={slow: 40}
    )
    assert aligned == {fast: 10, slow: 40, unseen: 100}
    assert held == (fast,)


@given(st.integers(0, 50), st.integers(-1, 200), st.integers(0, 200))
def test_a_movable_partition_reads_its_head_and_never_past_its_end(
    start: int, cut: int, extra: int
) -> None:

    tp = TopicPartition("t", 0)
    end = start + 1 + extra
    aligned, held = aligned_ends({tp: start}, {tp: end}, {tp}, {tp: 0}, 0, {tp: cut})
    assert held == ()
    assert start + 1 <= aligned[tp] <= end


def test_clocks_advance_only_for_partitions_with_records_waiting() -> None:

    busy, quiet, new = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
    previous = EventTimePositions({busy: PartitionClock(1, 100), quiet: PartitionClock(2, 100)})
    clocks = advance_clocks(
        {busy: 5, quiet: 5, new: 0}, {busy}, {busy: 9}, previous, now_ms=500
    )
    assert clocks == {
        busy: PartitionClock(9, 500),
        quiet: PartitionClock(2, 100),
        new: PartitionClock(None, 500),
    }
