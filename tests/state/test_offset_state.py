"""Unit tests of ``OffsetState`` and of the errors' pickling."""

from __future__ import annotations

import pickle

import pytest

from kafka_rescalable.state import (
    DuplicatePartitionError,
    ForeignCheckpointError,
    OffsetDocumentError,
    OffsetRange,
    OffsetRegressionError,
    OffsetState,
    PartitionOffset,
    StateError,
    TopicPartition,
    UnknownPartitionError,
)

P = PartitionOffset
TP = TopicPartition


def test_of_sorts_each_slot_and_keeps_the_slot_order() -> None:
    state = OffsetState.of([[P("b", 0, 1), P("a", 10, 2), P("a", 2, 3)], [], [P("c", 0, 0)]])
    assert state.slots == ((P("a", 2, 3), P("a", 10, 2), P("b", 0, 1)), (), (P("c", 0, 0),))
    assert state.num_slots == 3


def test_equal_assignments_are_equal_whatever_the_construction_order() -> None:
    a = OffsetState.of([[P("a", 0, 1), P("a", 1, 1)], [P("b", 0, 0)]])
    b = OffsetState(((P("a", 1, 1), P("a", 0, 1)), (P("b", 0, 0),)))
    assert a == b
    assert hash(a) == hash(b)
    assert a != OffsetState.of([[P("b", 0, 0)], [P("a", 0, 1), P("a", 1, 1)]])


def test_empty_state_has_no_slot() -> None:
    assert OffsetState.empty() == OffsetState.of([])
    assert OffsetState.empty().num_slots == 0
    assert OffsetState.empty().partitions() == frozenset()


def test_duplicate_partition_across_slots_is_named() -> None:
    with pytest.raises(
        DuplicatePartitionError, match=r"orders-3 is listed in slot 0 and in slot 2"
    ) as info:
        OffsetState.of([[P("orders", 3, 1)], [], [P("orders", 3, 1)]])
    assert info.value.topic_partition == TP("orders", 3)


def test_duplicate_partition_in_one_slot_is_named() -> None:
    with pytest.raises(DuplicatePartitionError, match=r"orders-3 is listed twice in slot 1"):
        OffsetState.of([[], [P("orders", 3, 1), P("orders", 3, 7)]])


def test_constructor_rejects_lists_and_foreign_values() -> None:
    with pytest.raises(TypeError, match="OffsetState.of"):
        OffsetState([[P("a", 0, 0)]])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"slots\[0\]"):
        OffsetState(([P("a", 0, 0)],))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"slots\[0\]: must hold PartitionOffset"):
        OffsetState(((TP("a", 0),),))  # type: ignore[arg-type]


def test_lookups() -> None:
    state = OffsetState.of([[P("a", 0, 5), P("b", 1, 7)], [P("a", 1, 9)]])
    assert state.partitions() == frozenset({TP("a", 0), TP("a", 1), TP("b", 1)})
    assert state.offsets() == {TP("a", 0): 5, TP("a", 1): 9, TP("b", 1): 7}
    assert list(state.offsets()) == [TP("a", 0), TP("a", 1), TP("b", 1)]
    assert state.slot_of(TP("a", 1)) == 1
    assert state.offset_of(TP("b", 1)) == 7
    assert state.sub_states() == (P("a", 0, 5), P("a", 1, 9), P("b", 1, 7))
    with pytest.raises(
        UnknownPartitionError, match="^partition zz-0 is not in this offset state"
    ) as info:
        state.slot_of(TP("zz", 0))
    assert isinstance(info.value, KeyError)
    assert info.value.topic_partition == TP("zz", 0)


def test_with_offsets_keeps_the_assignment_and_unlisted_offsets() -> None:
    state = OffsetState.of([[P("a", 0, 5), P("b", 1, 7)], [P("a", 1, 9)]])
    moved = state.with_offsets({TP("a", 0): 50, TP("a", 1): 90})
    assert moved == OffsetState.of([[P("a", 0, 50), P("b", 1, 7)], [P("a", 1, 90)]])
    assert state.offsets()[TP("a", 0)] == 5  # the original is untouched
    assert state.with_offsets({}) == state


def test_with_offsets_refuses_partitions_it_does_not_hold() -> None:
    state = OffsetState.of([[P("a", 0, 5)]])
    with pytest.raises(UnknownPartitionError, match="a-1"):
        state.with_offsets({TP("a", 1): 3})
    with pytest.raises(ValueError, match="^offset:"):
        state.with_offsets({TP("a", 0): -3})


def test_with_offsets_checks_keys_and_offsets_like_the_constructors() -> None:
    state = OffsetState.of([[P("a", 0, 5)]])
    with pytest.raises(TypeError, match="^offset: must be an int, got NoneType"):
        state.with_offsets({TP("a", 0): None})  # type: ignore[dict-item]
    with pytest.raises(UnknownPartitionError, match=r"\('a', 0\)"):
        state.with_offsets({("a", 0): 7})  # type: ignore[dict-item]  # only a TopicPartition
    with pytest.raises(UnknownPartitionError):
        state.slot_of(("a", 0))  # type: ignore[arg-type]


def test_states_made_inside_the_package_equal_checked_ones() -> None:
    """with_offsets builds its result unchecked, and its index only when first asked."""
    state = OffsetState.of([[P("b", 0, 5), P("a", 3, 7)], [], [P("a", 1, 9)]])
    moved = state.with_offsets({TP("a", 1): 11})
    checked = OffsetState(moved.slots)
    assert moved == checked
    assert moved.offsets() == checked.offsets()
    assert moved.partitions() == checked.partitions() == state.partitions()
    assert [moved.slot_of(tp) for tp in state.partitions()] == [
        checked.slot_of(tp) for tp in state.partitions()
    ]
    assert moved.sub_states() == checked.sub_states()
    assert pickle.loads(pickle.dumps(moved)) == checked


class _Tagged(PartitionOffset):
    """A subclass: still accepted, checked and sorted one value at a time."""


class _Slot(tuple[PartitionOffset, ...]):
    """A tuple subclass as a slot: accepted, and stored as a plain tuple."""


def test_unusual_but_valid_slots_take_the_checked_path() -> None:
    state = OffsetState(((_Tagged("b", 0, 1), _Tagged("a", 0, 2)), _Slot([P("c", 0, 3)])))
    assert [type(s) for s in state.slots[0]] == [_Tagged, _Tagged]
    assert [s.topic for s in state.slots[0]] == ["a", "b"]
    assert type(state.slots[1]) is tuple
    assert state.slot_of(TP("a", 0)) == 0


def test_ranges_to_uses_the_end_assignment_and_skips_new_and_removed_partitions() -> None:
    start = OffsetState.of([[P("a", 0, 5), P("a", 1, 10), P("gone", 0, 3)]])
    end = OffsetState.of([[P("a", 1, 10), P("new", 0, 40)], [P("a", 0, 8)]])
    assert start.ranges_to(end) == ((), (OffsetRange("a", 0, 5, 8),))
    assert start.records_between(end) == 3
    assert start.records_between(start) == 0


def test_ranges_to_refuses_a_regression_naming_partition_and_offsets() -> None:
    start = OffsetState.of([[P("orders", 2, 120)]])
    end = OffsetState.of([[P("orders", 2, 100)]])
    with pytest.raises(
        OffsetRegressionError, match=r"orders-2: end offset 100 is before start offset 120"
    ) as info:
        start.ranges_to(end)
    assert (info.value.topic_partition, info.value.start, info.value.end) == (
        TP("orders", 2),
        120,
        100,
    )


def test_state_survives_pickling() -> None:
    state = OffsetState.of([[P("a", 0, 5)], [], [P("b", 1, 2)]])
    copy = pickle.loads(pickle.dumps(state))
    assert copy == state
    assert copy.slot_of(TP("b", 1)) == 2


@pytest.mark.parametrize(
    "error",
    [
        OffsetDocumentError("bad offset", "slots[0]['t']['1']"),
        ForeignCheckpointError("foreign", '{"t":{"0":1}}', {TP("t", 0): 1}),
        DuplicatePartitionError("twice", TP("t", 0)),
        UnknownPartitionError("unknown", TP("t", 0)),
        OffsetRegressionError(TP("t", 0), 5, 3),
    ],
)
def test_errors_are_state_errors_and_survive_pickling(error: StateError) -> None:
    assert isinstance(error, StateError)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.__dict__ == error.__dict__


def test_equality_compares_slot_counts_places_and_offsets() -> None:
    """Equality is decided on the places, in C: every way two states differ is still seen."""
    state = OffsetState.of([[P("a", 0, 5), P("a", 1, 6)], [P("b", 0, 7)]])
    assert state == OffsetState.of([[P("a", 1, 6), P("a", 0, 5)], [P("b", 0, 7)]])
    assert hash(state) == hash(OffsetState.of([[P("a", 1, 6), P("a", 0, 5)], [P("b", 0, 7)]]))
    assert state != OffsetState.of([[P("a", 0, 5), P("a", 1, 6)], [P("b", 0, 7)], []])
    assert state != OffsetState.of([[P("a", 0, 5)], [P("a", 1, 6), P("b", 0, 7)]])
    assert state != OffsetState.of([[P("a", 0, 5), P("a", 1, 6)], [P("b", 0, 8)]])
    assert state != OffsetState.of([[P("a", 0, 5), P("a", 1, 6)], [P("c", 0, 7)]])
    assert OffsetState.empty() == OffsetState.of([])
    assert OffsetState.of([[], []]) != OffsetState.of([[]])
    assert state != state.slots  # another type is never equal


def test_a_subclass_value_never_equals_the_plain_one() -> None:
    plain = OffsetState.of([[P("a", 0, 5)]])
    tagged = OffsetState.of([[_Tagged("a", 0, 5)]])
    assert plain != tagged
    assert tagged == OffsetState.of([[_Tagged("a", 0, 5)]])


def test_offsets_are_a_fresh_dict_each_call_and_topics_are_listed() -> None:
    state = OffsetState.of([[P("b", 0, 1)], [P("a", 3, 2), P("a", 1, 4)]])
    first = state.offsets()
    assert list(first) == [TP("a", 1), TP("a", 3), TP("b", 0)]
    first[TP("a", 1)] = 99
    del first[TP("b", 0)]
    assert state.offsets() == {TP("a", 1): 4, TP("a", 3): 2, TP("b", 0): 1}
    assert state.topics() == frozenset({"a", "b"})
    assert OffsetState.of([[], []]).topics() == frozenset()


def test_with_offsets_refuses_a_bool_or_an_out_of_range_offset_by_name() -> None:
    state = OffsetState.of([[P("a", 0, 1)], [P("a", 1, 1)]])
    with pytest.raises(TypeError, match="offset: must be an int, got bool"):
        state.with_offsets({TP("a", 0): 4, TP("a", 1): True})
    with pytest.raises(ValueError, match="offset: must be <= "):
        state.with_offsets({TP("a", 0): 2**63})
