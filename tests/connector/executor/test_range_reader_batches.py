"""The reader's batch-at-once cut gives the same rows as its record-by-record rule."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rescalable.executor.arrow_cut import take_in_range
from kafka_rescalable.executor.arrow_rows import messages_to_batch
from kafka_rescalable.executor.range_events import accept_with_events
from kafka_rescalable.state import OffsetRange
from kafka_rescalable.task import RangeReadSettings


@dataclass
class StubMessage:
    """A record as ``consume()`` returns it, without error."""

    t: str
    p: int
    off: int

    def topic(self) -> str:
        """Return the topic, which the cut matches against the task's ranges."""
        return self.t

    def partition(self) -> int:
        """Return the partition, which the cut matches against the task's ranges."""
        return self.p

    def offset(self) -> int:
        """Return the offset, which decides whether the record is inside its range."""
        return self.off

    def error(self) -> None:
        """Report no error: the stub is always a record, never an event such as end of partition."""
        return None

    def key(self) -> None:
        """Return a null key: the rows compared need none."""
        return None

    def value(self) -> bytes:
        """Return a value made from the offset, so the rows of different records differ."""
        return b"v%d" % self.off

    def timestamp(self) -> tuple[int, int]:
        """Return a timestamp made from the offset, so the rows of different records differ."""
        return (1, 1_700_000_000_000 + self.off)

    def headers(self) -> None:
        """Return no headers: the settings leave the headers column out."""
        return None


SETTINGS = RangeReadSettings({}, False, True, 1000, 100)

# Runs of consecutive records of one partition, as librdkafka delivers them: a topic, a
# partition, a first offset and a length (offsets may run past the range or start anywhere).
runs = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]), st.integers(0, 2), st.integers(0, 30), st.integers(1, 8)
    ),
    min_size=1,
    max_size=8,
)
ranges = st.dictionaries(
    st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 2)),
    st.tuples(st.integers(0, 20), st.integers(1, 15)),
    min_size=1,
)


@settings(max_examples=300, deadline=None)
@given(runs=runs, wanted=ranges, one_topic=st.booleans())
def test_batch_cut_matches_the_record_rule(runs, wanted, one_topic) -> None:
    topic = "a" if one_topic else None
    messages = [
        StubMessage("a" if one_topic else t, p, start + i)
        for t, p, start, length in runs
        for i in range(length)
    ]
    remaining = {
        ("a" if one_topic else t, p): OffsetRange("a" if one_topic else t, p, s, s + n)
        for (t, p), (s, n) in wanted.items()
    }
    by_record = dict(remaining)
    finished_by_record: list[tuple[str, int]] = []

    def finish_record(key: tuple[str, int]) -> None:
        del by_record[key]
        finished_by_record.append(key)

    rows = accept_with_events(
        None, messages, by_record, SETTINGS.fail_on_data_loss, finish_record
    )
    expected = messages_to_batch(rows, False, topic).to_pylist() if rows else []
    cut = take_in_range(messages_to_batch(messages, False, topic), remaining, topic)
    assert (cut.rows.to_pylist() if cut.rows is not None else []) == expected
    assert list(cut.finished) == finished_by_record
