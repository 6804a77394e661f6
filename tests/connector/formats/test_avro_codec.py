"""The ``avro`` codec without Kafka: resolve, decode into Arrow's values, encode back."""

from __future__ import annotations

import io
import json
import uuid
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DecimalType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafka_rescalable.errors import InvalidOptionError, PayloadDecodeError
from kafka_rescalable.formats.avro_codec import CODEC, _build_decoder, _parse, _parsed
from kafka_rescalable.formats.codec import WriterColumn
from kafka_rescalable.formats.options import Framing, PayloadFormat, PayloadOptions
from kafka_rescalable.formats.registry import frame
from tests.connector.formats.avro_batches import PATHS, batch, decode_on, plan

UTC = timezone.utc

ORDER: dict[str, Any] = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "ok", "type": "boolean"},
        {"name": "qty", "type": "int"},
        {"name": "weight", "type": "float"},
        {"name": "total", "type": "double"},
        {"name": "customer", "type": "string"},
        {"name": "blob", "type": "bytes"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "SENT"]}},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 4}},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {
            "name": "tax",
            "type": {
                "type": "fixed",
                "name": "Tax",
                "size": 8,
                "logicalType": "decimal",
                "precision": 12,
                "scale": 3,
            },
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {
            "name": "address",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Address",
                    "fields": [
                        {"name": "city", "type": "string"},
                        {"name": "zip", "type": ["null", "int"]},
                    ],
                },
            ],
        },
        {
            "name": "lines",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Line",
                    "fields": [{"name": "sku", "type": "string"}, {"name": "n", "type": "int"}],
                },
            },
        },
        {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
        {"name": "either", "type": ["null", "int", "string", "Address"]},
        {"name": "wide", "type": ["int", "long"]},
    ],
}

REF = uuid.UUID("12345678-1234-5678-1234-567812345678")
FULL: dict[str, Any] = {
    "id": 7,
    "ok": True,
    "qty": -3,
    "weight": 0.5,
    "total": 12.25,
    "customer": "Zoë",
    "blob": b"\x00\xff",
    "status": "SENT",
    "digest": b"abcd",
    "price": Decimal("123.45"),
    "tax": Decimal("-0.125"),
    "day": date(2024, 2, 29),
    "at_ms": datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
    "at_us": datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
    "local": datetime(2024, 1, 2, 3, 4, 5, 678901),
    "ref": str(REF),
    "clock": 3_723_004,
    "note": None,
    "address": {"city": "Lyon", "zip": None},
    "lines": [{"sku": "a", "n": 1}, {"sku": "b", "n": 2}],
    "attrs": {"x": 1, "y": None},
    "either": "two",
    "wide": 2**40,
}


def _payload(
    schema: Any = ORDER, framing: Framing = Framing.NONE, column: str = "value"
) -> PayloadOptions:
    text = schema if isinstance(schema, str) else json.dumps(schema)
    return PayloadOptions(column, PayloadFormat.AVRO, schema=text, framing=framing)  # type: ignore[arg-type]


def _write(schema: Any, value: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), value)
    return out.getvalue()


def _decode_to_arrow(
    schema: Any, values: list[Any], framing: Framing = Framing.NONE, path: str = "fallback"
) -> list[Any]:
    """Decode ``values`` written with ``schema`` as a source batch would be, on ``path``."""
    payloads = [_write(schema, value) for value in values]
    if framing is Framing.CONFLUENT:
        payloads = [frame(9, payload) for payload in payloads]
    decoded = decode_on(path, plan(schema, framing), batch(payloads))
    return decoded.column(1).to_pylist()


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest) -> str:
    """Each decoding path: the native core, and the pure-Python decoders."""
    return str(request.param)


def test_the_reader_schema_is_its_spark_type_as_ddl() -> None:
    reader = CODEC.resolve(_payload(), None, ["orders"])
    assert reader.definition == json.dumps(ORDER)
    assert reader.schema_id is None
    assert isinstance(reader.spark_type, StructType)
    assert reader.spark_ddl.startswith("STRUCT<`id`: BIGINT NOT NULL, `ok`: BOOLEAN NOT NULL")
    assert "`either`: STRUCT<`member0`: INT, `member1`: STRING, `member2`: STRUCT<" in (
        reader.spark_ddl
    )


@pytest.mark.parametrize("framing", [Framing.NONE, Framing.CONFLUENT])
def test_every_type_decodes_into_the_arrow_column(framing: Framing, path: str) -> None:
    (row,) = _decode_to_arrow(ORDER, [FULL], framing, path)
    expected = dict(FULL)
    expected["attrs"] = [("x", 1), ("y", None)]  # a map column reads back as pairs
    expected["either"] = {"member0": None, "member1": "two", "member2": None}
    assert row == expected


def test_struct_unions_tell_their_members_apart(path: str) -> None:
    values = [
        dict(FULL, either=None),
        dict(FULL, either=5),
        dict(FULL, either={"city": "Oslo", "zip": 150}),
        dict(FULL, note="n", address=None, lines=[], attrs={}),
    ]
    rows = _decode_to_arrow(ORDER, values, path=path)
    assert [row["either"] for row in rows] == [
        None,
        {"member0": 5, "member1": None, "member2": None},
        {"member0": None, "member1": None, "member2": {"city": "Oslo", "zip": 150}},
        {"member0": None, "member1": "two", "member2": None},
    ]
    assert (rows[3]["note"], rows[3]["address"], rows[3]["lines"], rows[3]["attrs"]) == (
        "n",
        None,
        [],
        [],
    )


def test_unions_inside_arrays_and_maps_and_named_members(path: str) -> None:
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "xs", "type": {"type": "array", "items": ["long", "string"]}},
            {
                "name": "m",
                "type": {
                    "type": "map",
                    "values": [
                        {"type": "enum", "name": "E", "symbols": ["A"]},
                        {"type": "fixed", "name": "F", "size": 2},
                        {"type": "array", "items": "int"},
                    ],
                },
            },
            {
                "name": "maybe",
                "type": [
                    "null",
                    {"type": "record", "name": "In", "fields": [{"name": "v", "type": "int"}]},
                ],
            },
        ],
    }
    (row,) = _decode_to_arrow(
        schema,
        [{"xs": [1, "a"], "m": {"e": "A", "f": b"xy", "l": [1]}, "maybe": {"v": 3}}],
        path=path,
    )
    assert row == {
        "xs": [{"member0": 1, "member1": None}, {"member0": None, "member1": "a"}],
        "m": [
            ("e", {"member0": "A", "member1": None, "member2": None}),
            ("f", {"member0": None, "member1": b"xy", "member2": None}),
            ("l", {"member0": None, "member1": None, "member2": [1]}),
        ],
        "maybe": {"v": 3},
    }


def test_a_primitive_schema_is_a_scalar_column() -> None:
    reader = CODEC.resolve(_payload('"string"'), None, ["t"])
    assert (reader.spark_ddl, reader.spark_type) == ("STRING", StringType())
    decode = CODEC.decoder(reader, StringType(), None)
    assert decode(_write("string", "héllo")) == "héllo"
    nullable = CODEC.resolve(_payload(["null", "long"]), None, ["t"])
    assert nullable.spark_type == LongType()


def test_schema_evolution_resolves_each_writer_to_the_reader() -> None:
    v1 = {
        "type": "record",
        "name": "Order",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "channel", "type": "string", "default": "web"},
        ],
    }
    v2 = {
        "type": "record",
        "name": "Order",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "coupon", "type": ["null", "string"], "default": None},
        ],
    }
    reader_text = json.dumps(
        {
            "type": "record",
            "name": "Order",
            "fields": [
                {"name": "id", "type": "long"},
                {"name": "channel", "type": "string", "default": "web"},
                {"name": "coupon", "type": ["null", "string"], "default": None},
            ],
        }
    )
    writers = {1: _parsed(json.dumps(v1)), 2: _parsed(json.dumps(v2))}
    decode = _build_decoder(_parsed(reader_text), Framing.CONFLUENT, writers.__getitem__)
    assert decode(frame(1, _write(v1, {"id": 1, "channel": "app"}))) == {
        "id": 1,
        "channel": "app",
        "coupon": None,
    }
    assert decode(frame(2, _write(v2, {"id": 2, "coupon": "X"}))) == {
        "id": 2,
        "channel": "web",
        "coupon": "X",
    }


def test_a_writer_that_cannot_resolve_fails_the_record_with_its_id() -> None:
    writer = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]}
    reader = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}
    decode = _build_decoder(
        _parsed(json.dumps(reader)), Framing.CONFLUENT, lambda _id: _parsed(json.dumps(writer))
    )
    with pytest.raises(PayloadDecodeError, match="cannot be resolved") as failed:
        decode(frame(4, _write(writer, {"id": "x"})))
    assert failed.value.schema_id == 4


@pytest.mark.parametrize(
    ("payload", "reason", "schema_id"),
    [
        (b"\x01\x00\x00\x00\x09" + b"\x02", "unknown magic byte 0x01", None),
        (b"\x00\x00", "shorter than the registry framing's 5-byte header", None),
        (frame(9, _write(ORDER, FULL))[:30], "truncated Avro payload", 9),
    ],
)
def test_malformed_framed_payloads_say_why(payload: bytes, reason: str, schema_id: Any) -> None:
    reader = CODEC.resolve(_payload(framing=Framing.CONFLUENT), None, ["orders"])
    assert reader.spark_type is not None
    decode = CODEC.decoder(reader, reader.spark_type, None)
    with pytest.raises(PayloadDecodeError, match=reason) as failed:
        decode(payload)
    assert failed.value.schema_id == schema_id


def test_a_plain_truncated_payload_is_a_decode_error() -> None:
    reader = CODEC.resolve(_payload(), None, ["orders"])
    assert reader.spark_type is not None
    decode = CODEC.decoder(reader, reader.spark_type, None)
    with pytest.raises(PayloadDecodeError, match="truncated"):
        decode(_write(ORDER, FULL)[:-3])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "Invalid option 'valueSchema': not JSON"),
        (
            '{"type": "record", "name": "R", "fields": [{"name": "a"}]}',
            "Invalid option 'valueSchema': not a valid Avro schema: Record field 'a' is missing",
        ),
        (
            '{"type": "enum", "name": "E"}',
            "Invalid option 'valueSchema': not a valid Avro schema: no 'symbols' in it",
        ),
        ('"nosuchtype"', "Invalid option 'valueSchema': not a valid Avro"),
        (
            '{"type": "record", "name": "N", "fields": [{"name": "n", "type": ["null", "N"]}]}',
            "Invalid option 'valueSchema': record 'N' contains itself",
        ),
        (
            '{"type": "record", "name": "R"}',
            "Invalid option 'valueSchema': not a valid Avro schema: record 'R' has no 'fields'",
        ),
        (
            '{"type": "record", "name": "R", "fields": [{"name": "a", "type": '
            '{"type": "array", "items": {"type": "error", "name": "In"}}}]}',
            "Invalid option 'valueSchema': not a valid Avro schema: error 'In' has no 'fields'",
        ),
    ],
)
def test_bad_inline_schemas_name_the_option(text: str, message: str) -> None:
    with pytest.raises(InvalidOptionError) as failed:
        CODEC.resolve(_payload(text), None, ["orders"])
    assert str(failed.value).startswith(message)


def test_a_registry_schema_without_fields_names_the_subject_option_and_the_id() -> None:
    with pytest.raises(InvalidOptionError) as failed:
        _parse('{"type": "record", "name": "R"}', "valueSubject", 12)
    assert str(failed.value).startswith(
        "Invalid option 'valueSubject': the registry's schema id 12: not a valid Avro schema: "
        "record 'R' has no 'fields'"
    )


def test_a_bad_key_schema_names_the_key_option() -> None:
    with pytest.raises(InvalidOptionError, match="'keySchema'"):
        CODEC.resolve(_payload("[", column="key"), None, ["orders"])


def test_several_topics_without_a_subject_ask_for_the_subject() -> None:
    from kafka_rescalable.formats.options import RegistrySettings

    registry = RegistrySettings((("url", "http://127.0.0.1:9"),))
    payload = PayloadOptions("value", PayloadFormat.AVRO, framing=Framing.CONFLUENT)
    with pytest.raises(InvalidOptionError, match="'valueSubject'.*2 topics"):
        CODEC.resolve(payload, registry, ["a", "b"])
    with pytest.raises(InvalidOptionError, match="'valueSubject'.*a topic pattern"):
        CODEC.resolve(payload, registry, [])


def test_an_unreachable_registry_names_url_and_subject() -> None:
    from kafka_rescalable.errors import SchemaRegistryError
    from kafka_rescalable.formats.options import RegistrySettings

    registry = RegistrySettings((("max.retries", "0"), ("url", "http://127.0.0.1:9")))
    payload = PayloadOptions("value", PayloadFormat.AVRO, framing=Framing.CONFLUENT)
    with pytest.raises(SchemaRegistryError, match=r"127\.0\.0\.1:9.*'orders-value'"):
        CODEC.resolve(payload, registry, ["orders"])


# --- the sink's encoder -----------------------------------------------------------------------


def _arrow_rows(spark_type: DataType, rows: list[Any]) -> list[Any]:
    """Rows as the sink gets them: through an Arrow column and ``to_pylist``."""
    return pa.array(rows, to_arrow_type(spark_type, timezone="UTC")).to_pylist()


def test_an_inline_schema_encodes_what_the_decoder_reads_back() -> None:
    reader = CODEC.resolve(_payload(), None, ["orders"])
    assert reader.spark_type is not None
    rows = _decode_to_arrow(ORDER, [FULL, dict(FULL, either=None, note="x")])
    encode = CODEC.encoder(WriterColumn(_payload(), reader.spark_type, None, "orders"))
    decode = CODEC.decoder(reader, reader.spark_type, None)
    again = _arrow_rows(reader.spark_type, [decode(encode(row)) for row in rows])
    assert again == rows
    # The bytes are those fastavro writes for the original record.
    assert encode(rows[0]) == _write(ORDER, FULL)


def test_without_a_schema_the_spark_type_gives_the_writer_schema() -> None:
    spark_type = StructType(
        [
            StructField("id", LongType(), False),
            StructField("price", DecimalType(10, 2), True),
            StructField("at", TimestampType(), True),
            StructField("tags", MapType(StringType(), IntegerType(), True), True),
            StructField("lines", ArrayType(StructType([StructField("n", IntegerType())])), True),
        ]
    )
    rows = _arrow_rows(
        spark_type,
        [
            {
                "id": 1,
                "price": Decimal("9.99"),
                "at": datetime(2024, 5, 6, 7, 8, 9, 10, UTC),
                "tags": {"a": 1, "b": None},
                "lines": [{"n": 1}, {"n": None}],
            },
            {"id": 2, "price": None, "at": None, "tags": None, "lines": None},
        ],
    )
    payload = PayloadOptions("value", PayloadFormat.AVRO)
    encode = CODEC.encoder(WriterColumn(payload, spark_type, None, "out"))
    from kafka_rescalable.formats.avro.writer_schema import avro_schema_of

    schema_text = json.dumps(avro_schema_of(spark_type))
    reader = CODEC.resolve(_payload(schema_text), None, ["out"])
    assert reader.spark_type == spark_type
    decode = CODEC.decoder(reader, spark_type, None)
    assert _arrow_rows(spark_type, [decode(encode(row)) for row in rows]) == rows


def test_a_scalar_column_encodes_as_a_primitive() -> None:
    key = PayloadOptions("key", PayloadFormat.AVRO)
    encode = CODEC.encoder(WriterColumn(key, StringType(), None, "t"))
    assert fastavro.schemaless_reader(io.BytesIO(encode("k1")), "string", None) == "k1"


def test_framing_without_a_registry_is_refused_for_the_sink() -> None:
    payload = PayloadOptions("value", PayloadFormat.AVRO, framing=Framing.CONFLUENT)
    with pytest.raises(InvalidOptionError, match="'valueFraming'.*schema.registry.url"):
        CODEC.encoder(WriterColumn(payload, StringType(), None, "t"))
