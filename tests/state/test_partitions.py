"""Unit tests of the partition value types: validation, order, equality, pickling."""

from __future__ import annotations

import pickle

import pytest

from kafka_rescalable.state import (
    MAX_OFFSET,
    MAX_PARTITION,
    OffsetRange,
    PartitionOffset,
    TopicPartition,
)
from kafka_rescalable.state.partitions import (
    trusted_offset_range,
    trusted_partition_offset,
    trusted_topic_partition,
)


def test_topic_partition_orders_by_topic_then_partition_numerically() -> None:
    tps = [TopicPartition("b", 0), TopicPartition("a", 10), TopicPartition("a", 2)]
    assert sorted(tps) == [TopicPartition("a", 2), TopicPartition("a", 10), TopicPartition("b", 0)]


def test_topic_partition_is_a_hashable_value() -> None:
    assert TopicPartition("t", 1) == TopicPartition("t", 1)
    assert len({TopicPartition("t", 1), TopicPartition("t", 1), TopicPartition("t", 2)}) == 2
    assert str(TopicPartition("orders", 3)) == "orders-3"
    with pytest.raises(AttributeError):
        TopicPartition("t", 1).partition = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("topic", "partition", "error", "field"),
    [
        ("", 0, ValueError, "topic"),
        (None, 0, TypeError, "topic"),
        ("t", -1, ValueError, "partition"),
        ("t", MAX_PARTITION + 1, ValueError, "partition"),
        ("t", True, TypeError, "partition"),
        ("t", 1.0, TypeError, "partition"),
        ("t", "1", TypeError, "partition"),
    ],
)
def test_topic_partition_rejects_bad_fields_naming_the_field(
    topic: object, partition: object, error: type[Exception], field: str
) -> None:
    with pytest.raises(error, match=f"^{field}:"):
        TopicPartition(topic, partition)  # type: ignore[arg-type]


def test_partition_offset_is_ordered_hashable_and_knows_its_partition() -> None:
    sub = PartitionOffset("orders", 3, 17)
    assert sub.topic_partition == TopicPartition("orders", 3)
    assert sub.with_offset(20) == PartitionOffset("orders", 3, 20)
    assert sub == PartitionOffset("orders", 3, 17)
    assert hash(sub) == hash(PartitionOffset("orders", 3, 17))
    assert sorted(
        [PartitionOffset("b", 0, 0), PartitionOffset("a", 1, 5), PartitionOffset("a", 1, 2)]
    ) == [
        PartitionOffset("a", 1, 2),
        PartitionOffset("a", 1, 5),
        PartitionOffset("b", 0, 0),
    ]
    assert str(sub) == "orders-3@17"


@pytest.mark.parametrize(
    ("args", "error", "field"),
    [
        (("", 0, 0), ValueError, "topic"),
        (("t", -1, 0), ValueError, "partition"),
        (("t", 0, -1), ValueError, "offset"),
        (("t", 0, MAX_OFFSET + 1), ValueError, "offset"),
        (("t", 0, False), TypeError, "offset"),
        (("t", 0, 2.0), TypeError, "offset"),
    ],
)
def test_partition_offset_rejects_bad_fields_naming_the_field(
    args: tuple[object, ...], error: type[Exception], field: str
) -> None:
    with pytest.raises(error, match=f"^{field}:"):
        PartitionOffset(*args)  # type: ignore[arg-type]


def test_with_offset_validates_the_new_offset() -> None:
    with pytest.raises(ValueError, match="^offset:"):
        PartitionOffset("t", 0, 5).with_offset(-1)
    with pytest.raises(TypeError, match="^offset: must be an int, got bool True"):
        PartitionOffset("t", 0, 5).with_offset(True)


def test_offset_range_is_half_open() -> None:
    r = OffsetRange("t", 1, 5, 12)
    assert r.size == 7
    assert r.topic_partition == TopicPartition("t", 1)
    assert OffsetRange("t", 1, 5, 5).size == 0
    assert str(r) == "t-1[5, 12)"


@pytest.mark.parametrize(
    ("args", "error", "field"),
    [
        (("t", 0, 5, 4), ValueError, "until"),
        (("t", 0, -1, 4), ValueError, "start"),
        (("", 0, 0, 4), ValueError, "topic"),
        (("t", 0, 0, True), TypeError, "until"),
    ],
)
def test_offset_range_rejects_bad_fields_naming_the_field(
    args: tuple[object, ...], error: type[Exception], field: str
) -> None:
    with pytest.raises(error, match=f"^{field}:"):
        OffsetRange(*args)  # type: ignore[arg-type]


def test_values_survive_pickling_for_the_executors() -> None:
    values = [TopicPartition("t", 1), PartitionOffset("t", 1, 2), OffsetRange("t", 1, 2, 9)]
    for value in values:
        assert pickle.loads(pickle.dumps(value)) == value


def test_values_built_inside_the_package_equal_checked_ones() -> None:
    """The unchecked constructors ``state`` uses internally give the very same values."""
    built = [
        (trusted_topic_partition("t", 1), TopicPartition("t", 1)),
        (trusted_partition_offset("t", 1, 2), PartitionOffset("t", 1, 2)),
        (trusted_offset_range("t", 1, 2, 9), OffsetRange("t", 1, 2, 9)),
    ]
    for fast, checked in built:
        assert type(fast) is type(checked)
        assert fast == checked
        assert hash(fast) == hash(checked)
        assert repr(fast) == repr(checked)
        assert pickle.loads(pickle.dumps(fast)) == checked
        with pytest.raises(AttributeError):
            fast.topic = "u"  # type: ignore[misc]  # still frozen
    assert PartitionOffset("t", 1, 2).topic_partition == TopicPartition("t", 1)
    assert OffsetRange("t", 1, 2, 9).topic_partition == TopicPartition("t", 1)


def test_a_topic_partition_is_its_key_tuple_and_pickles_checked() -> None:
    """Hashing and comparing in C is why it is a tuple: it must behave as the key it stands for."""
    tp = TopicPartition("orders", 3)
    assert tp == ("orders", 3) and hash(tp) == hash(("orders", 3))
    assert {tp: 1}[("orders", 3)] == 1
    assert (tp.topic, tp.partition) == ("orders", 3)
    assert repr(tp) == "TopicPartition(topic='orders', partition=3)"
    assert str(tp) == "orders-3"
    assert sorted([TopicPartition("b", 0), TopicPartition("a", 10), TopicPartition("a", 2)]) == [
        ("a", 2),
        ("a", 10),
        ("b", 0),
    ]
    copy = pickle.loads(pickle.dumps(tp))
    assert copy == tp and type(copy) is TopicPartition
    with pytest.raises(AttributeError):
        tp.topic = "other"  # type: ignore[misc]
    unchecked = pickle.dumps(trusted_topic_partition("orders", -1))  # never made by the package
    with pytest.raises(ValueError, match="partition: must be >= 0"):
        pickle.loads(unchecked)  # unpickling runs the constructor's checks
