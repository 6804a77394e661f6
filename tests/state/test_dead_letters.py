"""Dead letters: the marker's policy (each bad record written once) and the headers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state.dead_letters import (
    HEADER_PREFIX,
    DeadLetterMarker,
    DeadLetterOrigin,
    after_commit,
    dead_letter_headers,
    done_intervals,
    framed_schema_id,
    merge_intervals,
    must_write,
)
from kafka_rescalable.state.errors import StateError

intervals = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 200)), max_size=12)


@given(intervals)
def test_merged_intervals_cover_the_same_offsets(given_intervals: list[tuple[int, int]]) -> None:
    merged = merge_intervals(given_intervals)
    covered = {o for s, u in given_intervals for o in range(s, u)}
    assert {o for s, u in merged for o in range(s, u)} == covered
    assert all(a[1] < b[0] for a, b in zip(merged, merged[1:], strict=False))


def test_done_intervals_stop_where_the_task_has_read() -> None:
    assert done_intervals([(0, 10), (20, 30)], 25) == ((0, 10), (20, 25))
    assert done_intervals([(0, 10), (20, 30)], 5) == ((0, 5),)
    assert done_intervals([(0, 10), (10, 30)], 99) == ((0, 30),)


@st.composite
def replays(draw: st.DrawFn) -> tuple[set[int], list[list[tuple[int, int]]], list[int]]:
    """Draw a batch's range [0, n) with bad offsets, several layouts of pieces, attempts.

    Each attempt may die after committing what it had read up to some offset.
    """
    n = draw(st.integers(2, 60))
    bad = draw(st.sets(st.integers(0, n - 1), max_size=n))
    layouts = []
    for _ in range(draw(st.integers(1, 4))):
        cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=4)))
        edges = [0, *cuts, n]
        layouts.append(list(zip(edges, edges[1:], strict=False)))
    order = draw(st.lists(st.integers(0, 10_000), min_size=1, max_size=12))
    return bad, layouts, order


@given(replays())
def test_each_bad_record_is_written_once_whatever_the_attempts(
    case: tuple[set[int], list[list[tuple[int, int]]], list[int]],
) -> None:
    """Each bad offset is written exactly once, whatever the layouts and attempts.

    Pieces of other layouts (a replay planned otherwise) commit in any order, some only part
    of their piece (a task that died after a flush); then every piece of the last layout
    commits whole.
    """
    bad, layouts, order = case
    marker: DeadLetterMarker | None = None
    written: list[int] = []

    def attempt(piece: tuple[int, int], read_until: int) -> None:
        nonlocal marker
        due = [o for o in sorted(bad) if piece[0] <= o < read_until if must_write(marker, 3, o)]
        if due:  # a transaction only when there are dead letters to write
            written.extend(due)
            marker = after_commit(marker, 3, done_intervals([piece], read_until))

    for step in order:
        layout = layouts[step % len(layouts)]
        piece = layout[(step // 7) % len(layout)]
        attempt(piece, piece[0] + (step // 3) % (piece[1] - piece[0] + 1))
    for piece in layouts[-1]:
        attempt(piece, piece[1])
    assert sorted(written) == sorted(bad)


def test_a_later_batchs_marker_writes_nothing_and_an_earlier_ones_everything() -> None:
    marker = DeadLetterMarker(5, ((10, 20),))
    assert not must_write(marker, 4, 3)
    assert must_write(marker, 6, 15)
    assert must_write(marker, 5, 20) and not must_write(marker, 5, 19)
    assert after_commit(marker, 6, [(30, 40)]) == DeadLetterMarker(6, ((30, 40),))
    assert after_commit(marker, 5, [(20, 25)]) == DeadLetterMarker(5, ((10, 25),))
    with pytest.raises(ValueError, match="older than the marker"):
        after_commit(marker, 4, [(0, 5)])


@given(st.integers(0, 2**62), intervals.filter(lambda i: merge_intervals(i)))
def test_marker_metadata_round_trips(batch: int, given_intervals: list[tuple[int, int]]) -> None:
    marker = DeadLetterMarker(batch, merge_intervals(given_intervals))
    assert DeadLetterMarker.from_metadata(marker.to_metadata()) == marker
    assert marker.offset == max(u for _, u in marker.done)


@pytest.mark.parametrize(
    "metadata",
    [
        "",
        "nope",
        '{"version":2,"batch":1,"done":[[0,1]]}',
        '{"version":1,"batch":1}',
        '{"version":1,"batch":true,"done":[[0,1]]}',
        '{"version":1,"batch":1,"done":[[3,1]]}',
        '{"version":1,"batch":-1,"done":[[0,1]]}',
        '{"version":1,"batch":1,"done":[[0]]}',
    ],
)
def test_malformed_marker_metadata_is_refused(metadata: str) -> None:
    with pytest.raises(StateError, match="marker"):
        DeadLetterMarker.from_metadata(metadata)


def test_a_marker_too_long_for_kafka_says_what_to_change() -> None:
    marker = DeadLetterMarker(1, tuple((i * 10**9, i * 10**9 + 1) for i in range(400)))
    with pytest.raises(StateError, match="minPartitions"):
        marker.to_metadata()


def test_headers_keep_the_records_own_first_and_say_where_it_came_from() -> None:
    origin = DeadLetterOrigin("orders", 3, 42, 1_700_000_000_123, 0, "value: bad", None, 7, "q", 9)
    headers = dead_letter_headers([("trace", b"t1"), ("empty", None)], origin)
    assert headers[:2] == [("trace", b"t1"), ("empty", None)]
    ours = dict(headers[2:])
    assert ours == {
        f"{HEADER_PREFIX}topic": b"orders",
        f"{HEADER_PREFIX}partition": b"3",
        f"{HEADER_PREFIX}offset": b"42",
        f"{HEADER_PREFIX}timestamp": b"1700000000123",
        f"{HEADER_PREFIX}timestamp.type": b"0",
        f"{HEADER_PREFIX}value.schema.id": b"7",
        f"{HEADER_PREFIX}reason": b"value: bad",
        f"{HEADER_PREFIX}query.id": b"q",
        f"{HEADER_PREFIX}batch.id": b"9",
    }


@pytest.mark.parametrize(
    ("payload", "schema_id"),
    [(b"\x00\x00\x00\x01\x02rest", 258), (b"\x00\x00\x00\x01", None), (b"{}", None), (None, None)],
)
def test_framed_schema_id(payload: bytes | None, schema_id: int | None) -> None:
    assert framed_schema_id(payload) == schema_id
