"""Starting and ending positions by time give the offsets Spark's built-in source gives."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import BUILTIN_FORMAT, OUR_FORMAT, batch_read

T0 = 1_763_700_000_000


@pytest.fixture
def timed_topic(kafka_bootstrap: str, topic_name: str) -> str:
    """3 partitions; partition p holds 100 records at T0 + p*7s + i s."""
    create_topic(kafka_bootstrap, topic_name, partitions=3)
    records = [
        Record(value=b"%d-%d" % (p, i), partition=p, timestamp_ms=T0 + p * 7_000 + i * 1_000)
        for p in range(3)
        for i in range(100)
    ]
    produce(kafka_bootstrap, topic_name, records)
    return topic_name


CASES = [
    {"startingTimestamp": str(T0 + 50_000)},
    {"startingTimestamp": str(T0 + 50_500), "endingTimestamp": str(T0 + 80_000)},
    {"startingOffsetsByTimestamp": {"0": T0 + 10_000, "1": T0, "2": T0 + 99_000}},
    {
        "startingOffsetsByTimestamp": {"0": T0 + 10_000, "1": T0, "2": T0 + 20_000},
        "endingOffsetsByTimestamp": {"0": T0 + 60_000, "1": T0 + 200_000, "2": T0 + 30_000},
    },
]


@pytest.mark.parametrize("case", CASES)
def test_same_rows_as_builtin_source(
    spark: SparkSession, kafka_bootstrap: str, timed_topic: str, case: dict
) -> None:
    options = {
        key: json.dumps({timed_topic: value}) if isinstance(value, dict) else value
        for key, value in case.items()
    }
    ours = batch_read(spark, OUR_FORMAT, kafka_bootstrap, timed_topic, **options)
    theirs = batch_read(spark, BUILTIN_FORMAT, kafka_bootstrap, timed_topic, **options)
    assert ours.count() > 0
    order = ["partition", "offset"]
    assertDataFrameEqual(ours.orderBy(order), theirs.orderBy(order), checkRowOrder=True)


def test_no_record_after_the_time(
    spark: SparkSession, kafka_bootstrap: str, timed_topic: str
) -> None:
    late = str(T0 + 10_000_000)
    with pytest.raises(Exception) as caught:
        batch_read(
            spark, OUR_FORMAT, kafka_bootstrap, timed_topic, startingTimestamp=late
        ).collect()
    assert "Invalid option 'startingTimestamp'" in str(caught.value)
    assert "startingOffsetsByTimestampStrategy" in str(caught.value)
    rows = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, timed_topic,
        startingTimestamp=late, startingOffsetsByTimestampStrategy="latest",
    ).collect()
    assert rows == []


def test_streaming_starts_at_the_time(
    spark: SparkSession, kafka_bootstrap: str, timed_topic: str, tmp_path
) -> None:
    from integration_tests.spark_helpers import (
        read_positions,
        run_available_now,
        start_parquet_stream,
    )

    run_available_now(
        start_parquet_stream(
            spark, kafka_bootstrap, timed_topic, tmp_path / "out", tmp_path / "checkpoint",
            available_now=True, startingTimestamp=str(T0 + 90_000),
        )
    )
    expected = sorted(
        (p, i) for p in range(3) for i in range(100) if T0 + p * 7_000 + i * 1_000 >= T0 + 90_000
    )
    assert read_positions(spark, tmp_path / "out") == expected
