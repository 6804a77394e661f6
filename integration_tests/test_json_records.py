"""JSON values end to end: a DDL schema, a registry's JSON Schema, and malformed records.

Expected rows come from a plain confluent-kafka consumer and ``json.loads`` (or the library's
``JSONDeserializer`` for registry-framed records), compared record by record at each
``(partition, offset)``; the DDL case is also checked against Spark's own ``from_json``, and so
are records ``from_json`` reads in its own ways (partial structs, Spark's date forms, integers
out of range...), with the few it reads that the source refuses on purpose
(docs/reference/json-vs-from_json.md).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DecimalType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from integration_tests.kafka_helpers import Record, create_topic, produce, read_all
from integration_tests.spark_helpers import OUR_FORMAT, batch_read
from kafka_rescalable.formats.codec import WriterColumn, codec_for
from kafka_rescalable.formats.options import (
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
)

pytestmark = pytest.mark.integration

DDL = (
    "id BIGINT, name STRING, tags ARRAY<STRING>, at TIMESTAMP, amount DECIMAL(10, 2), "
    "customer STRUCT<email: STRING, address: STRUCT<city: STRING, zip: INT>>, "
    "attrs MAP<STRING, DOUBLE>"
)
START = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
CLICK_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Click",
    "type": "object",
    "properties": {
        "user": {"type": "string"},
        "count": {"type": "integer"},
        "at": {"type": "string", "format": "date-time"},
        "pages": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["user", "count"],
}


def _order(i: int) -> dict[str, Any]:
    order: dict[str, Any] = {
        "id": i,
        "name": f"order ü{i}",
        "tags": [f"t{j}" for j in range(i % 3)],
        "at": (START + timedelta(seconds=i, milliseconds=i)).isoformat().replace("+00:00", "Z"),
        "amount": f"{i}.{i % 100:02d}",
        "customer": {"email": f"c{i}@x.org", "address": {"city": f"c{i % 4}", "zip": 1000 + i}},
        "attrs": {"w": i / 4},
        "unknown": "ignored",
    }
    if i % 5 == 0:
        del order["customer"]  # a missing field is null
    if i % 7 == 0:
        order["tags"] = None
    return order


def _expected(value: bytes | None) -> tuple[Any, ...] | None:
    """One consumed value as the row the source must give, from json.loads."""
    if value is None:
        return None
    order = json.loads(value)
    customer = order.get("customer")
    at = datetime.fromisoformat(order["at"])
    return (
        order["id"],
        order["name"],
        order["tags"],
        (at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1),
        Decimal(order["amount"]),
        None if customer is None else customer["email"],
        None if customer is None else customer["address"]["city"],
        None if customer is None else customer["address"]["zip"],
        order["attrs"],
    )


def _flat(frame: Any) -> dict[tuple[int, int], tuple[Any, ...] | None]:
    rows = frame.select(
        "partition",
        "offset",
        F.col("value").isNull().alias("null"),
        "value.id",
        "value.name",
        "value.tags",
        F.unix_micros("value.at").alias("at"),
        "value.amount",
        "value.customer.email",
        "value.customer.address.city",
        "value.customer.address.zip",
        "value.attrs",
    ).collect()
    return {(r[0], r[1]): None if r[2] else tuple(r[3:]) for r in rows}


def test_json_with_a_ddl_schema_equals_a_plain_consumer_and_from_json(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    records = [Record(value=json.dumps(_order(i)).encode()) for i in range(40)]
    produce(kafka_bootstrap, topic_name, [*records, Record(key=b"tombstone", value=None)])
    frame = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, valueFormat="json", valueSchema=DDL
    )
    assert frame.schema["value"].dataType.simpleString() == (
        "struct<id:bigint,name:string,tags:array<string>,at:timestamp,amount:decimal(10,2),"
        "customer:struct<email:string,address:struct<city:string,zip:int>>,"
        "attrs:map<string,double>>"
    )
    expected = {
        record.position: _expected(record.value) for record in read_all(kafka_bootstrap, topic_name)
    }
    assert len(expected) == 41
    assert _flat(frame) == expected
    raw = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name)
    spark_json = raw.select(
        "partition", "offset", F.from_json(F.col("value").cast("string"), DDL).alias("value")
    )
    assert _flat(spark_json) == expected


WIDE = (
    "id BIGINT, n INT, b TINYINT, d DATE, t TIMESTAMP, x DECIMAL(10, 2), f DOUBLE, s STRING, "
    "c STRUCT<x: BIGINT, y: STRING>, a ARRAY<STRUCT<x: BIGINT, y: STRING>>, l ARRAY<BIGINT>, "
    "m MAP<STRING, BIGINT>"
)
AGREED = [
    '{"id": "12", "s": "n"}',  # from_json keeps the other fields
    "null",  # a struct of nulls (FAILFAST: refused)
    "",  # null, no failure
    "nope",
    '[{"id": 1}]',
    '{"id": 9223372036854775808, "s": "x"}',
    '{"n": 3000000000, "id": 1}',
    '{"n": -2147483648}',
    '{"d": "2024-1-2"}',
    '{"d": "2024"}',
    '{"d": " 2024-01-02T03:04:05+05:00"}',
    '{"d": "2024-02-30"}',
    '{"d": "2024-01-02GMT"}',
    '{"t": "2024-01-02 3:4:5"}',
    '{"t": "2024-01-02T03:04:05+0530"}',
    '{"t": "2024-01-02T03:04:05 PST"}',
    '{"t": "2024-01-02T03:04:05GMT+1"}',
    '{"t": "2024-01-02T03:04:05.123456789Z"}',
    '{"t": 1700000000}',
    '{"t": 1700000000.5}',
    '{"t": "yesterday"}',
    '{"x": 1.235}',
    '{"x": "1,234.5"}',
    '{"x": " 1.5"}',
    '{"x": 123456789.1}',
    '{"f": "NaN"}',
    '{"f": "+INF"}',
    '{"f": "INF"}',
    '{"f": -0}',
    '{"f": 1e400}',
    '{"x": 1e-99999999999999999999, "id": 1}',  # beyond any Decimal: that field null
    '{"f": 1e-99999999999999999999, "s": 1e-99999999999999999999, "q": 1e-99999999999999999999}',
    '{"f": -1e99999999999999999999, "n": 1e-99999999999999999999}',
    '{"s": 12345678.9}',
    '{"s": {"a": [1.5e10, 2, "\\u2028"]}}',
    '{"s": true}',
    '{"c": {"x": "1", "y": "a"}, "s": "k"}',
    '{"a": [{"x": "1", "y": "a"}, {"x": 2, "y": "b"}]}',
    '{"a": [1], "s": "k"}',
    '{"l": [1, "2"], "s": "k"}',
    '{"m": {"a": 1, "b": "x"}, "s": "k"}',
    '{\n  "id": 3,\n  "s": "pretty"\n}',
    '{"id": 1, "id": 2}',
    '\ufeff{"id": 1}',
]
REFUSED = [  # from_json reads these without a failure; see docs/reference/json-vs-from_json.md
    '{"b": 128}',  # wrapped around to -128
    '{"d": "123"}',  # 123 days after 1970-01-01
    '{"d": "-5"}',
    '{"f": +INF}',  # not JSON
    '{"s": "\\ud800"}',  # a lone surrogate, read as "?"
    "{'id': 1}",  # single quotes
    '{"id": 1} trailing',  # what follows the object is ignored
    '{"t": "03:04:05"}',  # a time of the day the query runs
]


def _clean(i: int) -> str:
    return json.dumps(
        {
            "id": i,
            "n": -i,
            "b": i % 100,
            "d": f"2024-03-{1 + i % 28:02d}",
            "t": f"2024-03-01T12:00:{i % 60:02d}.{i:03d}Z",
            "x": f"{i}.{i % 100:02d}",
            "f": i / 8,
            "s": f"ü{i}",
            "c": {"x": i, "y": "c"},
            "a": [{"x": i, "y": "a"}],
            "l": list(range(i % 4)),
        }
    )


def test_json_reads_records_as_spark_from_json_reads_them(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    odd = [Record(value=text.encode(), partition=0) for text in AGREED + REFUSED]
    clean = [Record(value=_clean(i).encode(), partition=1) for i in range(50)]  # read in bulk
    produce(kafka_bootstrap, topic_name, odd + clean)
    ours = batch_read(
        spark,
        OUR_FORMAT,
        kafka_bootstrap,
        topic_name,
        valueFormat="json",
        valueSchema=WIDE,
        mode="PERMISSIVE",
    ).select("partition", "offset", F.to_json("value"), F.col("decodeError").isNotNull())
    spark_json = F.from_json(F.col("value").cast("string"), f"{WIDE}, _corrupt_record STRING")
    raw = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name).select(
        "partition",
        "offset",
        F.to_json(spark_json.dropFields("_corrupt_record")),
        spark_json.getField("_corrupt_record").isNotNull(),
    )
    read = {(r[0], r[1]): (r[2], r[3]) for r in ours.collect()}
    expected = {(r[0], r[1]): (r[2], r[3] is True) for r in raw.collect()}
    assert len(read) == len(expected) == len(AGREED) + len(REFUSED) + 50
    refused = {(0, len(AGREED) + i) for i in range(len(REFUSED))}
    assert {key: read[key] for key in read if key not in refused} == {
        key: expected[key] for key in expected if key not in refused
    }
    for key in sorted(refused):
        assert read[key][1] and not expected[key][1], REFUSED[key[1] - len(AGREED)]
    assert sum(failed for _, failed in read.values()) > 20  # the comparison covers failures


def test_registry_framed_json_reads_with_the_subjects_latest_schema(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, schema_registry_url: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    client = SchemaRegistryClient({"url": schema_registry_url})
    serializer = JSONSerializer(json.dumps(CLICK_SCHEMA), client)
    context = SerializationContext(topic_name, MessageField.VALUE)
    clicks = [
        {
            "user": f"u{i}",
            "count": i,
            "at": f"2024-03-01T12:00:{i:02d}.5+01:00",
            "pages": [f"/p{j}" for j in range(i % 3)],
        }
        for i in range(12)
    ]
    clicks[3] = {"user": "u3", "count": 3}  # optional fields left out
    produce(kafka_bootstrap, topic_name, [Record(value=serializer(c, context)) for c in clicks])
    frame = batch_read(
        spark,
        OUR_FORMAT,
        kafka_bootstrap,
        topic_name,
        valueFormat="json",
        **{"schema.registry.url": schema_registry_url},
    )
    assert frame.schema["value"].dataType.simpleString() == (
        "struct<user:string,count:bigint,at:timestamp,pages:array<string>>"
    )
    deserializer = JSONDeserializer(None, schema_registry_client=client)
    expected = {}
    for record in read_all(kafka_bootstrap, topic_name):
        click = deserializer(record.value, context)
        at = click.get("at")
        micros = (
            None
            if at is None
            else (datetime.fromisoformat(at) - datetime(1970, 1, 1, tzinfo=UTC))
            // timedelta(microseconds=1)
        )
        expected[record.position] = (click["user"], click["count"], micros, click.get("pages"))
    rows = frame.select(
        "partition",
        "offset",
        "value.user",
        "value.count",
        F.unix_micros("value.at"),
        "value.pages",
    ).collect()
    assert {(r[0], r[1]): tuple(r[2:]) for r in rows} == expected
    assert len(expected) == 12


def test_a_malformed_record_fails_naming_it_or_is_kept_with_its_reason(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    values = [b'{"id": 1}', b'{"id": 2', b'{"id": "three"}', b'{"id": 4, "x": [1]}']
    produce(kafka_bootstrap, topic_name, [Record(value=v) for v in values])
    options = {"valueFormat": "json", "valueSchema": "id BIGINT"}
    with pytest.raises(PySparkException) as failed:
        batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, **options).collect()
    message = str(failed.value)
    assert f"{topic_name}-0 offset 1" in message
    assert "RecordDecodeError" in message and "not JSON" in message
    rows = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, mode="PERMISSIVE", **options
    ).collect()
    by_offset = {row.offset: row for row in rows}
    assert [None if by_offset[o].value is None else by_offset[o].value.id for o in range(4)] == [
        1,
        None,
        None,
        4,
    ]
    assert by_offset[0].decodeError is None and by_offset[3].decodeError is None
    assert by_offset[1].decodeError.startswith("value: not JSON")
    assert by_offset[2].decodeError == 'value: id: expected an integer, got string "three"'


def test_a_misspelt_ddl_schema_fails_naming_the_option_when_the_dataframe_is_defined(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    with pytest.raises(PySparkException) as failed:
        batch_read(
            spark,
            OUR_FORMAT,
            kafka_bootstrap,
            topic_name,
            valueFormat="json",
            valueSchema="id BIGIN, name",
        )
    message = str(failed.value)
    assert "Invalid option 'valueSchema': expected a type, found 'bigin'" in message


def test_the_registry_encoder_writes_what_json_deserializer_and_our_decoder_read(
    topic_name: str, schema_registry_url: str
) -> None:
    spark_type = StructType(
        [
            StructField("id", LongType(), False),
            StructField("at", TimestampType()),
            StructField("amount", DecimalType(10, 2)),
            StructField("tags", ArrayType(StringType())),
        ]
    )
    registry = RegistrySettings((("url", schema_registry_url),))
    payload = PayloadOptions("value", PayloadFormat.JSON, framing=Framing.CONFLUENT)
    codec = codec_for(PayloadFormat.JSON)
    encode = codec.encoder(WriterColumn(payload, spark_type, registry, topic_name))
    row = {"id": 7, "at": START, "amount": Decimal("12.50"), "tags": ["a", None]}
    framed = encode(row)
    client = SchemaRegistryClient({"url": schema_registry_url})
    latest = client.get_latest_version(f"{topic_name}-value")  # registered, derived from the type
    assert framed[0] == 0 and int.from_bytes(framed[1:5], "big") == latest.schema_id
    context = SerializationContext(topic_name, MessageField.VALUE)
    assert JSONDeserializer(None, schema_registry_client=client)(framed, context) == {
        "id": 7,
        "at": "2024-03-01T12:00:00.000Z",
        "amount": 12.5,
        "tags": ["a", None],
    }
    reader = codec.resolve(payload, registry, [topic_name])
    assert reader.schema_id == latest.schema_id
    decoded = codec.decoder(reader, reader.spark_type, registry)(framed)
    assert decoded == {"id": 7, "at": START, "amount": 12.5, "tags": ["a", None]}
