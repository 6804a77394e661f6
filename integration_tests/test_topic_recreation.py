"""A topic deleted and re-created between two runs of a query is always noticed.

The offset document keeps each topic's Kafka id. When the re-created topic already holds more
records than the checkpointed offsets (so offsets alone look fine), the query still fails under
``failOnDataLoss=true``; under ``false`` it reads the new topic from its earliest offset,
every new record once. A checkpoint written before ids were kept (version 1) resumes, as do
those of versions 2 and 3, which kept them in a section of their own.
"""

from __future__ import annotations

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
    rewrite_last_offset,
    run_available_now,
    slot_layout,
    start_parquet_stream,
    topic_ids_of,
)
from kafka_rescalable.state import SlotsDocument
from kafka_rescalable.state.topic_layout import topic_layout


def run_to_end(
    spark: SparkSession, bootstrap: str, topic: str, tmp_path: Path, **options: str
) -> None:
    """Run one AvailableNow query of ``topic`` on the test's checkpoint, to its end."""
    run_available_now(
        start_parquet_stream(
            spark, bootstrap, topic, tmp_path / "out", tmp_path / "checkpoint",
            available_now=True, **options,
        )
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
        run_to_end(
            spark, kafka_bootstrap, topic_name, tmp_path, failOnDataLoss=fail_on_data_loss
        )

    run()
    first_ids = topic_ids_of(offset_log(checkpoint)[max(offset_log(checkpoint))])
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
    assert topic_ids_of(last)[topic_name] != first_ids[topic_name]


def test_recreated_topic_with_fewer_records_restarts_at_its_earliest(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    produce(kafka_bootstrap, topic_name, [Record(value=b"old%d" % i) for i in range(50)])
    output = tmp_path / "out"

    def run() -> None:
        run_to_end(spark, kafka_bootstrap, topic_name, tmp_path, failOnDataLoss="false")

    run()
    recreate(kafka_bootstrap, topic_name, partitions=1)
    fresh = produce(kafka_bootstrap, topic_name, [Record(value=b"new%d" % i) for i in range(10)])
    run()
    new_rows = spark.read.parquet(str(output)).where("CAST(value AS STRING) LIKE 'new%'")
    assert sorted((r.partition, r.offset) for r in new_rows.collect()) == sorted(fresh)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_version_1_2_or_3_checkpoint_resumes_exactly_and_is_written_as_version_4(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path, version: int
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    first = produce(kafka_bootstrap, topic_name, [Record(value=b"a%d" % i) for i in range(40)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run() -> None:
        run_to_end(spark, kafka_bootstrap, topic_name, tmp_path)

    run()
    ids = topic_ids_of(offset_log(checkpoint)[max(offset_log(checkpoint))])

    # Rewrite the last offset entry as an older connector wrote it: in version 3 the topic
    # layout with the ids in topicIds; before it, one map per slot, and in version 1 no ids.
    def older(document: dict) -> dict:
        if version == 3:
            state = SlotsDocument.from_dict(document).state
            topics = topic_layout(state)
            return {"version": 3, "slots": state.num_slots, "topics": topics, "topicIds": ids}
        old = {"version": version, "slots": slot_layout(document)}
        return {**old, "topicIds": ids} if version == 2 else old

    rewrite_last_offset(checkpoint, older)
    later = produce(kafka_bootstrap, topic_name, [Record(value=b"b%d" % i) for i in range(20)])
    run()
    assert read_positions(spark, output) == sorted(first + later)
    newest = offset_log(checkpoint)[max(offset_log(checkpoint))]
    assert newest["version"] == 4 and topic_ids_of(newest) == ids, "v1 learns the ids again"


def test_an_end_gone_back_with_the_same_topic_id_goes_on_from_the_new_end(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    first = produce(kafka_bootstrap, topic_name, [Record(value=b"a%d" % i) for i in range(50)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run() -> None:
        run_to_end(spark, kafka_bootstrap, topic_name, tmp_path, failOnDataLoss="false")

    run()
    # As after an unclean leader election: the checkpoint is past the log's end, the topic
    # (its id) the same. It must not be read again from its start.
    def past_the_end(document: dict) -> dict:
        # One partition, one slot, written here in the slot layout; the topic's id kept.
        slots = [{topic_name: {"0": 80}}]
        return {"version": 4, "slots": slots, "topicIds": topic_ids_of(document)}

    rewrite_last_offset(checkpoint, past_the_end)
    run()
    later = produce(kafka_bootstrap, topic_name, [Record(value=b"b%d" % i) for i in range(5)])
    run()
    assert read_positions(spark, output) == sorted(first + later), "nothing read twice"
