"""The batch and partition log lines, and the logging sink that writes them."""

from __future__ import annotations

import logging

import pytest

from kafka_rescalable.metrics.log_lines import ProgressLog, batch_line, partition_line
from kafka_rescalable.metrics.progress import read_progress
from tests.connector.metrics.progress_documents import (
    END,
    LATEST,
    QUERY_ID,
    our_source,
    progress,
    slots_document,
    spark_kafka_source,
)


def test_the_batch_line_carries_rows_rates_duration_and_backlog() -> None:
    line = batch_line(read_progress(progress(our_source(END, LATEST), batch_id=3)))
    assert line == (
        "query orders_etl batch 3: 100 rows, 18.5 rows/s in, 210.1 rows/s processed, "
        "batch 0.47 s (most in addBatch 0.23 s), backlog 100 records in 3 partitions of "
        "1 topic, most orders-2 (34), 2 reader slots"
    )


def test_the_batch_line_stays_short_at_ten_thousand_partitions() -> None:
    partitions = {(f"topic-{p % 7}", p): p for p in range(10_000)}
    latest = {key: 20_000 for key in partitions}
    line = batch_line(read_progress(progress(our_source(slots_document(partitions), latest))))
    assert len(line) < 250
    assert "backlog 150005000 records in 10000 partitions of 7 topics, most topic-0-0 (20000)" in (
        line
    )


def test_a_partition_line_names_the_partition_and_its_numbers() -> None:
    batch = read_progress(progress(our_source(END, LATEST), batch_id=3))
    (source,) = batch.sources
    assert partition_line(batch, source, source.partitions[2]) == (
        "query orders_etl batch 3 orders-2: read 66, latest 100, backlog 34, slot 0"
    )


def test_partition_lines_name_the_source_when_a_query_has_several() -> None:
    spark_source = spark_kafka_source({("clicks", 0): 1}, {("clicks", 0): 2})
    batch = read_progress(progress(our_source(END, None), spark_source, name=None))
    ours, spark = batch.sources
    assert partition_line(batch, spark, spark.partitions[0]) == (
        f"query {QUERY_ID} batch 1 source 1 clicks-0: read 1, latest 2, backlog 1"
    )
    assert partition_line(batch, ours, ours.partitions[0]).endswith(
        "orders-0: read 67, latest ?, backlog ?, slot 0"
    )


@pytest.fixture
def records() -> list[logging.LogRecord]:
    found: list[logging.LogRecord] = []
    log = logging.getLogger("tests.metrics.progress_log")
    handler = logging.Handler()
    handler.emit = found.append  # type: ignore[method-assign]
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    yield found
    log.removeHandler(handler)


def test_the_progress_log_writes_one_info_line_then_partitions_at_debug(
    records: list[logging.LogRecord],
) -> None:
    sink = ProgressLog(logging.getLogger("tests.metrics.progress_log"))
    batch = read_progress(progress(our_source(END, LATEST)))
    sink.progress(batch)
    assert [r.levelno for r in records] == [logging.INFO] + [logging.DEBUG] * 3
    assert records[0].getMessage() == batch_line(batch)
    assert records[3].getMessage().endswith("orders-2: read 66, latest 100, backlog 34, slot 0")
    records.clear()
    logging.getLogger("tests.metrics.progress_log").setLevel(logging.INFO)
    sink.progress(batch)
    assert [r.levelno for r in records] == [logging.INFO]


def test_a_failed_query_is_a_warning_with_the_errors_first_line(
    records: list[logging.LogRecord],
) -> None:
    sink = ProgressLog(logging.getLogger("tests.metrics.progress_log"))
    sink.terminated(QUERY_ID, "etl", "DataLossError: orders-3 lost\n  at ...")
    sink.terminated(QUERY_ID, "", None)
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (logging.WARNING, "query etl terminated with an error: DataLossError: orders-3 lost"),
        (logging.INFO, f"query {QUERY_ID} terminated"),
    ]
