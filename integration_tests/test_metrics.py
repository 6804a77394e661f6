"""Metrics of a running query: scraped from the real HTTP endpoint, and in the log.

The query reads a four-partition topic capped at 20 records a batch, one batch a second, so
a backlog remains for many seconds while the endpoint is scraped. What the endpoint says
about a batch is checked against Kafka (the topic's end offsets, fetched from the broker; no
record is produced once the query starts) and against Spark's own progress of that batch.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from prometheus_client.parser import text_string_to_metric_families
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import kafka_stream, next_offsets, wait_until
from kafka_rescalable.metrics import publish

PARTITIONS = 4

Series = dict[str, dict[tuple[tuple[str, str], ...], float]]


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """Each partition's end offset, as the broker reports it now."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = {KafkaTopicPartition(topic, p): OffsetSpec.latest() for p in range(PARTITIONS)}
    return {tp.partition: f.result().offset for tp, f in admin.list_offsets(request).items()}


def scrape(port: int) -> Series:
    """Every sample the endpoint serves, by name, keyed by its sorted labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    found: Series = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def of_query(series: dict[tuple[tuple[str, str], ...], float], query_id: str) -> dict:
    """Return the samples of one query, keyed by their labels other than query and query id."""
    return {
        tuple((k, v) for k, v in key if k not in {"query", "query_id"}): value
        for key, value in series.items()
        if dict(key)["query_id"] == query_id
    }


def progress_end(query: StreamingQuery, batch_id: int) -> dict[int, int]:
    """Return the next offset to read per partition after ``batch_id``, from Spark's progress."""
    (progress,) = [p for p in query.recentProgress if p.batchId == batch_id]
    end = progress.sources[0].endOffset
    document = json.loads(end) if isinstance(end, str) else end
    return next_offsets(document)


@pytest.fixture
def metrics_log() -> Iterator[list[logging.LogRecord]]:
    """Every record of the ``kafka_rescalable.metrics`` logger, DEBUG included, during the test."""
    records: list[logging.LogRecord] = []
    log = logging.getLogger("kafka_rescalable.metrics")
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append  # type: ignore[method-assign]
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    yield records
    log.removeHandler(handler)
    log.setLevel(logging.NOTSET)


def test_backlog_is_scraped_per_partition_and_logged(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_name: str,
    metrics_log: list[logging.LogRecord],
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=PARTITIONS)
    produce(
        kafka_bootstrap,
        topic_name,
        [Record(value=b"v", partition=i % PARTITIONS) for i in range(400)],
    )
    kafka_end = end_offsets(kafka_bootstrap, topic_name)
    assert kafka_end == {p: 100 for p in range(PARTITIONS)}
    listener = publish(spark, port=0, host="127.0.0.1", log=True)
    port = listener.port
    assert port
    query = (
        kafka_stream(spark, kafka_bootstrap, topic_name, maxOffsetsPerTrigger="20")
        .writeStream.format("noop")
        .queryName(f"metrics_{topic_name[2:10]}")
        .trigger(processingTime="1 second")
        .start()
    )
    query_id = str(query.id)
    try:
        scraped: Series = {}

        def a_batch_with_backlog_is_served() -> bool:
            nonlocal scraped
            scraped = scrape(port)
            backlog = of_query(scraped.get("kafka_rescalable_topic_backlog_records", {}), query_id)
            return sum(backlog.values()) > 0

        wait_until(a_batch_with_backlog_is_served, "a batch with a backlog on the endpoint", 120)
        (batch_id,) = of_query(scraped["kafka_rescalable_batch_id"], query_id).values()
        read = progress_end(query, int(batch_id))
        expected = {p: kafka_end[p] - read[p] for p in range(PARTITIONS)}
        assert sum(expected.values()) > 0

        def per_partition(name: str) -> dict[int, float]:
            found = of_query(scraped[name], query_id)
            assert {dict(key)["topic"] for key in found} == {topic_name}
            return {int(dict(key)["partition"]): value for key, value in found.items()}

        assert per_partition("kafka_rescalable_partition_backlog_records") == expected
        assert per_partition("kafka_rescalable_partition_read_offset") == read
        assert per_partition("kafka_rescalable_partition_latest_offset") == kafka_end
        topic_backlog = of_query(scraped["kafka_rescalable_topic_backlog_records"], query_id)
        assert topic_backlog == {(("source", "0"), ("topic", topic_name)): sum(expected.values())}
        assert of_query(scraped["kafka_rescalable_query_active"], query_id) == {(): 1.0}
        durations = of_query(scraped["kafka_rescalable_batch_duration_seconds_count"], query_id)
        assert durations[()] >= batch_id + 1

        # The log says the same about the same batch: one summary, one line per partition.
        label = f"query {query.name} batch {int(batch_id)}"
        summary = [r.getMessage() for r in metrics_log if r.getMessage().startswith(label + ":")]
        assert len(summary) == 1
        assert f"backlog {sum(expected.values())} records in {PARTITIONS} partitions" in summary[0]
        for p in range(PARTITIONS):
            line = (
                f"{label} {topic_name}-{p}: read {read[p]}, latest {kafka_end[p]}, "
                f"backlog {expected[p]}, slot "
            )
            assert [r.levelno for r in metrics_log if r.getMessage().startswith(line)] == [
                logging.DEBUG
            ]
    finally:
        query.stop()
    wait_until(
        lambda: of_query(scrape(port)["kafka_rescalable_query_active"], query_id) == {(): 0.0},
        "the stopped query marked inactive",
        60,
        0.2,
    )
    listener.stop()
    with pytest.raises(urllib.error.URLError):
        scrape(port)
