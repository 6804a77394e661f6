"""``startingOffsetsFromGroup``'s decisions, from plain values: which offset wins, out of range."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.group_start import GroupStart, start_from_group

TP = TopicPartition
A0, A1, A2, B0 = TP("a", 0), TP("a", 1), TP("a", 2), TP("b", 0)
LIVE = (A0, A1, A2, B0)
EARLIEST = dict.fromkeys(LIVE, 10)
LATEST = dict.fromkeys(LIVE, 50)


def start(committed: dict[TopicPartition, int], fail: bool = True) -> GroupStart:
    return start_from_group("legacy", LIVE, committed, EARLIEST, LATEST, fail_on_data_loss=fail)


def test_committed_partitions_start_at_the_commit_and_the_rest_fall_back() -> None:
    result = start({A0: 12, B0: 50})
    assert result.placed == {A0: 12, B0: 50}
    assert result.fallback == {A1, A2}
    assert result.losses == ()


def test_the_group_wins_over_a_fallback_value_for_the_same_partition() -> None:
    result = start({A0: 12})
    merged = result.merged({A0: 40, A1: 20, A2: 30, B0: 10})
    assert merged == {A0: 12, A1: 20, A2: 30, B0: 10}


def test_a_fallback_that_misses_a_partition_is_a_bug_said_plainly() -> None:
    with pytest.raises(ValueError, match="no fallback offset for a-2"):
        start({A0: 12}).merged({A1: 20, B0: 10})


def test_a_group_without_commits_leaves_every_partition_to_the_fallback() -> None:
    result = start({})
    assert result.placed == {}
    assert result.fallback == frozenset(LIVE)


def test_commits_for_partitions_outside_the_subscription_are_ignored() -> None:
    result = start({A0: 12, TP("other", 0): 3})
    assert result.placed == {A0: 12}


def test_a_commit_below_the_earliest_offset_is_data_loss_naming_partition_and_group() -> None:
    result = start({A0: 4, A1: 20})
    (loss,) = result.losses
    assert loss.fatal
    assert "consumer group 'legacy'" in loss.message
    assert "a-0: committed offset 4, but its records start at 10 now" in loss.message
    assert "('startingOffsetsFromGroup')" in loss.message and "Retention" in loss.message
    assert "Set 'failOnDataLoss' to false" in loss.message
    assert "--group legacy --reset-offsets --to-earliest --topic a:0 --execute" in loss.message


def test_without_fail_on_data_loss_a_commit_below_earliest_starts_at_earliest() -> None:
    result = start({A0: 4, A1: 20}, fail=False)
    assert result.placed == {A0: 10, A1: 20}
    (loss,) = result.losses
    assert not loss.fatal
    assert "starting a-0 at their earliest offset because failOnDataLoss is false" in loss.message


def test_a_commit_above_the_latest_offset_is_data_loss_and_restarts_at_earliest() -> None:
    result = start({A0: 51, A2: 70, B0: 50}, fail=True)
    (loss,) = result.losses
    assert loss.fatal
    assert "a-0: committed offset 51, but the partition ends at 50" in loss.message
    assert "a-2: committed offset 70" in loss.message
    assert "deleted and re-created" in loss.message
    assert "--topic a:0,2" in loss.message
    assert "b-0" not in loss.message  # exactly at the end: nothing to read, nothing lost
    relaxed = start({A0: 51, A2: 70, B0: 50}, fail=False)
    assert relaxed.placed == {A0: 10, A2: 10, B0: 50}
    assert "starting a-0, a-2 at their earliest offset" in relaxed.losses[0].message


def test_both_kinds_of_range_error_are_reported_below_first() -> None:
    result = start({A0: 1, B0: 99})
    assert [("records are gone" in x.message, x.fatal) for x in result.losses] == [
        (True, True),
        (False, True),
    ]
    assert "--topic b:0" in result.losses[1].message


@given(
    st.dictionaries(st.sampled_from(LIVE), st.integers(0, 100)),
    st.booleans(),
)
def test_every_live_partition_gets_exactly_one_start_within_its_range(
    committed: dict[TopicPartition, int], fail: bool
) -> None:
    result = start(committed, fail)
    assert result.placed.keys() | result.fallback == set(LIVE)
    assert not result.placed.keys() & result.fallback
    out_of_range = {tp for tp, at in committed.items() if not 10 <= at <= 50}
    assert any(loss.fatal for loss in result.losses) == (fail and bool(out_of_range))
    for tp, at in result.placed.items():
        assert EARLIEST[tp] <= at <= LATEST[tp]
        assert at == (committed[tp] if tp not in out_of_range else EARLIEST[tp])
