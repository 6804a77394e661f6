"""Conformance: our source returns the rows Spark's built-in Kafka source returns."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import BUILTIN_FORMAT, OUR_FORMAT, batch_read

# Also run on the oldest pyspark line allowed (.ci/pyspark-4.2).
pytestmark = pytest.mark.pyspark_versions


def tricky_records(count: int) -> list[Record]:
    """Null and empty keys and values, repeated and null header values, explicit times."""
    records = []
    for i in range(count):
        key = [None, b"", f"k{i}".encode(), bytes(range(i % 256))][i % 4]
        value = [f"v{i}".encode(), None, b"", b"\x00\xff" * (i % 7)][i % 4 if i % 3 else 0]
        headers = [(), (("a", b"1"),), (("a", b"1"), ("a", None), ("b", b""))][i % 3]
        records.append(
            Record(value=value, key=key, headers=headers, timestamp_ms=1_700_000_000_000 + i)
        )
    return records


def ordered(frame: DataFrame) -> DataFrame:
    return frame.orderBy("topic", "partition", "offset")


@pytest.mark.parametrize("timestamp_type", ["CreateTime", "LogAppendTime"])
def test_batch_rows_equal_builtin_source(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, timestamp_type: str
) -> None:
    create_topic(
        kafka_bootstrap,
        topic_name,
        partitions=3,
        config={"message.timestamp.type": timestamp_type},
    )
    produce(kafka_bootstrap, topic_name, tricky_records(300))
    ours = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, includeHeaders="true")
    theirs = batch_read(spark, BUILTIN_FORMAT, kafka_bootstrap, topic_name, includeHeaders="true")
    assert ours.schema == theirs.schema
    ours_rows = ordered(ours).collect()
    assert len(ours_rows) == 300
    assert {row.timestampType for row in ours_rows} == {0 if timestamp_type == "CreateTime" else 1}
    millis = [int(row.timestamp.timestamp() * 1000) for row in ours_rows]
    if timestamp_type == "CreateTime":
        assert min(millis) == 1_700_000_000_000, "the producer's timestamps are kept"
    else:
        assert min(millis) > 1_700_000_000_000 + 10**9, "the broker's append time replaces them"
    assertDataFrameEqual(ordered(ours), ordered(theirs), checkRowOrder=True)


def test_specific_offsets_and_no_headers_equal_builtin_source(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(
        kafka_bootstrap,
        topic_name,
        [Record(value=b"%d" % i, partition=i % 2) for i in range(100)],
    )
    bounds = {
        "startingOffsets": json.dumps({topic_name: {"0": 5, "1": -2}}),
        "endingOffsets": json.dumps({topic_name: {"0": 40, "1": -1}}),
    }
    ours = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, **bounds)
    theirs = batch_read(spark, BUILTIN_FORMAT, kafka_bootstrap, topic_name, **bounds)
    assert ours.schema == theirs.schema
    assert ours.count() == 35 + 50
    assertDataFrameEqual(ordered(ours), ordered(theirs), checkRowOrder=True)


def test_parallelism_and_min_partitions_do_not_change_rows(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    produce(kafka_bootstrap, topic_name, [Record(value=b"%d" % i) for i in range(500)])
    split = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, parallelism="2", minPartitions="7"
    )
    assert split.rdd.getNumPartitions() == 7
    theirs = batch_read(spark, BUILTIN_FORMAT, kafka_bootstrap, topic_name)
    assertDataFrameEqual(ordered(split), ordered(theirs), checkRowOrder=True)
    capped = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, maxRecordsPerPartition="60"
    )
    assert capped.rdd.getNumPartitions() == 9  # ceil(500 / 60)
    sizes = capped.rdd.glom().map(len).collect()
    assert max(sizes) <= 60 and sum(sizes) == 500
