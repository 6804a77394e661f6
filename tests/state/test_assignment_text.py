"""The summary and the full list of an assignment, as the driver logs them."""

from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state import OffsetState, PartitionOffset, TopicPartition, rebalance
from kafka_rescalable.state.assignment_text import describe_assignment, summarize_assignment
from kafka_rescalable.state.partitions import describe_partitions


def _state(partitions: int, slots: int, topics: tuple[str, ...] = ("orders",)) -> OffsetState:
    subs = [PartitionOffset(t, p, 0) for t in topics for p in range(partitions)]
    return rebalance(OffsetState.of([]), slots, subs).state


def test_runs_of_three_or_more_partitions_are_one_text() -> None:
    tps = [TopicPartition("orders", p) for p in (0, 1, 2, 3, 5, 7, 8)]
    tps += [TopicPartition("pay", p) for p in (0, 1, 2)]
    assert describe_partitions(tps) == "orders-0..3, orders-5, orders-7, orders-8, pay-0..2"


def test_a_run_does_not_cross_topics() -> None:
    tps = [TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 2)]
    assert describe_partitions(tps) == "a-0, a-1, b-2"


@given(st.sets(st.tuples(st.sampled_from("ab"), st.integers(0, 40)), max_size=60))
def test_the_text_names_exactly_the_partitions(pairs: set[tuple[str, int]]) -> None:
    named: set[tuple[str, int]] = set()
    text = describe_partitions([TopicPartition(t, p) for t, p in pairs])
    for item in filter(None, text.split(", ")):
        topic, _, numbers = item.rpartition("-")
        low, _, high = numbers.partition("..")
        named.update((topic, p) for p in range(int(low), int(high or low) + 1))
    assert named == pairs


def test_summary_of_an_even_assignment() -> None:
    assert summarize_assignment(_state(1000, 20)) == "1000 partitions over 20 slots, 50 each"


def test_summary_of_an_uneven_assignment_over_topics() -> None:
    text = summarize_assignment(_state(5, 3, ("a", "b")))
    assert text == "10 partitions of 2 topics over 3 slots, 3-4 each"


def test_summary_with_idle_slots_and_none_at_all() -> None:
    assert summarize_assignment(_state(1, 2)) == "1 partition over 2 slots, 0-1 each"
    assert summarize_assignment(OffsetState.of([])) == "0 partitions over 0 slots"


def test_summary_stays_short_at_ten_thousand_partitions() -> None:
    state = _state(10_000, 37)
    assert len(summarize_assignment(state)) < 80


def test_full_list_names_each_slot() -> None:
    assert describe_assignment(_state(4, 2)) == (
        "slot 0: orders-0, orders-2; slot 1: orders-1, orders-3"
    )
    assert describe_assignment(_state(1, 2)) == "slot 0: orders-0; slot 1: (none)"
