"""The ``parallelism`` rule: every branch, from plain values."""

from __future__ import annotations

import pytest

from kafka_rescalable.state.parallelism import (
    BY_CORES,
    CORES_UNKNOWN,
    FIXED,
    ONE_PER_PARTITION,
    SlotCount,
    choose_slot_count,
)


def test_a_fixed_count_wins_over_partitions_slots_and_cores() -> None:
    chosen = choose_slot_count("fixed", 3, partition_count=8, current_slots=5, cores=12)
    assert chosen == SlotCount(3, FIXED)


def test_unset_gives_one_slot_per_partition_and_ignores_cores() -> None:
    assert choose_slot_count(
        "unset", None, partition_count=5, current_slots=2, cores=12
    ) == SlotCount(5, ONE_PER_PARTITION)


def test_unset_with_no_partition_still_has_one_slot() -> None:
    chosen = choose_slot_count("unset", None, partition_count=0, current_slots=0, cores=None)
    assert chosen == SlotCount(1, ONE_PER_PARTITION)


def test_auto_follows_the_cores_whatever_the_current_slots() -> None:
    assert choose_slot_count(
        "auto", None, partition_count=4, current_slots=2, cores=6
    ) == SlotCount(6, BY_CORES)
    assert choose_slot_count(
        "auto", None, partition_count=4, current_slots=6, cores=3
    ) == SlotCount(3, BY_CORES)


@pytest.mark.parametrize("cores", [None, 0])
def test_auto_without_cores_keeps_the_current_slots(cores: int | None) -> None:
    chosen = choose_slot_count("auto", None, partition_count=4, current_slots=7, cores=cores)
    assert chosen == SlotCount(7, CORES_UNKNOWN)


def test_auto_without_cores_on_a_new_query_gives_one_slot_per_partition() -> None:
    chosen = choose_slot_count("auto", None, partition_count=4, current_slots=0, cores=None)
    assert chosen == SlotCount(4, CORES_UNKNOWN)
    empty = choose_slot_count("auto", None, partition_count=0, current_slots=0, cores=None)
    assert empty == SlotCount(1, CORES_UNKNOWN)


@pytest.mark.parametrize("fixed", [None, 0, -2, True])
def test_fixed_without_a_positive_count_is_refused(fixed: object) -> None:
    with pytest.raises(ValueError, match="fixed"):
        choose_slot_count("fixed", fixed, partition_count=1, current_slots=0, cores=None)  # type: ignore[arg-type]


def test_an_unknown_kind_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="'unset', 'auto' or 'fixed'"):
        choose_slot_count("many", None, partition_count=1, current_slots=0, cores=2)  # type: ignore[arg-type]
