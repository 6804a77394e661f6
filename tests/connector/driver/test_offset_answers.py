"""Reading confluent-kafka's offset answers: the C-level path and the checks around it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from confluent_kafka import KafkaError
from confluent_kafka import TopicPartition as KafkaTopicPartition

from kafka_rescalable.driver.offset_lookups import _offsets
from kafka_rescalable.errors import KafkaMetadataError
from kafka_rescalable.state import TopicPartition


def _asked(count: int) -> dict[TopicPartition, int]:
    return {TopicPartition(t, p): -1 for t in ("a", "b") for p in range(count)}


def test_every_asked_partition_gets_its_offset_keyed_by_our_partition_type() -> None:
    asked = _asked(300)
    found = [KafkaTopicPartition(tp.topic, tp.partition, 7 * tp.partition) for tp in asked]
    found.reverse()  # answers come in any order
    offsets = _offsets(found, asked)
    assert offsets == {tp: 7 * tp.partition for tp in asked}
    assert {type(tp) for tp in offsets} == {TopicPartition}


def test_answers_in_the_asked_order_are_keyed_by_the_asked_objects_themselves() -> None:
    asked = _asked(300)
    found = [KafkaTopicPartition(tp.topic, tp.partition, 7 * tp.partition) for tp in asked]
    offsets = _offsets(found, asked)
    assert offsets == {tp: 7 * tp.partition for tp in asked}
    assert all(key is tp for key, tp in zip(offsets, asked, strict=True))


def test_an_answer_swapped_within_the_asked_order_is_still_read_by_its_partition() -> None:
    asked = _asked(3)
    found = [KafkaTopicPartition(tp.topic, tp.partition, tp.partition) for tp in asked]
    found[1], found[4] = found[4], found[1]  # a-1 and b-1: same partition, other topic
    assert _offsets(found, asked) == {tp: tp.partition for tp in asked}


def test_a_collection_of_partitions_is_asked_as_well_as_a_mapping() -> None:
    asked = list(_asked(3))
    found = [KafkaTopicPartition(tp.topic, tp.partition, 1) for tp in asked]
    assert _offsets(found, asked) == dict.fromkeys(asked, 1)


def test_a_partition_without_an_answer_is_named() -> None:
    asked = _asked(3)
    found = [KafkaTopicPartition(tp.topic, tp.partition, 1) for tp in asked]
    del found[4]
    with pytest.raises(KafkaMetadataError, match="no offset came back for .*b-1"):
        _offsets(found, asked)


def test_an_answer_twice_does_not_stand_for_a_missing_one() -> None:
    asked = _asked(2)
    found = [KafkaTopicPartition(tp.topic, tp.partition, 1) for tp in asked]
    found[0] = KafkaTopicPartition("b", 1, 1)
    with pytest.raises(KafkaMetadataError, match="no offset came back for .*a-0"):
        _offsets(found, asked)


def test_a_failed_partition_is_named_with_kafkas_error() -> None:
    asked = _asked(2)
    found = [
        SimpleNamespace(topic=tp.topic, partition=tp.partition, offset=-1, error=None)
        for tp in asked
    ]
    found[1].error = KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION)
    with pytest.raises(KafkaMetadataError, match="a-1: "):
        _offsets(found, asked)
