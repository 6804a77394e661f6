"""Offset gaps: compacted topics and transactions must read to the end without hanging.

Ranges are cut into many sub-ranges (``minPartitions``) so that range ends fall inside gaps:
a reader that waits for the record at ``until - 1`` would wait forever there.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from confluent_kafka import Producer
from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import Record, create_topic, produce, read_all
from integration_tests.spark_helpers import (
    OUR_FORMAT,
    batch_read,
    run_available_now,
    start_parquet_stream,
    wait_until,
)

COMPACTED = {
    "cleanup.policy": "compact",
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.001",
    "min.compaction.lag.ms": "0",
    "delete.retention.ms": "100",
}


def positions_and_values(rows) -> list[tuple[int, int, bytes | None]]:
    return sorted((row.partition, row.offset, row.value) for row in rows)


def stream_all(spark: SparkSession, bootstrap: str, topic: str, tmp_path: Path, **options: str):
    """Every row an AvailableNow run of our source writes to Parquet."""
    query = start_parquet_stream(
        spark, bootstrap, topic, tmp_path / "out", tmp_path / "checkpoint",
        available_now=True, **options,
    )
    run_available_now(query)
    return spark.read.parquet(str(tmp_path / "out")).collect()


def test_compacted_topic_reads_to_the_end(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1, config=COMPACTED)
    produced = 0
    for round_number in range(6):
        # Shared keys get compacted away; one unique key in four survives, leaving gaps.
        records = [
            Record(
                key=b"u%d-%d" % (round_number, i) if i % 4 == 0 else b"k%d" % (i % 10),
                value=b"r%d-%d" % (round_number, i),
            )
            for i in range(40)
        ]
        produced += len(produce(kafka_bootstrap, topic_name, records))
        time.sleep(0.3)  # let segment.ms pass so the next append rolls a segment
    wait_until(
        lambda: len(read_all(kafka_bootstrap, topic_name)) < produced * 2 // 3,
        "the log cleaner to compact the topic",
        timeout_s=120,
    )
    expected = [(r.partition, r.offset, r.value) for r in read_all(kafka_bootstrap, topic_name)]
    offsets = [offset for _, offset, _ in expected]
    assert any(
        b - a > 1 for a, b in zip(offsets, offsets[1:], strict=False)
    ), "the topic must have gaps"

    rows = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, minPartitions="13").collect()
    assert positions_and_values(rows) == expected
    streamed = stream_all(spark, kafka_bootstrap, topic_name, tmp_path, parallelism="5")
    assert positions_and_values(streamed) == expected


def transactional_producer(bootstrap: str) -> Producer:
    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"tx-{uuid.uuid4().hex}"}
    )
    producer.init_transactions(30)
    return producer


def send_transaction(producer: Producer, topic: str, values: list[bytes], commit: bool | None):
    """Send ``values`` in one transaction: commit, abort, or (``None``) leave it open."""
    producer.begin_transaction()
    for value in values:
        producer.produce(topic, value=value, partition=0)
    producer.flush(30)
    if commit is True:
        producer.commit_transaction(30)
    elif commit is False:
        producer.abort_transaction(30)


def test_aborted_and_open_transactions_do_not_hang_read_committed(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    producer = transactional_producer(kafka_bootstrap)
    send_transaction(producer, topic_name, [b"c1-%d" % i for i in range(50)], commit=True)
    send_transaction(producer, topic_name, [b"a1-%d" % i for i in range(30)], commit=False)
    send_transaction(producer, topic_name, [b"c2-%d" % i for i in range(20)], commit=True)
    send_transaction(producer, topic_name, [b"a2-%d" % i for i in range(25)], commit=False)
    committed = read_all(kafka_bootstrap, topic_name, isolation_level="read_committed")
    assert [r.value for r in committed] == [b"c1-%d" % i for i in range(50)] + [
        b"c2-%d" % i for i in range(20)
    ]
    expected = [(r.partition, r.offset, r.value) for r in committed]

    # The log now ends with aborted records and an abort marker; add an open transaction
    # on top, so the last stable offset stays below the high watermark while we read.
    open_producer = transactional_producer(kafka_bootstrap)
    send_transaction(open_producer, topic_name, [b"open-%d" % i for i in range(10)], commit=None)
    try:
        rows = batch_read(
            spark,
            OUR_FORMAT,
            kafka_bootstrap,
            topic_name,
            minPartitions="9",
            **{"kafka.isolation.level": "read_committed"},
        ).collect()
        assert positions_and_values(rows) == expected
        streamed = stream_all(
            spark,
            kafka_bootstrap,
            topic_name,
            tmp_path,
            parallelism="4",
            **{"kafka.isolation.level": "read_committed"},
        )
        assert positions_and_values(streamed) == expected
    finally:
        open_producer.abort_transaction(30)

    uncommitted = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name).collect()
    values = {row.value for row in uncommitted}
    assert b"a1-0" in values and b"c2-19" in values, "read_uncommitted sees aborted records too"
