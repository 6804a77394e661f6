"""JSON text to Spark's Python values (as from_json reads), and back (as to_json writes).

The expectations come from running Spark 4's ``from_json`` / ``to_json`` on the same texts,
except where this reader is stricter on purpose: a value of the wrong type is a decoding
failure (``mode`` decides) where ``from_json`` gives null.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    _parse_datatype_json_string,
)

from kafka_rescalable.errors import PayloadDecodeError
from kafka_rescalable.formats.json_values import reader_for, writer_for

ORDER = StructType(
    [
        StructField("id", LongType()),
        StructField("n", IntegerType()),
        StructField("small", ShortType()),
        StructField("tiny", ByteType()),
        StructField("price", DoubleType()),
        StructField("ratio", FloatType()),
        StructField("amount", DecimalType(10, 2)),
        StructField("ok", BooleanType()),
        StructField("name", StringType()),
        StructField("raw", BinaryType()),
        StructField("at", TimestampType()),
        StructField("local", TimestampNTZType()),
        StructField("day", DateType()),
        StructField("tags", ArrayType(StringType())),
        StructField("attrs", MapType(StringType(), LongType())),
        StructField(
            "lines",
            ArrayType(
                StructType(
                    [
                        StructField("sku", StringType()),
                        StructField("qty", IntegerType()),
                        StructField("cost", DecimalType(6, 3)),
                    ]
                )
            ),
        ),
    ]
)


def _read(spark_type: DataType, value: Any) -> Any:
    text = value if isinstance(value, str | bytes) else json.dumps(value)
    decoded = reader_for(spark_type)(text.encode() if isinstance(text, str) else text)
    pa.array([decoded], to_arrow_type(spark_type, timezone="UTC"))  # Arrow takes it as it is
    return decoded


def _field(spark_type: DataType, value: Any) -> Any:
    return _read(StructType([StructField("f", spark_type)]), {"f": value})["f"]


def test_a_nested_record_reads_into_every_type() -> None:
    text = json.dumps(
        {
            "id": 2**40,
            "n": -7,
            "small": 300,
            "tiny": 8,
            "price": 9.5,
            "ratio": 1,
            "amount": 12.345,
            "ok": True,
            "name": "ä",
            "raw": "aGk=",
            "at": "2024-01-02T03:04:05.123456+02:00",
            "local": "2024-01-02 03:04:05",
            "day": "2024-01-02",
            "tags": ["a", None],
            "attrs": {"x": 1, "y": None},
            "lines": [{"sku": "s1", "qty": 2, "cost": "0.0005"}, None],
            "ignored": {"deep": [1]},
        }
    )
    assert _read(ORDER, text) == {
        "id": 2**40,
        "n": -7,
        "small": 300,
        "tiny": 8,
        "price": 9.5,
        "ratio": 1.0,
        "amount": Decimal("12.35"),
        "ok": True,
        "name": "ä",
        "raw": b"hi",
        "at": datetime(2024, 1, 2, 1, 4, 5, 123456, tzinfo=UTC),
        "local": datetime(2024, 1, 2, 3, 4, 5),
        "day": date(2024, 1, 2),
        "tags": ["a", None],
        "attrs": {"x": 1, "y": None},
        "lines": [{"sku": "s1", "qty": 2, "cost": Decimal("0.001")}, None],
    }


def test_missing_fields_and_json_null_are_null() -> None:
    assert _read(ORDER, {"id": 1}) == {"id": 1} | {f.name: None for f in ORDER.fields[1:]}
    assert _read(ORDER, "null") is None
    assert _read(ORDER, {"ID": 1})["id"] is None  # names match case-sensitively


@pytest.mark.parametrize(
    ("value", "text"),
    [(1500.0, "1500.0"), ({"a": [1, 2]}, '{"a":[1,2]}'), (True, "true"), (3, "3")],
)
def test_a_string_column_keeps_any_json_value_as_its_text(value: Any, text: str) -> None:
    assert _field(StringType(), value) == text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-01-02T03:04:05Z", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05.123456789Z", datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),
        ("2024-01-02 03:04:05", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02", datetime(2024, 1, 2, tzinfo=UTC)),
        (1700000000, datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
        (
            "2024-01-02T03:04:05-05:30",
            datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(-timedelta(hours=5, minutes=30))),
        ),
    ],
)
def test_timestamps_read_iso_text_and_epoch_seconds(value: Any, expected: datetime) -> None:
    assert _field(TimestampType(), value) == expected


def test_dates_read_iso_text_and_drop_a_time_of_day() -> None:
    assert _field(DateType(), "2024-01-02") == date(2024, 1, 2)
    assert _field(DateType(), "2024-01-02T03:04:05") == date(2024, 1, 2)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1.235", "1.24"),
        (1.235, "1.24"),
        (-1.235, "-1.24"),
        (7, "7.00"),
        ("99999999.994", "99999999.99"),
        (0.1, "0.10"),
    ],
)
def test_decimals_read_numbers_and_text_rounded_half_up(value: Any, expected: str) -> None:
    assert _field(DecimalType(10, 2), value) == Decimal(expected)


def test_decimals_keep_digits_a_double_would_lose() -> None:
    text = '{"f": 1234567890.123456789012345678}'
    spark_type = StructType([StructField("f", DecimalType(38, 18))])
    assert _read(spark_type, text)["f"] == Decimal("1234567890.123456789012345678")


def test_doubles_read_integers_and_the_non_numbers_from_json_takes() -> None:
    assert _field(DoubleType(), 3) == 3.0
    assert math.isnan(_field(DoubleType(), "NaN"))
    assert _field(DoubleType(), "-Infinity") == -math.inf
    spark_type = StructType([StructField("f", DoubleType()), StructField("d", DecimalType(4, 1))])
    assert _read(spark_type, '{"f": 0.1, "d": 0.1}') == {"f": 0.1, "d": Decimal("0.1")}


@pytest.mark.parametrize(
    ("spark_type", "value", "said"),
    [
        (LongType(), "12", 'f: expected an integer, got string "12"'),
        (LongType(), 1.0, "f: expected an integer, got number 1.0"),
        (LongType(), True, "f: expected an integer, got boolean true"),
        (DoubleType(), "1.5", "f: expected a number"),
        (BooleanType(), "true", "f: expected true or false"),
        (DecimalType(3, 2), 123.4, "f: expected a number fitting DECIMAL(3, 2)"),
        (DecimalType(3, 2), "abc", "fitting DECIMAL(3, 2)"),
        (BinaryType(), "aGk", "f: expected base64 text"),
        (TimestampType(), 1700000000.5, "f: expected an ISO-8601 timestamp or epoch seconds"),
        (TimestampType(), "yesterday", "f: expected an ISO-8601 timestamp"),
        (TimestampNTZType(), "2024-01-02T03:04:05+02:00", "without offset"),
        (DateType(), 19000, "f: expected an ISO-8601 date"),
        (ArrayType(LongType()), 1, "f: expected an array, got number 1"),
        (ArrayType(LongType()), [1, "2"], 'f[1]: expected an integer, got string "2"'),
        (MapType(StringType(), LongType()), {"a": 1, "b": []}, "f['b']: expected an integer"),
        (StructType([StructField("x", LongType())]), [1], "f: expected an object, got array"),
        (StructType([StructField("x", LongType())]), {"x": {}}, "f.x: expected an integer"),
    ],
)
def test_a_value_of_the_wrong_type_fails_naming_the_field(
    spark_type: DataType, value: Any, said: str
) -> None:
    with pytest.raises(PayloadDecodeError) as failed:
        _field(spark_type, value)
    assert said in failed.value.reason


def test_an_integer_out_of_range_is_left_to_arrow_which_refuses_it() -> None:
    spark_type = StructType([StructField("f", IntegerType())])
    decoded = reader_for(spark_type)(b'{"f": 3000000000}')
    with pytest.raises(pa.ArrowInvalid, match="too large"):
        pa.array([decoded], to_arrow_type(spark_type))


@pytest.mark.parametrize("text", [b"{", b"\xff\xfe", b'{"id": 1} trailing', b""])
def test_text_that_is_not_json_fails(text: bytes) -> None:
    with pytest.raises(PayloadDecodeError, match="not JSON"):
        reader_for(ORDER)(text)


def test_a_top_level_value_of_another_shape_fails() -> None:
    with pytest.raises(PayloadDecodeError, match="the value: expected an object, got array"):
        reader_for(ORDER)(b'[{"id": 1}]')


def test_a_map_with_non_string_keys_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="keys are strings"):
        reader_for(MapType(IntegerType(), LongType()))


def test_the_writer_writes_as_to_json_does() -> None:
    spark_type = StructType(
        [
            StructField("t", TimestampType()),
            StructField("d", DateType()),
            StructField("b", BinaryType()),
            StructField("x", DecimalType(10, 3)),
            StructField("f", DoubleType()),
            StructField("g", DoubleType()),
            StructField("missing", StringType()),
            StructField("m", MapType(StringType(), LongType())),
        ]
    )
    to_value, dumps = writer_for(spark_type)
    row = {
        "t": datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
        "d": date(2024, 1, 2),
        "b": b"hi",
        "x": Decimal("1.500"),
        "f": math.nan,
        "g": 1.0,
        "missing": None,
        "m": [("k", 1), ("z", None)],
    }
    # Spark 4's to_json on the same row (its maps keep nulls; null fields are left out).
    assert dumps(to_value(row)) == (
        '{"t":"2024-01-02T03:04:05.123Z","d":"2024-01-02","b":"aGk=","x":1.500,"f":"NaN",'
        '"g":1.0,"m":{"k":1,"z":null}}'
    )


def test_written_rows_read_back_equal() -> None:
    arrow_type = to_arrow_type(ORDER, timezone="UTC")
    decoded = _read(
        ORDER,
        {
            "id": 1,
            "n": 2,
            "small": 3,
            "tiny": 4,
            "price": 0.25,
            "ratio": 0.5,
            "amount": "123.45",
            "ok": False,
            "name": 'q"uote',
            "raw": "AAEC",
            "at": "2024-05-06T07:08:09.123Z",
            "local": "2024-05-06T07:08:09.123",
            "day": "2024-05-06",
            "tags": [],
            "attrs": {"a": 1},
            "lines": [{"sku": "x", "qty": 1, "cost": 1.5}],
        },
    )
    (row,) = pa.array([decoded], arrow_type).to_pylist()  # as the sink gets it
    to_value, dumps = writer_for(ORDER)
    again = reader_for(ORDER)(dumps(to_value(row)).encode())
    assert pa.array([again], arrow_type).to_pylist() == [row]
    assert _parse_datatype_json_string(ORDER.json()) == ORDER
