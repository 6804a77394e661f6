"""JSON text to Spark's Python values (as from_json reads), and back (as to_json writes).

The expectations come from running Spark 4's ``from_json`` / ``to_json`` on the same texts
(in both of its modes), except where this reader refuses on purpose what ``from_json`` reads
in a way nobody would want (docs/reference/json-vs-from_json.md): a value ``from_json`` cannot
read is a decoding failure here (``mode`` decides), with what ``from_json`` keeps of it in the
failure's ``partial``; integration_tests/test_json_records.py checks the same against Spark.
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


def _failure(spark_type: DataType, text: str | bytes) -> PayloadDecodeError:
    with pytest.raises(PayloadDecodeError) as failed:
        reader_for(spark_type)(text.encode() if isinstance(text, str) else text)
    return failed.value


def test_missing_fields_are_null() -> None:
    assert _read(ORDER, {"id": 1}) == {"id": 1} | {f.name: None for f in ORDER.fields[1:]}
    assert _read(ORDER, {"ID": 1})["id"] is None  # names match case-sensitively


def test_json_null_fails_keeping_a_struct_of_nulls_as_from_json_does() -> None:
    # from_json: a struct of nulls (PERMISSIVE), INVALID_JSON_ROOT_FIELD (FAILFAST).
    failure = _failure(ORDER, "null")
    assert failure.reason == "the value: expected an object, got null null"
    assert failure.partial == dict.fromkeys(ORDER.names)
    assert _failure(ArrayType(LongType()), "null").partial is None


@pytest.mark.parametrize("text", [b"", b"  ", b"\n"])
def test_an_empty_payload_is_null_as_from_json_reads_it(text: bytes) -> None:
    assert reader_for(ORDER)(text) is None


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
    ("text", "expected"),
    [
        ("2024-1-2", date(2024, 1, 2)),
        ("2024-01-2", date(2024, 1, 2)),
        ("2024-1", date(2024, 1, 1)),
        ("2024", date(2024, 1, 1)),
        ("+2024-01-02", date(2024, 1, 2)),
        (" 2024-1-2 x", date(2024, 1, 2)),
        ("2024-01-02 03:04:05.123Z", date(2024, 1, 2)),
        ("2024-01-02T25:00", date(2024, 1, 2)),
        ("02024-01-02", date(2024, 1, 2)),
        ("2024-01-02GMT", date(2024, 1, 2)),
    ],
)
def test_dates_take_sparks_short_forms(text: str, expected: date) -> None:
    assert _field(DateType(), text) == expected  # each as Spark 4's from_json reads it


@pytest.mark.parametrize(
    "text",
    ["2024-01-02x", "2024-13-02", "2024-02-30", "2024-W01-1", "20240102", "2024/01/02", "123"],
)
def test_dates_spark_does_not_read_or_reads_as_days_fail_naming_the_field(text: str) -> None:
    # Spark refuses all but "123", which it reads as days since 1970 (for Spark 1.5's files).
    failure = _failure(StructType([StructField("d", DateType())]), json.dumps({"d": text}))
    assert failure.reason.startswith("d: expected a date")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-1-2", datetime(2024, 1, 2, tzinfo=UTC)),
        ("2024", datetime(2024, 1, 1, tzinfo=UTC)),
        ("2024-01-02 3:4:5", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03", datetime(2024, 1, 2, 3, tzinfo=UTC)),
        ("2024-01-02T03:04:05.", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05+0530", datetime(2024, 1, 1, 21, 34, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05+5:30", datetime(2024, 1, 1, 21, 34, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05+05:3", datetime(2024, 1, 1, 22, 1, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05 +05:00", datetime(2024, 1, 1, 22, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05UTC+5", datetime(2024, 1, 1, 22, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05 GMT+01:00", datetime(2024, 1, 2, 2, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05 PST", datetime(2024, 1, 2, 11, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05Europe/Paris", datetime(2024, 1, 2, 2, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05.12345678901Z", datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),
    ],
)
def test_timestamps_take_sparks_forms_and_zones(text: str, expected: datetime) -> None:
    assert _field(TimestampType(), text) == expected  # each as Spark 4's from_json reads it


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-02T24:00:00",
        "2024-01-02T03:04:05z",
        "2024-01-02T03:04:05+19:00",
        "20240102T030405Z",
        "2024-01-02T03:04:05,123Z",
        "2024-01-02T03:04:05Z[UTC]",
        "03:04:05",
        "T03:04:05",
    ],
)
def test_timestamps_spark_does_not_read_or_reads_as_today_fail(text: str) -> None:
    # Spark refuses all but the last two, times of the day a query runs on.
    failure = _failure(StructType([StructField("t", TimestampType())]), json.dumps({"t": text}))
    assert failure.reason.startswith("t: expected a timestamp")


def test_local_timestamps_refuse_any_zone_as_spark_does() -> None:
    assert _field(TimestampNTZType(), "2024-1-2 3:4:5.1234567") == datetime(
        2024, 1, 2, 3, 4, 5, 123456
    )
    for text in ("2024-01-02T03:04:05Z", "2024-01-02T03:04:05 GMT", "2024-01-02T03:04:05+00:00"):
        with pytest.raises(PayloadDecodeError, match="without a time zone"):
            _field(TimestampNTZType(), text)


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


def test_decimals_of_38_digits_read_whole() -> None:
    # Python's default decimal context keeps 28 digits: rounding these failed with it.
    spark_type = StructType([StructField("f", DecimalType(38, 10))])
    assert _read(spark_type, '{"f": 1000000000000000000}')["f"] == Decimal(10**18)
    assert _read(spark_type, '{"f": "-9999999999999999999999999999.9999999999"}')["f"] == Decimal(
        "-9999999999999999999999999999.9999999999"
    )
    with pytest.raises(PayloadDecodeError, match="got number 9999999999999999999999999999.999"):
        _read(spark_type, '{"f": 9999999999999999999999999999.99999999995}')


def test_doubles_read_integers_and_the_non_numbers_from_json_takes() -> None:
    assert _field(DoubleType(), 3) == 3.0
    assert math.isnan(_field(DoubleType(), "NaN"))
    assert _field(DoubleType(), "-Infinity") == -math.inf
    assert _field(FloatType(), "+INF") == math.inf
    assert _field(DoubleType(), 10**400) == math.inf  # Java's BigInteger.doubleValue
    assert math.copysign(1, _field(DoubleType(), 0)) == 1  # the integer -0 is 0.0
    for text in ("INF", "-NaN", "inf"):
        with pytest.raises(PayloadDecodeError, match="f: expected a number"):
            _field(DoubleType(), text)
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
        (TimestampType(), 1700000000.5, "f: expected a timestamp text or epoch seconds"),
        (TimestampType(), "yesterday", "f: expected a timestamp (ISO-8601 or Spark's forms"),
        (TimestampType(), 10**13, "f: expected epoch seconds within years 1 to 9999"),
        (TimestampNTZType(), "2024-01-02T03:04:05+02:00", "without a time zone"),
        (DateType(), 19000, "f: expected a date"),
        (DecimalType(10, 2), " 1.5", "f: expected a number fitting DECIMAL(10, 2)"),
        (DecimalType(10, 2), "1_0", "f: expected a number fitting DECIMAL(10, 2)"),
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


@pytest.mark.parametrize(
    ("spark_type", "value", "said"),
    [
        (LongType(), 2**63, "f: expected an integer within BIGINT"),
        (LongType(), -(2**63) - 1, "f: expected an integer within BIGINT"),
        (IntegerType(), 3000000000, "f: expected an integer within INT (-2147483648 to"),
        (ShortType(), 40000, "f: expected an integer within SMALLINT (-32768 to 32767)"),
        (ByteType(), 128, "f: expected an integer within TINYINT (-128 to 127), got number 128"),
        (ArrayType(IntegerType()), [1, 2**31], "f[1]: expected an integer within INT"),
    ],
)
def test_integers_out_of_their_types_range_fail_naming_the_field(
    spark_type: DataType, value: Any, said: str
) -> None:
    with pytest.raises(PayloadDecodeError) as failed:
        _field(spark_type, value)
    assert said in failed.value.reason
    assert _field(spark_type, [-1] if isinstance(spark_type, ArrayType) else -1) in (-1, [-1])


def test_an_integer_at_the_top_is_range_checked_too() -> None:
    # A JSON Schema of {"type": "integer"} reads into a BIGINT column that is no struct.
    with pytest.raises(PayloadDecodeError, match="the value: expected an integer within BIGINT"):
        reader_for(LongType())(str(2**63).encode())
    assert reader_for(LongType())(b"-1") == -1


def test_a_field_of_the_wrong_type_fails_keeping_the_other_fields() -> None:
    spark_type = StructType([StructField("id", LongType()), StructField("name", StringType())])
    failure = _failure(spark_type, '{"id": "12", "name": "n"}')
    assert failure.reason == 'id: expected an integer, got string "12"'
    assert failure.partial == {"id": None, "name": "n"}  # from_json's Row(id=None, name='n')


def test_a_failure_keeps_what_from_json_keeps_at_every_depth() -> None:
    inner = StructType([StructField("x", LongType()), StructField("y", StringType())])
    spark_type = StructType(
        [
            StructField("c", inner),
            StructField("a", ArrayType(inner)),
            StructField("n", ArrayType(LongType())),
            StructField("m", MapType(StringType(), inner)),
            StructField("z", StringType()),
        ]
    )
    text = json.dumps(
        {
            "c": {"x": "1", "y": "a"},
            "a": [{"x": "1", "y": "a"}, {"x": 2, "y": "b"}],
            "n": [1, "2"],
            "m": {"k": {"x": "1", "y": "q"}},
            "z": "k",
        }
    )
    failure = _failure(spark_type, text)
    # Spark 4's from_json: structs keep their other fields, at any depth and inside arrays and
    # maps; an array of scalars with a bad element is null as a whole.
    assert failure.partial == {
        "c": {"x": None, "y": "a"},
        "a": [{"x": None, "y": "a"}, {"x": 2, "y": "b"}],
        "n": None,
        "m": {"k": {"x": None, "y": "q"}},
        "z": "k",
    }
    assert failure.reason == (
        'c.x: expected an integer, got string "1"; a[0].x: expected an integer, got string "1"; '
        'n[1]: expected an integer, got string "2"; m[\'k\'].x: expected an integer, got string "1"'
    )
    whole = _failure(spark_type, '{"a": [1], "z": "k"}')
    assert whole.partial == dict.fromkeys(spark_type.names) | {"z": "k"}
    assert whole.reason == "a[0]: expected an object, got number 1"


def test_text_that_is_not_json_keeps_a_struct_of_nulls() -> None:
    failure = _failure(ORDER, b'{"id": 1')
    assert failure.reason.startswith("not JSON")
    assert failure.partial == dict.fromkeys(ORDER.names)


def test_one_object_reads_as_an_array_of_one_struct_as_from_json_reads_it() -> None:
    spark_type = ArrayType(StructType([StructField("id", LongType())]))
    assert reader_for(spark_type)(b'{"id": 1}') == [{"id": 1}]
    assert _failure(spark_type, '{"id": "x"}').partial == [{"id": None}]


def test_a_lone_surrogate_fails_naming_the_field() -> None:
    spark_type = StructType([StructField("s", StringType()), StructField("t", StringType())])
    failure = _failure(spark_type, '{"s": "a\\ud800", "t": "\\ud83d\\ude00"}')
    assert failure.reason == "s: a lone UTF-16 surrogate escape"
    assert failure.partial == {"s": None, "t": "\U0001f600"}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (12345678.9, "1.23456789E7"),
        (1e7, "1.0E7"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (-1.5e-5, "-1.5E-5"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (5e-324, "4.9E-324"),
        ({"a": [1.5e10, 2, "x\n\u2028"]}, '{"a":[1.5E10,2,"x\\n\u2028"]}'),
    ],
)
def test_a_string_column_writes_numbers_as_java_prints_them(value: Any, text: str) -> None:
    assert _field(StringType(), value) == text  # as Spark 4's from_json on Java 17


def test_decimal_text_reads_as_sparks_en_us_parser_does() -> None:
    assert _field(DecimalType(10, 2), "1,234.5") == Decimal("1234.50")
    assert _field(DecimalType(10, 2), "+.5") == Decimal("0.50")
    assert _field(DecimalType(10, 2), "\u0661\u0662") == Decimal("12.00")  # Arabic-Indic digits


@pytest.mark.parametrize("text", [b"{", b"\xff\xfe", b'{"id": 1} trailing', b"\xef\xbb\xbf{}"])
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


TINY = "1e-99999999999999999999"  # an exponent no Decimal holds: Jackson's double is 0.0


def test_a_number_beyond_decimals_fails_only_a_decimal_field_as_from_json() -> None:
    """``from_json`` (Spark 4.3) nulls a DECIMAL field holding it, reads it as 0.0 in a DOUBLE.

    A struct with a DECIMAL anywhere is parsed with exact numbers; the number must not fail
    the record where nobody reads it as a decimal.
    """
    spark_type = StructType(
        [
            StructField("x", DecimalType(10, 2)),
            StructField("f", DoubleType()),
            StructField("s", StringType()),
        ]
    )
    assert _read(spark_type, f'{{"f": {TINY}, "s": {TINY}, "q": {TINY}}}') == {
        "x": None,
        "f": 0.0,
        "s": "0.0",
    }
    assert _read(spark_type, '{"f": 1e99999999999999999999}')["f"] == math.inf
    failure = _failure(spark_type, f'{{"x": {TINY}, "s": "k"}}')
    assert failure.reason == f"x: expected a number fitting DECIMAL(10, 2), got number {TINY}"
    assert failure.partial == {"x": None, "f": None, "s": "k"}
