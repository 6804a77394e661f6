"""Deleted topics and retention, with and without failOnDataLoss.

Under failOnDataLoss they are an error; otherwise a warning and clean removal.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import Record, create_topic, delete_topic, produce
from integration_tests.spark_helpers import (
    OUR_FORMAT,
    batch_read,
    offset_log,
    run_available_now,
    slots_of,
    start_parquet_stream,
    wait_until,
)


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_deleted_topic(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path,
    fail_on_data_loss: str,
) -> None:
    kept, doomed = f"{topic_name}-kept", f"{topic_name}-doomed"
    create_topic(kafka_bootstrap, kept, partitions=2)
    create_topic(kafka_bootstrap, doomed, partitions=2)
    first = produce(kafka_bootstrap, kept, [Record(value=b"k%d" % i) for i in range(20)])
    produce(kafka_bootstrap, doomed, [Record(value=b"d%d" % i) for i in range(20)])
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run() -> None:
        run_available_now(
            start_parquet_stream(
                spark, kafka_bootstrap, f"{kept},{doomed}", output, checkpoint,
                available_now=True, failOnDataLoss=fail_on_data_loss,
            )
        )

    run()
    delete_topic(kafka_bootstrap, doomed)
    later = produce(kafka_bootstrap, kept, [Record(value=b"k2-%d" % i) for i in range(10)])
    if fail_on_data_loss == "true":
        with pytest.raises(Exception) as caught:  # awaitTermination re-raises the failure
            run()
        text = str(caught.value)
        assert f"{doomed}-0, {doomed}-1 no longer exist" in text
        assert "failOnDataLoss" in text
        return
    run()
    documents = offset_log(checkpoint)
    owned = set().union(*slots_of(documents[max(documents)]))
    assert owned == {(kept, 0), (kept, 1)}, "the deleted topic left the slots"
    kept_rows = spark.read.parquet(str(output)).where(f"topic = '{kept}'")
    positions = sorted((r.partition, r.offset) for r in kept_rows.collect())
    assert positions == sorted(first + later)


def earliest_offset(bootstrap: str, topic: str) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = {KafkaTopicPartition(topic, 0): OffsetSpec.earliest()}
    return next(iter(admin.list_offsets(request).values())).result().offset


def test_offsets_deleted_by_retention(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(
        kafka_bootstrap, topic_name, partitions=1,
        config={"retention.ms": "60000", "segment.ms": "100"},
    )
    old = int(time.time() * 1000) - 3_600_000
    produce(
        kafka_bootstrap, topic_name, [Record(value=b"old", timestamp_ms=old) for _ in range(50)]
    )
    time.sleep(0.3)  # the next append rolls the segment, which retention can then delete
    fresh = produce(kafka_bootstrap, topic_name, [Record(value=b"new%d" % i) for i in range(10)])
    wait_until(lambda: earliest_offset(kafka_bootstrap, topic_name) >= 50, "retention")

    from_zero = {"startingOffsets": json.dumps({topic_name: {"0": 0}})}
    with pytest.raises(Exception) as caught:
        batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, **from_zero).collect()
    assert (
        f"{topic_name}-0: offsets [0, 50) were deleted before they were read"
        in str(caught.value)
    )

    rows = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, failOnDataLoss="false", **from_zero
    ).collect()
    assert sorted((r.partition, r.offset) for r in rows) == sorted(fresh)
