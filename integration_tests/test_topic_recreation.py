"""A topic deleted and re-created between two runs of a query is always noticed.

The offset document keeps each topic's Kafka id. When the re-created topic already holds more
records than the checkpointed offsets (so offsets alone look fine), the query still fails under
``failOnDataLoss=true``; under ``false`` it reads the new topic from its earliest offset,
every new record once. A checkpoint written before ids were kept (version 1) resumes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import (
    Record,
    create_topic,
    delete_topic,
    produce,
    wait_for_topic,
)
from integration_tests.spark_helpers import (
    offset_log,
    read_positions,
    run_available_now,
    start_parquet_stream,
)


def recreate(bootstrap: str, topic: str, partitions: int) -> None:
    """Delete ``topic`` and create it again under the same name (a new Kafka topic id)."""
    delete_topic(bootstrap, topic)
    create_topic(bootstrap, topic, partitions=partitions)
    wait_for_topic(bootstrap, topic, partitions)


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_recreated_topic_refilled_past_the_checkpoint(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_name: str,
    tmp_path: Path,
    fail_on_data_loss: str,
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(kafka_bootstrap, topic_name, [Record(value=b"old%d" % i) for i in range(100)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run() -> None:
        run_available_now(
            start_parquet_stream(
                spark, kafka_bootstrap, topic_name, output, checkpoint,
                available_now=True, failOnDataLoss=fail_on_data_loss,
            )
        )

    run()
    first_ids = offset_log(checkpoint)[max(offset_log(checkpoint))]["topicIds"]
    recreate(kafka_bootstrap, topic_name, partitions=2)
    # Three times as many records as were read: every checkpointed offset is now below the
    # new topic's end, so only the topic id can tell the topic is not the same.
    fresh = produce(kafka_bootstrap, topic_name, [Record(value=b"new%d" % i) for i in range(300)])
    read_before = len(read_positions(spark, output))
    if fail_on_data_loss == "true":
        with pytest.raises(Exception) as caught:  # awaitTermination re-raises the failure
            run()
        text = str(caught.value)
        assert f"topic {topic_name} (id {first_ids[topic_name]} ->" in text
        assert "deleted and re-created" in text
        assert "failOnDataLoss" in text
        assert len(read_positions(spark, output)) == read_before, "nothing of the new topic"
        return
    run()
    new_rows = spark.read.parquet(str(output)).where("CAST(value AS STRING) LIKE 'new%'")
    positions = sorted((r.partition, r.offset) for r in new_rows.collect())
    assert positions == sorted(fresh), "every record of the new topic once, from its start"
    last = offset_log(checkpoint)[max(offset_log(checkpoint))]
    assert last["topicIds"][topic_name] != first_ids[topic_name]


def test_recreated_topic_with_fewer_records_restarts_at_its_earliest(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    produce(kafka_bootstrap, topic_name, [Record(value=b"old%d" % i) for i in range(50)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run() -> None:
        run_available_now(
            start_parquet_stream(
                spark, kafka_bootstrap, topic_name, output, checkpoint,
                available_now=True, failOnDataLoss="false",
            )
        )

    run()
    recreate(kafka_bootstrap, topic_name, partitions=1)
    fresh = produce(kafka_bootstrap, topic_name, [Record(value=b"new%d" % i) for i in range(10)])
    run()
    new_rows = spark.read.parquet(str(output)).where("CAST(value AS STRING) LIKE 'new%'")
    assert sorted((r.partition, r.offset) for r in new_rows.collect()) == sorted(fresh)


def test_a_version_1_checkpoint_resumes_and_learns_topic_ids(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    first = produce(kafka_bootstrap, topic_name, [Record(value=b"a%d" % i) for i in range(40)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run() -> None:
        run_available_now(
            start_parquet_stream(
                spark, kafka_bootstrap, topic_name, output, checkpoint, available_now=True
            )
        )

    run()
    # Rewrite the last offset entry as an older connector wrote it: version 1, no ids.
    last_id = max(offset_log(checkpoint))
    path = checkpoint / "offsets" / str(last_id)
    lines = path.read_text().splitlines()
    document = json.loads(lines[-1])
    lines[-1] = json.dumps({"version": 1, "slots": document["slots"]})
    path.write_text("\n".join(lines) + "\n")
    later = produce(kafka_bootstrap, topic_name, [Record(value=b"b%d" % i) for i in range(20)])
    run()
    assert read_positions(spark, output) == sorted(first + later)
    newest = offset_log(checkpoint)[max(offset_log(checkpoint))]
    assert newest["version"] == 2 and topic_name in newest["topicIds"]


def test_an_end_gone_back_with_the_same_topic_id_goes_on_from_the_new_end(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    first = produce(kafka_bootstrap, topic_name, [Record(value=b"a%d" % i) for i in range(50)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run() -> None:
        run_available_now(
            start_parquet_stream(
                spark, kafka_bootstrap, topic_name, output, checkpoint,
                available_now=True, failOnDataLoss="false",
            )
        )

    run()
    # As after an unclean leader election: the checkpoint is past the log's end, the topic
    # (its id) the same. It must not be read again from its start.
    last_id = max(offset_log(checkpoint))
    path = checkpoint / "offsets" / str(last_id)
    lines = path.read_text().splitlines()
    document = json.loads(lines[-1])
    document["slots"][0][topic_name]["0"] = 80
    lines[-1] = json.dumps(document)
    path.write_text("\n".join(lines) + "\n")
    run()
    later = produce(kafka_bootstrap, topic_name, [Record(value=b"b%d" % i) for i in range(5)])
    run()
    assert read_positions(spark, output) == sorted(first + later), "nothing read twice"
