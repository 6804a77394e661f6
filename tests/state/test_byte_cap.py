"""The byte cap: within the bytes but for one record per partition, fair as the row cap."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.admission import cap_end_offsets
from kafka_rescalable.state.byte_cap import ByteCap, RecordSizes, byte_capped_ends

Log = Mapping[TopicPartition, Mapping[int, int]]  # offset -> size; an offset absent: no record


def tps(n: int) -> list[TopicPartition]:
    return [TopicPartition("t", i) for i in range(n)]


def read(
    log: Log,
    ends: Mapping[TopicPartition, int],
    known: dict[TopicPartition, RecordSizes],
    step: ByteCap,
) -> int:
    """Read as the driver does: the needed sizes, until past the budget; the bytes read."""
    spent = 0
    for tp, until in sorted(step.need.items()):
        sizes = known[tp]
        records = []
        offset = sizes.until
        while offset < until and spent <= step.budget:
            if offset in log[tp]:
                records.append((offset, log[tp][offset]))
                spent += log[tp][offset]
            offset += 1
        known[tp] = sizes.extended(records, min(offset, ends[tp]))
    return spent


def settle(
    log: Log,
    start: Mapping[TopicPartition, int],
    ends: Mapping[TopicPartition, int],
    max_bytes: int,
    max_records: int | None = None,
) -> tuple[ByteCap, int]:
    """Run the steps to a decision; return it and the bytes the probe read."""
    known = {tp: RecordSizes(at, at) for tp, at in start.items()}
    probed = 0
    for _ in range(1000):
        step = byte_capped_ends(start, ends, known, max_bytes=max_bytes, max_records=max_records)
        if step.ends is not None:
            return step, probed
        assert step.need, "an undecided step names what to read"
        probed += read(log, ends, known, step)
    raise AssertionError("the byte cap never decided")


def weight(
    log: Log, start: Mapping[TopicPartition, int], ends: Mapping[TopicPartition, int]
) -> int:
    return sum(log[tp].get(o, 0) for tp in ends for o in range(start[tp], ends[tp]))


def test_fits_everything_when_the_backlog_is_small() -> None:
    a, b = tps(2)
    log = {a: {0: 10, 1: 10}, b: {0: 5}}
    cap, _ = settle(log, {a: 0, b: 0}, {a: 2, b: 1}, max_bytes=100)
    assert cap.ends == {a: 2, b: 1} and not cap.by_bytes


def test_one_record_larger_than_the_cap_still_moves() -> None:
    a, b = tps(2)
    log = {a: {0: 5_000, 1: 10}, b: {0: 10, 1: 10, 2: 10}}
    cap, _ = settle(log, {a: 0, b: 0}, {a: 2, b: 3}, max_bytes=100)
    assert cap.ends == {a: 1, b: 1} and cap.by_bytes  # the overshoot: one record each


def test_the_row_cap_wins_when_tighter() -> None:
    a, b = tps(2)
    log = {a: dict.fromkeys(range(100), 1), b: dict.fromkeys(range(100), 1)}
    cap, _ = settle(log, {a: 0, b: 0}, {a: 100, b: 100}, max_bytes=10_000, max_records=50)
    assert cap.ends == cap_end_offsets({a: 0, b: 0}, {a: 100, b: 100}, 50)
    assert not cap.by_bytes


def test_gaps_hold_no_bytes() -> None:
    (a,) = tps(1)
    log = {a: {0: 40, 5: 40, 9: 40}}  # offsets 1-4 and 6-8: markers or compacted away
    cap, _ = settle(log, {a: 0}, {a: 10}, max_bytes=80)
    assert weight(log, {a: 0}, cap.ends or {}) == 80
    assert cap.ends == {a: 9}


def test_settling_takes_unknown_sizes_as_too_large() -> None:
    a, b = tps(2)
    known = {a: RecordSizes(0, 1, (0,), (10,))}
    cap = byte_capped_ends({a: 0, b: 0}, {a: 5, b: 5}, known, max_bytes=1_000, settle=True)
    assert cap.ends == {a: 1, b: 1}  # the floor only: nothing else is known to fit


def test_sizes_refuse_offsets_past_what_is_known() -> None:
    with pytest.raises(ValueError, match="known until offset 3"):
        RecordSizes(0, 3).bytes_before(4)


@st.composite
def logs(draw: st.DrawFn) -> tuple[Log, dict[TopicPartition, int], dict[TopicPartition, int]]:
    parts = tps(draw(st.integers(min_value=1, max_value=6)))
    log, start, ends = {}, {}, {}
    for tp in parts:
        first = draw(st.integers(min_value=0, max_value=3))
        sizes = draw(st.lists(st.integers(min_value=0, max_value=1_000), max_size=40))
        gaps = draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
        log[tp] = {
            first + i: n for i, (n, gap) in enumerate(zip(sizes, gaps, strict=True)) if not gap
        }
        start[tp], ends[tp] = first, first + len(sizes)
    return log, start, ends


@given(
    case=logs(),
    max_bytes=st.integers(min_value=1, max_value=20_000),
    max_records=st.none() | st.integers(min_value=1, max_value=200),
)
def test_byte_cap_properties(
    case: tuple[Log, dict[TopicPartition, int], dict[TopicPartition, int]],
    max_bytes: int,
    max_records: int | None,
) -> None:
    log, start, ends = case
    cap, probed = settle(log, start, ends, max_bytes, max_records)
    final = cap.ends or {}
    # Fair as the row cap: the same shares for the record count admitted.
    total = sum(ends[tp] - start[tp] for tp in ends)
    expected = dict(ends) if cap.records >= total else cap_end_offsets(start, ends, cap.records)
    assert final == expected
    assert all(start[tp] <= final[tp] <= ends[tp] for tp in ends)  # nothing skipped
    with_data = [tp for tp in ends if ends[tp] > start[tp]]
    first_records = {tp: start[tp] + 1 for tp in with_data}
    floor_bytes = weight(log, start, first_records)
    if max_records is None or max_records >= len(with_data):
        assert all(final[tp] > start[tp] for tp in with_data)  # every partition moves
        assert weight(log, start, final) <= max(max_bytes, floor_bytes)
    else:
        assert cap.records == max_records
    if max_records is not None:
        assert cap.records <= max_records
    if cap.by_bytes:
        assert cap.records < total
    # The probe reads about what the batch admits, not the whole backlog.
    assert probed <= 2 * max_bytes + len(ends) * 1_000


def test_sizes_read_past_a_batch_serve_the_next_one() -> None:
    sizes = RecordSizes(10, 16, (10, 12, 15), (5, 12, 20))
    later = sizes.rebased(12)
    assert later == RecordSizes(12, 16, (12, 15), (7, 15))
    assert later.bytes_before(16) == 15
    assert sizes.rebased(16) == RecordSizes(16, 16)
    assert sizes.rebased(9) is None and sizes.rebased(17) is None


@given(case=logs(), cut=st.integers(min_value=0, max_value=45))
def test_rebased_sizes_count_as_sizes_read_from_there(
    case: tuple[Log, dict[TopicPartition, int], dict[TopicPartition, int]], cut: int
) -> None:
    log, start, ends = case
    tp = min(log)
    records = sorted(log[tp].items())
    sizes = RecordSizes(start[tp], start[tp]).extended(records, ends[tp])
    at = min(start[tp] + cut, ends[tp])
    rebased = sizes.rebased(at)
    assert rebased is not None
    for offset in range(at, ends[tp] + 1):
        assert rebased.bytes_before(offset) == weight(log, {tp: at}, {tp: offset})
