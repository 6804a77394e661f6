"""The sink's marker: encoding a batch id as a committed offset, and whether to write."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state.errors import StateError
from kafka_rescalable.state.sink_commits import (
    SinkMarker,
    committed_batch,
    marker_offset,
    must_write,
)

batch_ids = st.integers(min_value=0, max_value=2**62)
committed = st.one_of(st.none(), st.just(-1001), st.integers(min_value=0, max_value=2**62))


@given(batch_ids)
def test_a_marker_offset_decodes_to_its_batch(batch: int) -> None:
    assert committed_batch(marker_offset(batch)) == batch


@given(batch_ids)
def test_nothing_committed_means_every_batch_is_written(batch: int) -> None:
    assert must_write(None, batch)
    assert must_write(-1001, batch)
    assert must_write(0, batch)


@given(batch_ids, batch_ids)
def test_a_batch_is_written_only_after_the_last_committed_one(done: int, batch: int) -> None:
    assert must_write(marker_offset(done), batch) == (batch > done)


@given(committed, batch_ids)
def test_once_a_batch_commits_no_attempt_of_it_writes_again(offset: int | None, batch: int) -> None:
    after = max(marker_offset(batch), offset or 0)  # committing never moves the marker back
    assert not must_write(after, batch)


def test_a_negative_batch_id_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        marker_offset(-1)


@given(batch_ids, st.integers(0, 10_000), st.integers(0, 50), st.integers(0, 2**31))
def test_marker_metadata_round_trips(batch: int, partition: int, attempt: int, n: int) -> None:
    marker = SinkMarker(batch, partition, attempt, n)
    assert SinkMarker.from_metadata(marker.to_metadata()) == marker
    assert marker.to_metadata() == SinkMarker.from_dict(marker.to_dict()).to_metadata()
    assert committed_batch(marker.offset) == batch


@pytest.mark.parametrize(
    "metadata",
    [
        "not json",
        '{"version": 2, "batch": 1, "partition": 0, "attempt": 0, "records": 1}',
        '{"version": 1, "batch": 1, "partition": 0, "attempt": 0}',
        '{"version": 1, "batch": "1", "partition": 0, "attempt": 0, "records": 1}',
        '{"version": 1, "batch": -1, "partition": 0, "attempt": 0, "records": 1}',
    ],
)
def test_a_malformed_marker_is_refused(metadata: str) -> None:
    with pytest.raises(StateError):
        SinkMarker.from_metadata(metadata)
