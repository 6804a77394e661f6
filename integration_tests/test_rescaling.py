"""Rescaling: one checkpoint read at changing parallelism, while data keeps arriving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions
from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import BackgroundProducer, Record, create_topic, produce
from integration_tests.spark_helpers import (
    BUILTIN_FORMAT,
    committed_batches,
    offset_log,
    read_positions,
    run_available_now,
    slot_count,
    slots_of,
    start_parquet_stream,
    wait_until,
)

# Also run on the oldest pyspark line allowed (.ci/pyspark-4.2).
pytestmark = pytest.mark.pyspark_versions


def test_scale_out_and_in_across_restarts(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=8)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    all_partitions = {(topic_name, p) for p in range(8)}
    with BackgroundProducer(kafka_bootstrap, topic_name, partitions=8) as producer:
        for parallelism in (2, 5, 1, 8):
            before = committed_batches(checkpoint)
            query = start_parquet_stream(
                spark, kafka_bootstrap, topic_name, output, checkpoint,
                parallelism=str(parallelism),
            )
            try:
                wait_until(
                    lambda before=before, query=query: committed_batches(checkpoint) >= before + 2
                    or query.exception() is not None,
                    f"two batches at parallelism {parallelism}",
                )
                assert query.exception() is None, query.exception()
            finally:
                query.stop()
            documents = offset_log(checkpoint)
            slots = slots_of(documents[max(documents)])
            assert len(slots) == parallelism
            assert all(slots), f"an idle slot at parallelism {parallelism}: {slots}"
            assert set().union(*slots) == all_partitions
            assert sum(len(s) for s in slots) == 8, "a partition is in two slots"
            assert max(map(len, slots)) - min(map(len, slots)) <= 1
        produced = producer.stop()
    # Drain what was produced after the last stop, at yet another parallelism.
    run_available_now(
        start_parquet_stream(
            spark, kafka_bootstrap, topic_name, output, checkpoint, available_now=True,
            parallelism="3",
        )
    )
    assert len(produced) > 1000
    assert read_positions(spark, output) == produced


def test_partitions_added_mid_stream_are_read_from_their_first_record(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    first = produce(kafka_bootstrap, topic_name, [Record(value=b"a%d" % i) for i in range(50)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    query = start_parquet_stream(
        spark, kafka_bootstrap, topic_name, output, checkpoint, parallelism="3"
    )
    try:
        wait_until(lambda: committed_batches(checkpoint) >= 1, "the first batch")
        admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
        admin.create_partitions([NewPartitions(topic_name, 4)])[topic_name].result(30)
        later = produce(
            kafka_bootstrap,
            topic_name,
            [Record(value=b"b%d" % i, partition=i % 4) for i in range(80)],
        )
        expected = sorted(first + later)
        wait_until(
            lambda: query.exception() is not None
            or (output.exists() and len(read_positions(spark, output)) >= len(expected)),
            "the records of the new partitions",
        )
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    positions = read_positions(spark, output)
    assert positions == expected
    assert (2, 0) in positions and (3, 0) in positions, "new partitions read from offset 0"
    last = offset_log(checkpoint)[max(offset_log(checkpoint))]
    assert set().union(*slots_of(last)) == {(topic_name, p) for p in range(4)}
    assert all(slots_of(last)), "the new partitions went to the emptier slots"


def test_new_topic_matching_the_pattern_joins(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    first_topic, later_topic = f"{topic_name}-a", f"{topic_name}-b"
    create_topic(kafka_bootstrap, first_topic, partitions=2)
    produce(kafka_bootstrap, first_topic, [Record(value=b"a%d" % i) for i in range(20)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    reader = (
        spark.readStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribePattern", f"{topic_name}-.*")
        .option("startingOffsets", "earliest")
        .load()
    )
    query = (
        reader.writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        wait_until(lambda: committed_batches(checkpoint) >= 1, "the first batch")
        create_topic(kafka_bootstrap, later_topic, partitions=3)
        produce(kafka_bootstrap, later_topic, [Record(value=b"b%d" % i) for i in range(30)])

        def later_topic_read() -> bool:
            assert query.exception() is None, query.exception()
            if not output.exists():
                return False
            rows = spark.read.parquet(str(output)).where(f"topic = '{later_topic}'").count()
            return rows == 30

        wait_until(later_topic_read, "the new topic's records")
    finally:
        query.stop()
    documents = offset_log(checkpoint)
    owned = set().union(*slots_of(documents[max(documents)]))
    assert owned == {(first_topic, p) for p in range(2)} | {(later_topic, p) for p in range(3)}
    assert slot_count(documents[max(documents)]) == 5, "one slot per partition by default"


def test_checkpoint_of_builtin_source_is_refused(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(kafka_bootstrap, topic_name, [Record(value=b"%d" % i) for i in range(20)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    builtin = (
        spark.readStream.format(BUILTIN_FORMAT)
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic_name)
        .option("startingOffsets", "earliest")
        .load()
        .writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    run_available_now(builtin)
    produce(kafka_bootstrap, topic_name, [Record(value=b"more")])
    ours = start_parquet_stream(
        spark, kafka_bootstrap, topic_name, output, checkpoint, available_now=True
    )
    with pytest.raises(Exception) as caught:
        ours.awaitTermination(120)
    text = str(caught.value)
    assert "Spark's built-in Kafka source" in text
    assert "new checkpoint" in text


def test_checkpoint_is_readable_at_another_parallelism(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=6)
    produced = produce(kafka_bootstrap, topic_name, [Record(value=b"%d" % i) for i in range(120)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    run_available_now(
        start_parquet_stream(
            spark, kafka_bootstrap, topic_name, output, checkpoint, available_now=True,
            parallelism="4",
        )
    )
    produced += produce(kafka_bootstrap, topic_name, [Record(value=b"x%d" % i) for i in range(60)])
    run_available_now(
        start_parquet_stream(
            spark, kafka_bootstrap, topic_name, output, checkpoint, available_now=True,
            parallelism="2",
        )
    )
    documents = offset_log(checkpoint)
    first, last = documents[min(documents)], documents[max(documents)]
    assert slot_count(first) == 4 and slot_count(last) == 2
    # Scale-in merges whole slots: partitions that shared a slot at 4 still share one at 2.
    merged = slots_of(last)
    for slot in slots_of(first):
        assert any(slot <= bigger for bigger in merged), json.dumps(documents)
    assert read_positions(spark, output) == sorted(produced)
