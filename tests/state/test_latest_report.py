"""``LatestByTopic``: the progress report's latest offsets, from a layout made once."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.latest_report import LatestByTopic

latest_offsets = st.dictionaries(
    st.builds(
        TopicPartition,
        st.sampled_from(["orders", "payments", "a", "z-9"]),
        st.integers(min_value=0, max_value=30),
    ),
    st.integers(min_value=0, max_value=2**40),
    max_size=40,
)


def grouped(latest: dict[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Write the report out plainly: per topic, partitions in numeric order."""
    topics = sorted({tp.topic for tp in latest})
    return {
        topic: {
            str(tp.partition): latest[tp]
            for tp in sorted(latest, key=lambda tp: tp.partition)
            if tp.topic == topic
        }
        for topic in topics
    }


@given(st.lists(latest_offsets, min_size=1, max_size=6))
def test_every_batch_reports_its_own_offsets_in_order(batches: list[dict]) -> None:
    """Batches come with the same partitions or others; each report is that batch's."""
    report = LatestByTopic()
    for latest in batches:
        for _ in range(2):  # the second time from the layout made the first time
            made = report.report(latest)
            assert made == grouped(latest)
            assert list(made) == sorted(made)
            for topic, offsets in made.items():
                assert list(offsets) == [str(p) for p in sorted(map(int, offsets))], topic


def test_partition_ten_comes_after_two() -> None:
    latest = {TopicPartition("t", 10): 5, TopicPartition("t", 2): 7}
    assert list(LatestByTopic().report(latest)["t"]) == ["2", "10"]


def test_new_offsets_of_the_same_partitions_are_reported() -> None:
    report = LatestByTopic()
    tp = TopicPartition("t", 0)
    assert report.report({tp: 1}) == {"t": {"0": 1}}
    assert report.report({tp: 9}) == {"t": {"0": 9}}
    assert report.report({}) == {}
