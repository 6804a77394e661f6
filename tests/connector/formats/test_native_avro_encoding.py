"""The sink's bulk Avro encoder (the native core) against its per-record encoder (fastavro).

Random schemas within our type mapping and random rows are encoded on both paths: the
payloads must be the same bytes, or the bulk path must have declined the batch. Rows come as
the sink gets them from Spark: written with fastavro, then decoded by the source's slow path
into the column type Spark would hand the sink.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_type

from kafka_rescalable.errors import SinkInputError
from kafka_rescalable.formats import avro_codec
from kafka_rescalable.formats.avro.native_encoding import native_encoder
from kafka_rescalable.formats.avro.types import non_null
from kafka_rescalable.formats.codec import ColumnEncoder
from kafka_rescalable.formats.native_core import native_core
from kafka_rescalable.formats.options import (
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
)
from kafka_rescalable.sink.rows import ColumnEncoding, RowEncoders, SinkColumns, kafka_records
from tests.connector.formats.avro_batches import batch, decode_on, decoding_path, plan, write
from tests.connector.formats.avro_strategies import reader_schemas

if native_core() is None:
    msg = (
        "the native core is not installed (or KAFKA_RESCALABLE_NATIVE=0): "
        "pip install ./native, as the README's test command does"
    )
    raise ImportError(msg)

_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # the registry in memory serves every example
    ],
)

_subjects = itertools.count()


def _encoding(
    spark_type: T.DataType,
    schema: Any = None,
    registry: RegistrySettings | None = None,
    topic: str = "orders",
) -> ColumnEncoding:
    text = None if schema is None else json.dumps(schema)
    framing = Framing.CONFLUENT if registry is not None else Framing.NONE
    payload = PayloadOptions("value", PayloadFormat.AVRO, schema=text, framing=framing)
    return ColumnEncoding(payload, spark_type.json(), registry, topic)


def _both(encoding: ColumnEncoding, column: pa.Array) -> tuple[list[Any], ColumnEncoder | None]:
    """Encode ``column`` row by row (the reference) and give the column's bulk encoder."""
    encode = encoding.encoder()
    reference = [None if value is None else encode(value) for value in column.to_pylist()]
    return reference, encoding.column_encoder(encode)


def _assert_alike(encoding: ColumnEncoding, column: pa.Array, bulk_expected: bool | None) -> None:
    """Hold the bulk path to the reference; ``bulk_expected``: whether it must take the batch."""
    reference, bulk = _both(encoding, column)
    encoded = None if bulk is None else bulk(column)
    if encoded is not None:
        assert encoded == reference
    if bulk_expected is not None:
        assert (encoded is not None) == bulk_expected, "the bulk path took or declined the batch"


def _bulk_encodes(schema: Any) -> bool:
    """Whether the bulk path takes ``schema`` (see writer_arrow): unions of null and one type."""
    if isinstance(schema, list):
        others = non_null(schema)
        return len(schema) == 2 and len(others) == 1 and _bulk_encodes(others[0])
    if not isinstance(schema, dict):
        return True
    kind = schema["type"]
    if kind == "record":
        return all(_bulk_encodes(field["type"]) for field in schema["fields"])
    if kind == "array":
        return _bulk_encodes(schema["items"])
    if kind == "map":
        return _bulk_encodes(schema["values"])
    return True


def _longer_decimal(column: pa.Array) -> bool:
    """Whether a row holds a decimal fastavro may write one byte longer (see writer_arrow)."""

    def visit(value: Any) -> bool:
        if isinstance(value, Decimal):
            sign, digits, _ = value.as_tuple()
            magnitude = int("".join(map(str, digits)) or "0")
            return bool(sign) and magnitude.bit_count() == 1 and magnitude.bit_length() % 8 == 0
        if isinstance(value, dict):
            return any(visit(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            return any(visit(v) for v in value)
        return False

    return visit(column.to_pylist())


def _spark_column(schema: Any, values: list[Any]) -> tuple[T.DataType, pa.Array]:
    """Give the rows as Spark hands them to the sink: the source's slow path decodes them."""
    decode_plan = plan(schema)
    payloads = [None if value is None else write(schema, value) for value in values]
    decoded = decode_on("fallback", decode_plan, batch(payloads))
    spark_type = decode_plan.readers[0].spark_type
    assert spark_type is not None
    return spark_type, decoded.column(1)


@_SETTINGS
@given(st.data(), reader_schemas())
def test_random_schemas_and_rows_encode_alike(data: st.DataObject, schema: tuple[Any, Any]) -> None:
    writer, records = schema
    values = data.draw(st.lists(st.one_of(st.none(), records), max_size=12), label="records")
    spark_type, column = _spark_column(writer, values)
    # a bytes decimal fastavro writes longer declines the batch: either way is right then
    expected = None if _longer_decimal(column) else _bulk_encodes(writer)
    _assert_alike(_encoding(spark_type, writer), column, expected)
    # the schema the sink derives from the column's type (no valueSchema): always in bulk
    _assert_alike(_encoding(spark_type), column, bulk_expected=True)


@pytest.fixture
def mock_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[RegistrySettings]:
    """Give the per-record encoder a registry in memory, a few schemas registered first."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    client = SchemaRegistryClient.new_client({"url": "mock://sinkenc"})  # confluent's mock
    for index in range(3):  # so that the sink's schema id is not 1
        fixed = {"type": "fixed", "name": f"F{index}", "size": 1}
        client.register_schema(f"other-{index}", Schema(json.dumps(fixed), "AVRO"))
    monkeypatch.setattr(avro_codec, "registry_client", lambda _settings: client)
    yield RegistrySettings((("url", "mock://sinkenc"),))


@_SETTINGS
@given(data=st.data(), schema=reader_schemas())
def test_random_schemas_and_rows_encode_alike_with_the_registry_framing(
    mock_registry: RegistrySettings, data: st.DataObject, schema: tuple[Any, Any]
) -> None:
    writer, records = schema
    values = data.draw(st.lists(records, min_size=1, max_size=12), label="records")
    spark_type, column = _spark_column(writer, values)
    topic = f"orders-{next(_subjects)}"
    encoding = _encoding(spark_type, writer, mock_registry, topic)
    expected = None if _longer_decimal(column) else _bulk_encodes(writer)
    _assert_alike(encoding, column, expected)


_EVERY_TYPE = T.StructType(
    [
        T.StructField("flag", T.BooleanType()),
        T.StructField("tiny", T.ByteType()),
        T.StructField("small", T.ShortType()),
        T.StructField("count", T.IntegerType(), False),
        T.StructField("id", T.LongType(), False),
        T.StructField("ratio", T.FloatType()),
        T.StructField("price", T.DoubleType()),
        T.StructField("item", T.StringType()),
        T.StructField("blob", T.BinaryType()),
        T.StructField("day", T.DateType()),
        T.StructField("placed", T.TimestampType()),
        T.StructField("local", T.TimestampNTZType()),
        T.StructField("amount", T.DecimalType(12, 3)),
        T.StructField("tags", T.ArrayType(T.StringType())),
        T.StructField("scores", T.MapType(T.StringType(), T.LongType())),
        T.StructField(
            "shipping",
            T.StructType(
                [T.StructField("city", T.StringType()), T.StructField("zip", T.IntegerType())]
            ),
        ),
    ]
)
"""Every Spark type the sink maps to Avro (writer_schema.py)."""

_MOMENT = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def _every_type_row(i: int) -> dict[str, Any]:
    return {
        "flag": None if i % 7 == 0 else i % 2 == 0,
        "tiny": -(i % 128),
        "small": i * 3,
        "count": i,
        "id": i * 10_000_000_000,
        "ratio": i / 4,
        "price": None if i % 5 == 0 else i * 1.1,
        "item": f"ïtem {i}",
        "blob": bytes([i % 256]) * (i % 4),
        "day": date(1969, 12, 1) + timedelta(days=i),
        "placed": _MOMENT - timedelta(microseconds=1_234_567 * i),
        "local": datetime(1960, 1, 1) + timedelta(microseconds=7_654_321 * i),
        "amount": Decimal(i * 1001).scaleb(-3) * (-1 if i % 2 else 1),
        "tags": None if i % 6 == 0 else [f"t{j}" for j in range(i % 3)],
        "scores": {f"k{j}": j * i for j in range(i % 4)},
        "shipping": None if i % 4 == 0 else {"city": f"city {i}", "zip": 10_000 + i},
    }


def _every_type_column(rows: int = 50) -> pa.Array:
    values = [None if i % 9 == 4 else _every_type_row(i) for i in range(rows)]
    return pa.array(values, to_arrow_type(_EVERY_TYPE, timezone="UTC"))


def test_every_type_the_sink_maps_encodes_in_bulk_alike() -> None:
    column = _every_type_column()
    _assert_alike(_encoding(_EVERY_TYPE), column, bulk_expected=True)
    _assert_alike(_encoding(_EVERY_TYPE), column.slice(7, 20), bulk_expected=True)


@pytest.mark.parametrize(
    ("spark_type", "schema", "values"),
    [
        (T.StringType(), "string", ["a", None, "ü" * 300]),
        (T.LongType(), "long", [0, -1, 2**63 - 1, None]),
        (T.IntegerType(), ["null", "long"], [None, 5, -(2**31)]),
        (T.StringType(), {"type": "enum", "name": "E", "symbols": ["X", "Y"]}, ["Y", None]),
        (T.ArrayType(T.DoubleType()), {"type": "array", "items": "double"}, [[1.5, -0.0], []]),
        (
            T.MapType(T.StringType(), T.StringType()),
            {"type": "map", "values": ["null", "string"]},
            [[("k", None), ("j", "v")], None, []],
        ),
    ],
)
def test_a_schema_that_is_not_a_record_encodes_in_bulk_alike(
    spark_type: T.DataType, schema: Any, values: list[Any]
) -> None:
    column = pa.array(values, to_arrow_type(spark_type, timezone="UTC"))
    _assert_alike(_encoding(spark_type, schema), column, bulk_expected=True)
    large = column.cast(to_arrow_type(spark_type, timezone="UTC", prefers_large_types=True))
    _assert_alike(_encoding(spark_type, schema), large, bulk_expected=True)


_ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "sinktest",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "count", "type": "long"},  # an int column written as a long
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["NEW", "OLD"]}},
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 2}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "seen", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {"name": "ratio", "type": "double"},  # a float column written as a double
        {"name": "kinds", "type": {"type": "array", "items": "Kind"}},
        {"name": "notes", "type": ["null", {"type": "map", "values": ["string", "null"]}]},
        {"name": "coupon", "type": ["null", "string"], "default": None},
    ],
}
_ORDER_TYPE = T.StructType(
    [
        T.StructField("coupon", T.StringType()),  # fields in another order than the schema's
        T.StructField("id", T.LongType()),
        T.StructField("count", T.IntegerType()),
        T.StructField("kind", T.StringType()),
        T.StructField("code", T.BinaryType()),
        T.StructField("ref", T.StringType()),
        T.StructField("at", T.TimestampType()),
        T.StructField("seen", T.TimestampNTZType()),
        T.StructField("price", T.DecimalType(9, 2)),
        T.StructField("ratio", T.FloatType()),
        T.StructField("kinds", T.ArrayType(T.StringType())),
        T.StructField("notes", T.MapType(T.StringType(), T.StringType())),
        T.StructField("ignored", T.StringType()),  # a field the schema lacks
    ]
)


def _order(i: int, **changes: Any) -> dict[str, Any]:
    row = {
        "coupon": None if i % 3 else f"C{i}",
        "id": i,
        "count": i * 2,
        "kind": "NEW" if i % 2 else "OLD",
        "code": bytes([65 + i % 26, 66]),
        "ref": f"00000000-0000-0000-0000-{i:012d}",
        "at": _MOMENT + timedelta(microseconds=-1_999 * i),  # sub-millisecond: floored
        "seen": datetime(1969, 12, 31, 23, 59, 59) + timedelta(microseconds=333 * i),
        "price": Decimal(f"{i}.{i % 100:02d}").copy_negate() if i % 2 else Decimal(i),
        "ratio": i / 8,
        "kinds": ["NEW", "OLD"][: i % 3],
        "notes": None if i % 5 == 0 else [("a", f"n{i}"), ("b", None)],
        "ignored": "x",
    }
    return {**row, **changes}


def _orders(*rows: dict[str, Any] | None) -> pa.Array:
    return pa.array(list(rows), to_arrow_type(_ORDER_TYPE, timezone="UTC"))


def test_a_schema_given_inline_encodes_in_bulk_alike() -> None:
    column = _orders(*(None if i == 3 else _order(i) for i in range(40)))
    _assert_alike(_encoding(_ORDER_TYPE, _ORDER), column, bulk_expected=True)


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"price": Decimal("-1.28")}, "fastavro writes -128 unscaled in two bytes"),
        ({"notes": [("a", "1"), ("a", "2")]}, "fastavro writes a repeated key once"),
        ({"ratio": float("nan")}, "a NaN's bits may change on the way through Python"),
    ],
)
def test_values_fastavro_writes_otherwise_are_encoded_row_by_row(
    changes: dict[str, Any], why: str
) -> None:
    column = _orders(_order(1), _order(2, **changes), None)
    _assert_alike(_encoding(_ORDER_TYPE, _ORDER), column, bulk_expected=False)


def _failure(encoding: ColumnEncoding, column: pa.Array, bulk: bool) -> str:
    """Give the error the sink raises for ``column``, with or without the bulk path."""
    encode = encoding.encoder()
    value_bulk = encoding.column_encoder(encode) if bulk else None
    assert (value_bulk is not None) == bulk
    encoders = RowEncoders(value=encode, value_bulk=value_bulk)
    columns = SinkColumns(topic="orders", value_encoding=encoding)
    source = pa.RecordBatch.from_arrays([column], names=["value"])
    with pytest.raises(SinkInputError) as refused:
        list(kafka_records(source, columns, 10, encoders))
    return str(refused.value)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"kind": "GONE"}, "ValueError"),  # not a symbol of the enum
        ({"id": None}, "TypeError"),  # a null where the schema has none
        ({"count": None}, "TypeError"),
        ({"code": b"toolong"}, "ValueError: data of length 7"),  # a fixed of another size
    ],
)
def test_a_value_the_bulk_path_refuses_fails_as_row_by_row(
    changes: dict[str, Any], reason: str
) -> None:
    encoding = _encoding(_ORDER_TYPE, _ORDER)
    column = _orders(_order(1), _order(2, **changes), _order(3))
    message = _failure(encoding, column, bulk=False)
    assert message.startswith("row 11 of this task: column 'value' does not encode as")
    assert reason in message
    assert _failure(encoding, column, bulk=True) == message


def test_with_the_native_core_off_the_bulk_path_declines(monkeypatch: pytest.MonkeyPatch) -> None:
    encoding = _encoding(_ORDER_TYPE, _ORDER)
    column = _orders(_order(1), _order(2))
    reference, bulk = _both(encoding, column)
    assert bulk is not None
    with decoding_path("fallback"):
        assert bulk(column) is None
    monkeypatch.setitem(sys.modules, "kafka_rescalable_native", None)  # the import fails
    assert bulk(column) is None
    monkeypatch.undo()
    assert bulk(column) == reference


@pytest.mark.parametrize(
    ("spark_type", "schema"),
    [
        # a union Spark writes as a struct of members: fastavro picks the member
        (
            T.StructType(
                [T.StructField("member0", T.LongType()), T.StructField("member1", T.StringType())]
            ),
            ["long", "string"],
        ),
        (T.LongType(), ["int", "long"]),  # a union Spark widens
        (T.LongType(), {"type": "record", "name": "R", "fields": []}),
        (
            T.StructType([T.StructField("a", T.LongType())]),
            {
                "type": "record",
                "name": "R",
                "fields": [{"name": "b", "type": "long", "default": 1}],
            },
        ),
        (
            T.DecimalType(10, 2),
            {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        ),
        (T.DoubleType(), "float"),
        (T.TimestampType(), {"type": "long", "logicalType": "local-timestamp-micros"}),
        (T.StringType(), "bytes"),
    ],
)
def test_schemas_not_proven_alike_are_encoded_row_by_row(
    spark_type: T.DataType, schema: Any
) -> None:
    encode = _encoding(spark_type, schema)
    assert encode.column_encoder(encode.encoder()) is None


def test_with_the_registry_the_bulk_path_frames_with_the_serializers_id(
    mock_registry: RegistrySettings,
) -> None:
    column = _orders(*(_order(i) for i in range(20)))
    encoding = _encoding(_ORDER_TYPE, _ORDER, mock_registry, "framed")
    reference, bulk = _both(encoding, column)
    assert bulk is not None
    encoded = bulk(column)
    assert encoded == reference
    (frame,) = {payload[:5] for payload in encoded}
    assert frame[0] == 0 and int.from_bytes(frame[1:], "big") > 1


def test_with_the_registry_some_schemas_are_encoded_row_by_row(
    mock_registry: RegistrySettings,
) -> None:
    # the serializer writes a bytes schema's values raw, without Avro's length
    raw = _encoding(T.BinaryType(), "bytes", mock_registry)
    assert raw.column_encoder(raw.encoder()) is None
    # with use.latest.version the serializer writes with the subject's latest schema
    latest = RegistrySettings((*mock_registry.items, ("use.latest.version", "true")))
    encoding = _encoding(_ORDER_TYPE, _ORDER, latest)
    assert encoding.column_encoder(lambda value: b"") is None


def test_bulk_bytes_that_differ_from_the_first_rows_turn_the_bulk_path_off() -> None:
    column = _orders(None, _order(1), _order(2))
    wrong = native_encoder(json.dumps(_ORDER), _ORDER_TYPE, lambda value: b"not it", False)
    assert wrong is not None
    assert wrong(column) is None  # the first valid row's bytes differ: off for good
    assert wrong(column) is None
    encode = _encoding(_ORDER_TYPE, _ORDER).encoder()
    right = native_encoder(json.dumps(_ORDER), _ORDER_TYPE, encode, False)
    assert right is not None
    assert right(column) == [None, encode(column[1].as_py()), encode(column[2].as_py())]
