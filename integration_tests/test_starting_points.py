"""Starting where another consumer stopped: a consumer group's offsets, a built-in checkpoint.

Both ways a team moves to this source: from a consumer-group application
(``startingOffsetsFromGroup``) and from a query on Spark's built-in ``kafka`` source (the
inspector's ``--starting-offsets``), each checked for no record lost or read twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient
from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import (
    BUILTIN_FORMAT,
    OUR_FORMAT,
    batch_read,
    committed_batches,
    next_offsets,
    read_positions,
    run_available_now,
    slots_of,
    start_parquet_stream,
)
from kafka_rescalable.config.options import parse_options
from kafka_rescalable.driver.stream_reader import KafkaStreamReader
from kafka_rescalable.executor.tasks import read_input_partition

INSPECT = Path(sys.executable).parent / "kafka-rescalable-inspect"  # the console script


def commit(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commit ``offsets`` (partition -> next offset) for ``group``, as its application would."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    try:
        consumer.commit(
            offsets=[KafkaTopicPartition(topic, p, o) for p, o in offsets.items()],
            asynchronous=False,
        )
    finally:
        consumer.close()


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    """Return the group's committed offsets (partitions without one left out)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        asked = [KafkaTopicPartition(topic, p) for p in range(partitions)]
        return {tp.partition: tp.offset for tp in consumer.committed(asked, 30) if tp.offset >= 0}
    finally:
        consumer.close()


def spread(partitions: int, per_partition: int, tag: str) -> list[Record]:
    return [
        Record(value=f"{tag}{i}".encode(), partition=p)
        for i in range(per_partition)
        for p in range(partitions)
    ]


def test_a_stream_starts_at_the_groups_offsets_then_follows_its_checkpoint_not_the_group(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=3)
    produce(kafka_bootstrap, topic_name, spread(3, 10, "a"))
    group = f"legacy-{uuid.uuid4().hex}"
    commit(kafka_bootstrap, group, topic_name, {0: 4, 1: 7})  # partition 2: never committed
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run() -> None:
        run_available_now(
            start_parquet_stream(
                spark,
                kafka_bootstrap,
                topic_name,
                output,
                checkpoint,
                available_now=True,
                startingOffsetsFromGroup=group,
                # The fallback need only name the partition the group has no offset for.
                startingOffsets=json.dumps({topic_name: {"2": 3}}),
            )
        )

    run()
    first = read_positions(spark, output)
    expected = [(0, o) for o in range(4, 10)] + [(1, o) for o in range(7, 10)]
    assert first == expected + [(2, o) for o in range(3, 10)]

    produce(kafka_bootstrap, topic_name, spread(3, 5, "b"))
    moved = {0: 0, 1: 12, 2: 1}  # behind and ahead of the checkpoint: both would show
    commit(kafka_bootstrap, group, topic_name, moved)
    run()
    later = [(p, o) for p in range(3) for o in range(10, 15)]
    assert read_positions(spark, output) == sorted(first + later)
    # The source read the group and never committed to it.
    assert committed(kafka_bootstrap, group, topic_name, 3) == moved


# How often Spark asks for the initial offset is the engine's behaviour: check it on every line.
@pytest.mark.pyspark_versions
def test_spark_asking_twice_for_the_initial_offset_gets_one_position(
    kafka_bootstrap: str, topic_name: str
) -> None:
    # Spark asks when it plans a new query's first batch and again when it runs it; the
    # group's offsets and the partitions' ends move in between here.
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(kafka_bootstrap, topic_name, spread(2, 5, "a"))
    group = f"legacy-{uuid.uuid4().hex}"
    commit(kafka_bootstrap, group, topic_name, {0: 2})
    options = {
        "kafka.bootstrap.servers": kafka_bootstrap,
        "subscribe": topic_name,
        "startingOffsetsFromGroup": group,  # partition 1 falls back to latest
    }
    reader = KafkaStreamReader(parse_options(options, "stream"), read_input_partition)
    try:
        first = reader.initialOffset()
        assert slots_of(first) == [{(topic_name, 0)}, {(topic_name, 1)}]
        assert next_offsets(first) == {0: 2, 1: 5}
        commit(kafka_bootstrap, group, topic_name, {0: 4, 1: 1})
        produce(kafka_bootstrap, topic_name, spread(2, 3, "b"))
        assert reader.initialOffset() == first
    finally:
        reader.stop()


def test_a_batch_read_starts_at_the_group_and_refuses_offsets_out_of_range(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(kafka_bootstrap, topic_name, spread(2, 10, "a"))
    group = f"legacy-{uuid.uuid4().hex}"

    def positions(**options: str) -> list[tuple[int, int]]:
        frame = batch_read(
            spark, OUR_FORMAT, kafka_bootstrap, topic_name, startingOffsetsFromGroup=group,
            **options,
        )
        return sorted((row.partition, row.offset) for row in frame.collect())

    commit(kafka_bootstrap, group, topic_name, {0: 6})
    assert positions() == [(0, o) for o in range(6, 10)] + [(1, o) for o in range(10)]

    # Past the end, as after the topic was re-created: an error, or the earliest offset.
    commit(kafka_bootstrap, group, topic_name, {0: 50})
    with pytest.raises(Exception) as caught:
        positions()
    text = str(caught.value)
    assert "DataLossError" in text
    assert f"{topic_name}-0: committed offset 50, but the partition ends at 10" in text
    assert f"consumer group '{group}'" in text and "failOnDataLoss" in text
    assert positions(failOnDataLoss="false")[:10] == [(0, o) for o in range(10)]

    # Below the earliest offset: records retention (here delete_records) removed.
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    deleted = admin.delete_records([KafkaTopicPartition(topic_name, 1, 4)])
    for future in deleted.values():
        future.result(30)
    commit(kafka_bootstrap, group, topic_name, {0: 8, 1: 2})
    with pytest.raises(Exception) as caught:
        positions()
    assert f"{topic_name}-1: committed offset 2, but its records start at 4 now" in str(
        caught.value
    )
    assert positions(failOnDataLoss="false") == [(0, 8), (0, 9)] + [(1, o) for o in range(4, 10)]


def test_the_inspector_continues_a_builtin_query_with_no_record_lost_or_read_twice(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produced = produce(kafka_bootstrap, topic_name, spread(2, 15, "a"))
    theirs, their_checkpoint = tmp_path / "builtin", tmp_path / "builtin-checkpoint"
    builtin = start_parquet_stream(
        spark,
        kafka_bootstrap,
        topic_name,
        theirs,
        their_checkpoint,
        available_now=True,
        fmt=BUILTIN_FORMAT,
        maxOffsetsPerTrigger="12",
    )
    run_available_now(builtin)
    assert committed_batches(their_checkpoint) >= 3, "the built-in query read in one batch"
    produced += produce(kafka_bootstrap, topic_name, spread(2, 10, "b"))

    done = subprocess.run(
        [str(INSPECT), str(their_checkpoint), "--starting-offsets"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip()
    assert json.loads(printed) == {topic_name: {"0": 15, "1": 15}}

    ours = tmp_path / "ours"
    run_available_now(
        start_parquet_stream(
            spark,
            kafka_bootstrap,
            topic_name,
            ours,
            tmp_path / "our-checkpoint",
            available_now=True,
            startingOffsets=printed,
        )
    )
    both = read_positions(spark, theirs) + read_positions(spark, ours)
    assert sorted(both) == sorted(produced)
