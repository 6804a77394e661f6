"""The Arrow cutting kernel keeps exactly the rows a plain record-by-record filter keeps."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rescalable.executor.arrow_cut import Cut, RangeKey, take_in_range
from kafka_rescalable.schema import arrow_schema
from kafka_rescalable.state import OffsetRange

Row = tuple[str, int, int]  # topic, partition, offset


def batch_of(rows: list[Row]) -> pa.RecordBatch:
    """Build a batch in the source's layout whose value is the row's index, to name kept rows."""
    count = len(rows)
    return pa.RecordBatch.from_arrays(
        [
            pa.nulls(count, pa.binary()),
            pa.array([str(index).encode() for index in range(count)], pa.binary()),
            pa.array([t for t, _, _ in rows], pa.string()),
            pa.array([p for _, p, _ in rows], pa.int32()),
            pa.array([o for _, _, o in rows], pa.int64()),
            pa.array([0] * count, pa.timestamp("us", tz="UTC")),
            pa.array([0] * count, pa.int32()),
        ],
        schema=arrow_schema(False),
    )


def kept_rows(cut: Cut) -> list[int]:
    """Return the indexes of the rows the cut kept, in order."""
    return [] if cut.rows is None else [int(v) for v in cut.rows.column(1).to_pylist()]


def plain_filter(
    rows: list[Row], remaining: dict[RangeKey, OffsetRange]
) -> tuple[list[int], list[RangeKey]]:
    """Apply the rule one record at a time: keep ``[start, until)``, end at ``until - 1``."""
    left = dict(remaining)
    kept: list[int] = []
    finished: list[RangeKey] = []
    for index, (topic, partition, offset) in enumerate(rows):
        key = (topic, partition)
        offset_range = left.get(key)
        if offset_range is None or offset < offset_range.start:
            continue
        if offset < offset_range.until:
            kept.append(index)
        if offset >= offset_range.until - 1:
            del left[key]
            finished.append(key)
    return kept, finished


keys = st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 2))
# Any offsets in any order: consecutive runs as librdkafka delivers them, and also records left
# below a range by a reused consumer, or a partition met again after its range ended.
rows_strategy = st.lists(
    st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 2), st.integers(0, 40)),
    min_size=1,
    max_size=40,
)
ranges_strategy = st.dictionaries(
    keys, st.tuples(st.integers(0, 30), st.integers(1, 15)), min_size=0, max_size=6
)


def as_ranges(wanted: dict[RangeKey, tuple[int, int]]) -> dict[RangeKey, OffsetRange]:
    return {(t, p): OffsetRange(t, p, s, s + n) for (t, p), (s, n) in wanted.items()}


@settings(max_examples=400)
@given(rows=rows_strategy, wanted=ranges_strategy)
def test_the_cut_equals_a_plain_filter(rows: list[Row], wanted) -> None:
    remaining = as_ranges(wanted)
    before = dict(remaining)
    cut = take_in_range(batch_of(rows), remaining, None)
    assert (kept_rows(cut), list(cut.finished)) == plain_filter(rows, remaining)
    assert remaining == before  # the caller's map is not touched


@settings(max_examples=200)
@given(
    offsets=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 40)), min_size=1, max_size=40),
    wanted=ranges_strategy,
)
def test_one_topic_is_cut_without_its_column(offsets, wanted) -> None:
    rows = [("a", p, o) for p, o in offsets]
    remaining = {k: r for k, r in as_ranges(wanted).items() if k[0] == "a"}
    cut = take_in_range(batch_of(rows), remaining, "a")
    assert (kept_rows(cut), list(cut.finished)) == plain_filter(rows, remaining)


def test_a_batch_wholly_inside_its_range_is_returned_as_it_is() -> None:
    batch = batch_of([("a", 0, 5), ("a", 0, 6), ("a", 1, 9)])
    remaining = {("a", 0): OffsetRange("a", 0, 5, 10), ("a", 1): OffsetRange("a", 1, 0, 20)}
    cut = take_in_range(batch, remaining, None)
    assert cut.rows is batch
    assert cut.finished == ()


def test_a_range_ends_at_its_last_offset_and_drops_what_follows() -> None:
    rows = [("a", 0, 8), ("a", 0, 9), ("a", 0, 10), ("a", 1, 3), ("a", 0, 11)]
    remaining = {("a", 0): OffsetRange("a", 0, 8, 10), ("a", 1): OffsetRange("a", 1, 3, 4)}
    cut = take_in_range(batch_of(rows), remaining, None)
    assert kept_rows(cut) == [0, 1, 3]
    assert cut.finished == (("a", 0), ("a", 1))


def test_records_below_the_start_are_dropped() -> None:
    rows = [("a", 0, 1), ("a", 0, 2), ("a", 0, 5), ("a", 0, 6)]
    cut = take_in_range(batch_of(rows), {("a", 0): OffsetRange("a", 0, 5, 50)}, None)
    assert kept_rows(cut) == [2, 3]
    assert cut.finished == ()


def test_a_batch_of_no_wanted_partition_gives_no_rows() -> None:
    cut = take_in_range(batch_of([("b", 0, 1)]), {("a", 0): OffsetRange("a", 0, 0, 5)}, None)
    assert cut == Cut(None, ())
