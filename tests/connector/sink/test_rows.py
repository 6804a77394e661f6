"""The sink's input contract: schema checks on the driver, Arrow rows to Kafka records."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafka_rescalable.errors import InvalidOptionError, SinkInputError
from kafka_rescalable.formats.options import PLAIN, PayloadFormat, PayloadOptions, PayloadSettings
from kafka_rescalable.sink.rows import RowEncoders, SinkColumns, first_topic, kafka_records

HEADERS = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)


def schema(**columns) -> StructType:
    return StructType([StructField(name, kind) for name, kind in columns.items()])


def test_every_column_of_the_contract_is_accepted() -> None:
    columns = SinkColumns.from_schema(
        schema(
            key=BinaryType(),
            value=StringType(),
            topic=StringType(),
            partition=IntegerType(),
            headers=HEADERS,
            extra=LongType(),
        ),
        None,
    )
    assert columns == SinkColumns(True, True, True, True, None)


@pytest.mark.parametrize(
    ("columns", "topic", "named", "message"),
    [
        ({"key": StringType()}, "t", "value", "needs a 'value' column"),
        ({"value": LongType()}, "t", "value", "column 'value' has type bigint"),
        ({"value": StringType(), "key": IntegerType()}, "t", "key", "column 'key' has type int"),
        ({"value": StringType(), "topic": BinaryType()}, None, "topic", "needs string"),
        ({"value": StringType(), "partition": LongType()}, "t", "partition", "needs int"),
        ({"value": StringType(), "headers": StringType()}, "t", "headers", "array<struct"),
        ({"value": StringType()}, None, "topic", "no topic to write to"),
    ],
)
def test_a_wrong_input_is_refused_naming_the_column(columns, topic, named, message) -> None:
    with pytest.raises(SinkInputError, match=message) as refused:
        SinkColumns.from_schema(schema(**columns), topic)
    assert refused.value.column == named


def test_rows_become_records_with_the_option_overriding_the_topic_column() -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "value": [b"a", None, b"c"],
            "key": ["k1", None, "k3"],
            "topic": ["x", "y", "z"],
            "partition": pa.array([None, 2, 0], pa.int32()),
            "headers": [[{"key": "h", "value": b"1"}, {"key": "h", "value": None}], None, []],
        }
    )
    columns = SinkColumns(True, True, True, True, "forced")
    assert list(kafka_records(batch, columns)) == [
        ("forced", b"a", "k1", -1, [("h", b"1"), ("h", None)]),
        ("forced", None, None, 2, None),
        ("forced", b"c", "k3", 0, []),
    ]
    assert first_topic(batch, SinkColumns(has_topic=True)) == "x"


def test_a_row_without_topic_is_refused_naming_the_row() -> None:
    batch = pa.RecordBatch.from_pydict({"value": ["a", "b"], "topic": ["x", None]})
    with pytest.raises(SinkInputError, match="row 12 of this task has a null 'topic'"):
        kafka_records(batch, SinkColumns(has_topic=True), first_row=11)
    with pytest.raises(SinkInputError, match="row 0 of this task"):
        first_topic(batch.slice(1), SinkColumns(has_topic=True))


ORDER = StructType([StructField("id", LongType()), StructField("item", StringType())])


def typed(value: str = "binary", key: str = "binary") -> PayloadSettings:
    return PayloadSettings(
        PayloadOptions("key", PayloadFormat(key)), PayloadOptions("value", PayloadFormat(value))
    )


def test_a_typed_column_takes_what_its_format_encodes() -> None:
    columns = SinkColumns.from_schema(
        schema(key=StringType(), value=ORDER), "t", typed(value="avro", key="string")
    )
    assert columns.value_encoding.payload.format is PayloadFormat.AVRO
    assert columns.value_encoding.spark_type_json == ORDER.json()
    assert columns.value_encoding.topic == "t"
    assert columns.key_encoding.payload.format is PayloadFormat.STRING
    plain = SinkColumns.from_schema(schema(value=BinaryType()), "t", PLAIN)
    assert (plain.value_encoding, plain.key_encoding) == (None, None)


@pytest.mark.parametrize(
    ("columns", "payloads", "refused", "message"),
    [
        ({"value": ORDER}, typed(value="string"), "value", "'valueFormat' is 'string'.*'avro'"),
        ({"value": ORDER}, PLAIN, "value", "struct<id:bigint,item:string>.*'valueFormat' to"),
        ({"value": BinaryType(), "key": LongType()}, typed(key="string"), "key", "'keyFormat'"),
        ({"value": StringType()}, typed(value="protobuf"), "value", "'protobuf', which writes"),
        ({"value": StringType()}, typed(key="avro"), "key", "input has no 'key' column"),
    ],
)
def test_a_column_its_format_cannot_encode_is_refused(columns, payloads, refused, message) -> None:
    with pytest.raises(SinkInputError, match=message) as error:
        SinkColumns.from_schema(schema(**columns), "t", payloads)
    assert error.value.column == refused


def test_typed_values_are_encoded_and_nulls_stay_tombstones() -> None:
    columns = SinkColumns.from_schema(
        schema(key=StringType(), value=StringType()), "t", typed(value="string", key="string")
    )
    batch = pa.RecordBatch.from_pydict({"key": ["k1", None], "value": ["välue", None]})
    assert [record[:3] for record in kafka_records(batch, columns)] == [
        ("t", "välue".encode(), b"k1"),
        ("t", None, None),
    ]


def test_a_value_that_does_not_encode_names_its_row_and_column() -> None:
    columns = SinkColumns.from_schema(schema(value=ORDER), "t", typed(value="avro"))
    batch = pa.RecordBatch.from_pylist(
        [{"value": {"id": 1, "item": "a"}}, {"value": {"id": None, "item": "b"}}],
        schema=pa.schema([("value", pa.struct([("id", pa.int64()), ("item", pa.string())]))]),
    )

    def encode(value: dict) -> bytes:  # stands in for a codec: the id is required
        return value["id"].to_bytes(8, "big")

    with pytest.raises(
        SinkInputError,
        match="row 5 of this task: column 'value' does not "
        "encode as 'valueFormat' 'avro': AttributeError",
    ) as refused:
        list(kafka_records(batch, columns, first_row=4, encoders=RowEncoders(value=encode)))
    assert refused.value.column == "value"


def test_a_value_python_cannot_hold_names_its_row_and_column() -> None:
    # A Protobuf source reads a Timestamp past year 9999 as spark-protobuf does; Arrow holds
    # it, Python's datetime cannot, and the row-by-row encoders take Python values.
    when = pa.struct([("at", pa.timestamp("us", tz="UTC"))])
    columns = SinkColumns.from_schema(
        schema(value=StructType([StructField("at", TimestampType())])), "t", typed(value="avro")
    )
    batch = pa.RecordBatch.from_pylist(
        [{"value": {"at": 0}}, {"value": {"at": 253_402_300_800_000_000}}],
        schema=pa.schema([("value", when)]),
    )
    with pytest.raises(
        SinkInputError, match="row 3 of this task: column 'value' holds a value Python cannot"
    ) as refused:
        list(kafka_records(batch, columns, first_row=2, encoders=RowEncoders(value=bytes)))
    assert refused.value.column == "value"


class _RefusingCodec:
    """Stands in for a format whose encoder refuses what it is given."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def encoder(self, column):
        raise self.error


def test_an_encoder_that_cannot_be_built_names_the_option_or_column(monkeypatch) -> None:
    columns = SinkColumns.from_schema(schema(value=ORDER), "t", typed(value="avro"))
    monkeypatch.setattr(
        "kafka_rescalable.sink.encoding.codec_for",
        lambda fmt: _RefusingCodec(NotImplementedError("writing 'avro' is not supported")),
    )
    with pytest.raises(InvalidOptionError, match="not supported") as refused:
        columns.encoders()
    assert refused.value.option == "valueFormat"
    monkeypatch.setattr(
        "kafka_rescalable.sink.encoding.codec_for",
        lambda fmt: _RefusingCodec(TypeError("no field 'qty'")),
    )
    with pytest.raises(
        SinkInputError,
        match=r"column 'value' \(struct<id:bigint,item:string>\) cannot be "
        "written with 'valueFormat' 'avro': TypeError: no field 'qty'",
    ):
        columns.encoders()
