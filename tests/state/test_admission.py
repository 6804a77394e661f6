"""The per-batch cap: proportional to backlog, within the cap, no partition starved."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.admission import cap_end_offsets


def tps(n: int) -> list[TopicPartition]:
    return [TopicPartition("t", i) for i in range(n)]


def test_under_the_cap_reads_everything() -> None:
    a, b = tps(2)
    assert cap_end_offsets({a: 0, b: 5}, {a: 10, b: 7}, 100) == {a: 10, b: 7}


def test_skewed_backlog_is_shared_without_starving() -> None:
    a, b, c = tps(3)
    ends = cap_end_offsets({a: 0, b: 0, c: 0}, {a: 9_000, b: 500, c: 3}, 1_000)
    assert sum(ends.values()) == 1_000
    assert ends[c] >= 1 and ends[b] >= 1
    assert ends[a] > ends[b] > ends[c]


@given(
    backlog=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=40),
    cap=st.integers(min_value=1, max_value=50_000),
)
def test_cap_properties(backlog: list[int], cap: int) -> None:
    parts = tps(len(backlog))
    start = {tp: 7 for tp in parts}
    latest = {tp: 7 + n for tp, n in zip(parts, backlog, strict=True)}
    ends = cap_end_offsets(start, latest, cap)
    taken = {tp: ends[tp] - start[tp] for tp in parts}
    assert all(0 <= taken[tp] <= latest[tp] - start[tp] for tp in parts)
    assert sum(taken.values()) == min(cap, sum(backlog))
    with_data = [tp for tp in parts if latest[tp] > start[tp]]
    if cap >= len(with_data):
        assert all(taken[tp] >= 1 for tp in with_data)
