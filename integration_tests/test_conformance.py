"""Conformance: our source returns the rows Spark's built-in Kafka source returns."""

from __future__ import annotations

import io
import json
import uuid
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import fastavro
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import BUILTIN_FORMAT, OUR_FORMAT, batch_read
from kafka_rescalable.formats.avro.parity import promotion_first, union_names_a_type

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
    capped = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, maxRecordsPerPartition="60")
    assert capped.rdd.getNumPartitions() == 9  # ceil(500 / 60)
    sizes = capped.rdd.glom().map(len).collect()
    assert max(sizes) <= 60 and sum(sizes) == 500


EVERY_TYPE = {
    "type": "record",
    "name": "Everything",
    "namespace": "conformance",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "raw", "type": "bytes"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
        {"name": "fx", "type": {"type": "fixed", "name": "Fx", "size": 3}},
        {
            "name": "dec",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {
            "name": "dec_fixed",
            "type": {
                "type": "fixed",
                "name": "DecFx",
                "size": 9,
                "logicalType": "decimal",
                "precision": 20,
                "scale": 4,
            },
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "local_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "wide", "type": ["int", "long"]},
        {"name": "real", "type": ["null", "float", "double"]},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "Inner",
                "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": ["null", "E"]}],
            },
        },
        {
            "name": "either",
            "type": [
                "null",
                "int",
                "string",
                {"type": "record", "name": "Other", "fields": [{"name": "z", "type": "E"}]},
            ],
        },
        {"name": "xs", "type": {"type": "array", "items": ["null", "long"]}},
        {"name": "m", "type": {"type": "map", "values": "Inner"}},
    ],
}


def _every_type(i: int) -> dict[str, object]:
    base = datetime(2024, 2, 29, 12, 30, tzinfo=timezone.utc)
    return {
        "b": i % 2 == 0,
        "i": -(2**31) + i if i % 3 == 0 else i,
        "l": 2**62 - i,
        "f": i / 4,
        "d": i * 1.1,
        "s": f"zoë {i}",
        "raw": bytes(range(i % 5)),
        "e": "ABC"[i % 3],
        "fx": bytes([i % 256, 1, 2]),
        "dec": Decimal(i * 101).scaleb(-2),
        "dec_fixed": Decimal(-(10**15) - i).scaleb(-4),
        "day": date(2024, 1, 1) + timedelta(days=i),
        "ms": base + timedelta(milliseconds=i),
        "us": base + timedelta(microseconds=i),
        "local_ms": base.replace(tzinfo=None) + timedelta(milliseconds=i),
        "local_us": base.replace(tzinfo=None) + timedelta(microseconds=i),
        "id": str(uuid.UUID(int=i)),
        "note": None if i % 4 else f"n{i}",
        "wide": 2**40 + i if i % 2 else i,
        "real": [None, 0.5, 1.5e300][i % 3],
        "inner": {"x": i, "y": None if i % 2 else "B"},
        "either": [None, i, f"s{i}", {"z": "C"}][i % 4],
        "xs": [i, None, -i][: i % 4],
        "m": {f"k{j}": {"x": j, "y": None} for j in range(i % 3)},
    }


def test_avro_rows_equal_builtin_source_with_from_avro(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    """Every Avro type we map, decoded by our source against Spark's own ``from_avro``.

    The test session decodes on the native core where it is installed (CI installs it);
    ``tests/connector/formats/test_native_avro.py`` holds it to the pure-Python decoders.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    # A schema the native core decodes itself (not one it hands to the slow path).
    assert not union_names_a_type(EVERY_TYPE) and not promotion_first(EVERY_TYPE)
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    schema = fastavro.parse_schema(EVERY_TYPE)
    values = []
    for i in range(40):
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, _every_type(i))
        values.append(Record(value=out.getvalue(), partition=i % 2))
    values.append(Record(value=None, partition=0))
    produce(kafka_bootstrap, topic_name, values)
    text = json.dumps(EVERY_TYPE)
    ours = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, valueFormat="avro", valueSchema=text
    ).select("partition", "offset", "value")
    theirs = batch_read(spark, BUILTIN_FORMAT, kafka_bootstrap, topic_name).select(
        "partition", "offset", from_avro(F.col("value"), text).alias("value")
    )
    assert ours.count() == 41
    assertDataFrameEqual(
        ours.orderBy("partition", "offset"),
        theirs.orderBy("partition", "offset"),
        checkRowOrder=True,
    )
