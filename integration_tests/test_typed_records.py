"""Typed records through the whole source: formats, ``mode`` and the declared schema.

The per-format tests (Avro, Protobuf, JSON, with and without a schema registry) check rows
against what a plain confluent-kafka consumer with the library's deserializers decodes; these
check what every format shares, with the ``string`` format, which needs no schema.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import (
    OUR_FORMAT,
    batch_read,
    run_available_now,
    start_parquet_stream,
)

pytestmark = pytest.mark.integration

BAD_UTF8 = b"\xff\xfe not text"


@pytest.mark.pyspark_versions
def test_string_values_decode_in_batch_and_stream(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    records = [Record(key=f"k{i}".encode(), value=f"välue {i}".encode()) for i in range(20)]
    produce(kafka_bootstrap, topic_name, [*records, Record(key=b"null", value=None)])
    frame = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, valueFormat="string")
    types = dict(frame.dtypes)
    assert types["value"] == "string"
    assert types["key"] == "binary"
    assert "decodeError" not in types
    rows = frame.collect()
    assert sorted((row.key, row.value) for row in rows if row.value is not None) == sorted(
        (record.key, record.value.decode()) for record in records
    )
    assert [row.key for row in rows if row.value is None] == [b"null"]
    query = start_parquet_stream(
        spark, kafka_bootstrap, topic_name, tmp_path / "out", tmp_path / "checkpoint",
        available_now=True, keyFormat="string", valueFormat="string",
    )
    run_available_now(query)
    streamed = spark.read.parquet(str(tmp_path / "out")).collect()
    assert sorted((row.key, row.value or "") for row in streamed) == sorted(
        [(record.key.decode(), record.value.decode()) for record in records] + [("null", "")]
    )


def test_failfast_names_the_record_and_permissive_keeps_the_reason(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    produce(
        kafka_bootstrap,
        topic_name,
        [Record(value=b"fine"), Record(value=BAD_UTF8), Record(value=b"also fine")],
    )
    with pytest.raises(PySparkException) as failed:
        batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, valueFormat="string").collect()
    message = str(failed.value)
    assert f"{topic_name}-0 offset 1" in message
    assert "RecordDecodeError" in message
    assert "PERMISSIVE" in message
    rows = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, valueFormat="string", mode="PERMISSIVE"
    ).collect()
    by_offset = {row.offset: row for row in rows}
    assert [by_offset[o].value for o in range(3)] == ["fine", None, "also fine"]
    assert by_offset[0].decodeError is None and by_offset[2].decodeError is None
    assert by_offset[1].decodeError.startswith("value: UnicodeDecodeError")


def test_a_typed_option_on_the_raw_format_is_refused(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    with pytest.raises(PySparkException, match="valueSchema.*typed formats only"):
        batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, valueSchema="a INT")
