"""Refusals a running query must give clearly and in bounded time.

Bad options fail where the DataFrame is defined (``load()``), a subscribed topic that does not
exist fails after ``missingTopicTimeout``, and an unreachable cluster after
``fetchOffset.retryTimeout``, each with a message naming the problem.
"""

from __future__ import annotations

import socket

import pytest
from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import create_topic
from integration_tests.spark_helpers import OUR_FORMAT

# Options wrong in a batch read and a stream alike, the option named, words of the message.
LOAD_CASES = [
    ({"subscribe": "{t}", "maxOffsetsPerTrigger": "0"}, "maxOffsetsPerTrigger", "positive"),
    ({"subscribe": "{t}", "kafka.bootstrap.servers": ""}, "kafka.bootstrap.servers", "must be set"),
    ({"subscribe": "{t}", "failOnDataLoss": "maybe"}, "failOnDataLoss", "'true' or 'false'"),
    ({"subscribe": "{t}", "parallelism": "-3"}, "parallelism", "positive integer"),
    ({"subscribe": "{t}", "kafka.fetch.min.bytez": "1"}, "kafka.fetch.min.bytez", "librdkafka"),
    ({"subscribe": "{t}", "fetchOffset.retryTimeout": "0s"},
     "fetchOffset.retryTimeout", "positive"),
    ({"subscribe": "{t}", "missingTopicTimeout": "soon"}, "missingTopicTimeout", "duration"),
    ({"subscribe": "{t}", "startingOffset": "earliest"}, "startingoffset", "startingOffsets"),
    ({}, "subscribe/subscribePattern/assign", "exactly one"),
]


def reader(spark: SparkSession, mode: str, bootstrap: str, options: dict[str, str]):
    """``spark.read`` or ``spark.readStream`` of our format with ``options``."""
    base = spark.read if mode == "batch" else spark.readStream
    return base.format(OUR_FORMAT).option("kafka.bootstrap.servers", bootstrap).options(**options)


@pytest.mark.parametrize("mode", ["batch", "stream"])
@pytest.mark.parametrize(("options", "option", "words"), LOAD_CASES)
def test_a_bad_option_fails_at_load(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_name: str,
    mode: str,
    options: dict[str, str],
    option: str,
    words: str,
) -> None:
    filled = {key: value.format(t=topic_name) for key, value in options.items()}
    with pytest.raises(Exception) as caught:
        reader(spark, mode, kafka_bootstrap, filled).load()  # no collect(), no start()
    text = str(caught.value)
    assert f"Invalid option '{option}'" in text
    assert words in text


def test_a_batch_only_option_in_a_stream_fails_with_our_message(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    frame = reader(
        spark, "stream", kafka_bootstrap, {"subscribe": topic_name, "endingOffsets": "latest"}
    ).load()
    query = frame.writeStream.format("noop").start()
    try:
        with pytest.raises(Exception) as caught:
            query.awaitTermination(120)
    finally:
        query.stop()
    text = str(caught.value)
    assert "Invalid option 'endingOffsets'" in text
    assert "only valid for batch" in text
    assert "UnboundLocalError" not in text


def failure_of_stream(spark: SparkSession, bootstrap: str, **options: str) -> str:
    """Start a stream into noop, wait for it to fail, and return the failure's text."""
    frame = reader(spark, "stream", bootstrap, options).load()
    query = frame.writeStream.format("noop").trigger(processingTime="500 milliseconds").start()
    try:
        with pytest.raises(Exception) as caught:
            query.awaitTermination(180)
            raise AssertionError("the query should have failed")  # stopped without an error
    finally:
        query.stop()
    return str(caught.value)


def test_a_subscribed_topic_that_never_exists_fails_the_stream_naming_it(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    typo = f"{topic_name}-typo"
    text = failure_of_stream(
        spark, kafka_bootstrap, subscribe=typo, missingTopicTimeout="3s"
    )
    assert "MissingTopicError" in text
    assert f"subscribed topic {typo} has not existed" in text
    assert "missingTopicTimeout" in text


def test_a_topic_created_within_the_timeout_is_read(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path
) -> None:
    from integration_tests.kafka_helpers import Record, produce
    from integration_tests.spark_helpers import read_positions, start_parquet_stream, wait_until

    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    query = start_parquet_stream(
        spark, kafka_bootstrap, topic_name, output, checkpoint, missingTopicTimeout="5m"
    )
    try:
        wait_until(lambda: query.lastProgress is not None, "a first trigger")
        create_topic(kafka_bootstrap, topic_name, partitions=1)
        positions = produce(kafka_bootstrap, topic_name, [Record(value=b"v")] * 5)
        wait_until(
            lambda: output.exists() and any(output.glob("*.parquet"))
            and len(read_positions(spark, output)) == 5,
            "the topic's records",
        )
        assert query.exception() is None
    finally:
        query.stop()
    assert read_positions(spark, output) == sorted(positions)


def free_port() -> int:
    """Return a loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_cluster_fails_the_stream_naming_the_servers(
    spark: SparkSession, topic_name: str
) -> None:
    nowhere = f"127.0.0.1:{free_port()}"
    text = failure_of_stream(
        spark, nowhere, subscribe=topic_name, **{"fetchOffset.retryTimeout": "5s"}
    )
    assert "KafkaMetadataError" in text
    assert "could not describe topics" in text  # subscribe's first lookup
    assert f"'kafka.bootstrap.servers' ({nowhere})" in text
    assert "fetchOffset.retryTimeout" in text


def test_a_corrupt_checkpoint_offset_is_refused_with_what_to_do(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path
) -> None:

    from integration_tests.kafka_helpers import Record, produce
    from integration_tests.spark_helpers import (
        rewrite_last_offset,
        run_available_now,
        start_parquet_stream,
    )

    create_topic(kafka_bootstrap, topic_name, partitions=1)
    produce(kafka_bootstrap, topic_name, [Record(value=b"v")] * 5)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def start():
        return start_parquet_stream(
            spark, kafka_bootstrap, topic_name, output, checkpoint, available_now=True
        )

    run_available_now(start())

    def not_an_offset(document: dict) -> dict:
        # One partition in one slot: written in the topic layout, the shorter here (the
        # topic is named once, its id in its entry).
        document["topics"][topic_name]["offsets"][0] = "five"  # valid JSON, not an offset
        return document

    rewrite_last_offset(checkpoint, not_an_offset)
    produce(kafka_bootstrap, topic_name, [Record(value=b"w")])
    with pytest.raises(Exception) as caught:
        start().awaitTermination(120)
    text = str(caught.value)
    assert "CheckpointOffsetError" in text
    assert f"topics['{topic_name}']['offsets'][0]: offset must be an integer" in text
    assert "python -m kafka_rescalable.inspect <checkpoint>" in text
    assert "new checkpoint directory" in text


def test_an_unreachable_cluster_logs_a_few_lines_not_a_flood(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import logging

    from kafka_rescalable.config.options import SubscribeTopics, parse_options
    from kafka_rescalable.driver.kafka_metadata import KafkaMetadata
    from kafka_rescalable.errors import KafkaMetadataError
    from kafka_rescalable.kafka_clients import librdkafka_logger

    nowhere = f"127.0.0.1:{free_port()}"
    options = parse_options(
        {
            "kafka.bootstrap.servers": nowhere,
            "subscribe": "t",
            "fetchOffset.retryTimeout": "4s",
        },
        "stream",
    )
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler = Keep()
    librdkafka_logger.addHandler(handler)
    try:
        with KafkaMetadata(options) as kafka, pytest.raises(KafkaMetadataError) as caught:
            kafka.partitions(SubscribeTopics(("t",)))
    finally:
        librdkafka_logger.removeHandler(handler)
    assert nowhere in str(caught.value)
    refused = [line for line in lines if "Connection refused" in line]
    assert refused, "librdkafka's lines reach the connector's logger"
    # librdkafka alone printed some 60 lines a second here; the same line passes once per
    # 30 s window (per client, and a retry may replace the client).
    assert len(refused) <= 10
    printed = capfd.readouterr().err.splitlines()
    # Only this test's address: a client another failed test left alive (its traceback holds
    # it) may still print its own retries here.
    raw = [line for line in printed if line.startswith("%") and nowhere in line]
    assert raw == [], "librdkafka printed to stderr past the connector's logger"
