"""Exactly-once across a crash: SIGKILL in the middle of a batch, restart at another parallelism."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.query_process import start_query_process, stop_query_process
from integration_tests.spark_helpers import (
    committed_batches,
    offset_log,
    read_positions,
    run_available_now,
    slot_count,
    start_parquet_stream,
    wait_until,
)


def test_sigkill_mid_batch_then_restart_loses_and_duplicates_nothing(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=4)
    produced = produce(
        kafka_bootstrap, topic_name, [Record(value=b"v%d" % i) for i in range(3000)]
    )
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    args = [kafka_bootstrap, topic_name, str(output), str(checkpoint), "2"]
    process = start_query_process("integration_tests.crash_query", args)
    try:
        def in_flight() -> bool:
            assert process.poll() is None, "the query process died on its own"
            planned = len(offset_log(checkpoint)) if (checkpoint / "offsets").exists() else 0
            return committed_batches(checkpoint) >= 2 and planned > committed_batches(checkpoint)

        wait_until(
            in_flight, "a batch planned but not yet committed", timeout_s=180, interval_s=0.1
        )
    finally:
        stop_query_process(process, grace_s=None)
    planned, committed = len(offset_log(checkpoint)), committed_batches(checkpoint)
    assert planned == committed + 1, "the kill must land inside a batch"

    run_available_now(
        start_parquet_stream(
            spark, kafka_bootstrap, topic_name, output, checkpoint, available_now=True,
            parallelism="3",
        )
    )
    assert read_positions(spark, output) == sorted(produced)
    documents = offset_log(checkpoint)
    assert slot_count(documents[max(documents)]) == 3
