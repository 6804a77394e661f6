"""Streaming end to end: readStream from a real broker into a Parquet sink with a checkpoint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from benchmarks.diagnostics.process_memory import command_line, process_tree
from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import (
    OUR_FORMAT,
    committed_batches,
    offset_log,
    run_available_now,
    slots_of,
    start_parquet_stream,
    topic_ids_of,
    wait_until,
)
from kafka_rescalable._gc import SOURCE_RUNNER_MODULE

BASE_MS = 1_763_700_000_000

# Also run on the oldest pyspark line allowed (.ci/pyspark-4.2).
pytestmark = pytest.mark.pyspark_versions


def sample_records(count: int) -> list[Record]:
    """Build records with every field exercised: null keys, tombstones, headers, explicit times."""
    records = []
    for i in range(count):
        headers = (("trace", f"t{i}".encode()), ("n", None)) if i % 3 == 0 else ()
        records.append(
            Record(
                value=None if i % 17 == 0 else f"value-{i}".encode(),
                key=None if i % 5 == 0 else f"key-{i}".encode(),
                headers=headers,
                timestamp_ms=BASE_MS + i * 1000,
                partition=i % 4,
            )
        )
    return records


def test_available_now_reads_every_record_once(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=4)
    records = sample_records(400)
    positions = produce(kafka_bootstrap, topic_name, records)
    expected = {
        (partition, offset): record
        for (partition, offset), record in zip(positions, records, strict=True)
    }

    stream = (
        spark.readStream.format(OUR_FORMAT)
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic_name)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .load()
        .selectExpr("*", "unix_millis(timestamp) AS timestamp_ms")
    )
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    query = (
        stream.writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    run_available_now(query)

    rows = spark.read.parquet(str(output)).collect()
    seen = [(row.partition, row.offset) for row in rows]
    assert len(seen) == len(set(seen)), "a record was read twice"
    assert set(seen) == set(expected)
    for row in rows:
        record = expected[(row.partition, row.offset)]
        assert row.topic == topic_name
        assert row.key == record.key
        assert row.value == record.value
        assert row.timestamp_ms == record.timestamp_ms
        assert row.timestampType == 0
        headers = [(h.key, h.value) for h in row.headers] if row.headers is not None else []
        assert headers == list(record.headers)

    documents = offset_log(checkpoint)
    last = documents[max(documents)]
    assert last["version"] == 4
    assert set(topic_ids_of(last)) == {topic_name}, "the topic's Kafka id is kept with its offsets"
    # Four partitions dealt round-robin to four slots: the topic layout, no slot listed, the
    # topic's id in its entry and so no topicIds section.
    assert last["slots"] == 4, "default parallelism is one slot per partition"
    assert last["topics"] == {
        topic_name: {"id": topic_ids_of(last)[topic_name], "offsets": [100, 100, 100, 100]}
    }
    assert "topicIds" not in last
    assert slots_of(last) == [{(topic_name, p)} for p in range(4)]


def test_new_records_are_read_by_the_next_run(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=3)
    first = produce(kafka_bootstrap, topic_name, [Record(value=b"a%d" % i) for i in range(90)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run(parallelism: str) -> None:
        run_available_now(
            start_parquet_stream(
                spark, kafka_bootstrap, topic_name, output, checkpoint,
                available_now=True, parallelism=parallelism,
            )
        )

    run("2")
    second = produce(kafka_bootstrap, topic_name, [Record(value=b"b%d" % i) for i in range(60)])
    run("3")
    rows = spark.read.parquet(str(output)).select("partition", "offset").collect()
    seen = [(row.partition, row.offset) for row in rows]
    assert sorted(seen) == sorted(first + second)
    last = offset_log(checkpoint)[max(offset_log(checkpoint))]
    assert len(slots_of(last)) == 3 and all(slots_of(last)), "every slot owns a partition"


def test_spark_runs_the_streaming_reader_as_the_module_the_planning_process_checks(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    # The planning process turns its cycle collector off for good only in Spark's runner of the
    # reader, which it tells by the module run as __main__ (connector/_gc.py); this checks that
    # Spark starts it so, on each pyspark line CI runs.
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    produce(kafka_bootstrap, topic_name, [Record(value=b"v%d" % i) for i in range(10)])
    checkpoint = tmp_path / "checkpoint"
    query = start_parquet_stream(spark, kafka_bootstrap, topic_name, tmp_path / "out", checkpoint)
    try:
        wait_until(lambda: committed_batches(checkpoint) >= 1, "the stream's first batch")
        commands = [command_line(pid) or "" for pid in process_tree(os.getpid())]
    finally:
        query.stop()
    wanted = ["-m", SOURCE_RUNNER_MODULE]
    assert any(command.split()[1:3] == wanted for command in commands), (
        f"no process of this test runs python -m {SOURCE_RUNNER_MODULE}: {commands}"
    )
