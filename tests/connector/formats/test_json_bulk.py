"""The bulk JSON reader gives exactly what the record-by-record reader gives, or gives up.

Random schemas and random JSON documents, written with random spacing and number forms, and
mixed with the cases where pyarrow's reader and ``from_json``'s rules part (a number in a
string, a fraction in an integer, more decimal digits than the scale, epoch numbers for a
timestamp, ``-0``, ``Inf``, ``null``, pretty-printed text, repeated keys, lone surrogates...):
the bulk column must equal the record-by-record one, bit for bit, or be ``None``; it must be
``None`` whenever a record does not decode. Valid documents in the common forms must be read
in bulk, so the property cannot hold by never using the bulk reader.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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
)

from kafka_rescalable.errors import PayloadDecodeError
from kafka_rescalable.formats.json_bulk import _pyarrow_is_strict, bulk_decoder
from kafka_rescalable.formats.json_values import reader_for

LEAVES: list[DataType] = [
    LongType(),
    IntegerType(),
    ShortType(),
    ByteType(),
    DoubleType(),
    FloatType(),
    BooleanType(),
    StringType(),
    DecimalType(5, 2),
    DecimalType(12, 2),
    DecimalType(38, 10),
    DecimalType(3, 3),
    DateType(),
    TimestampType(),
    TimestampNTZType(),
]
NAMES = ["id", "a b", "é", "x.y", "ID", "n", "t"]
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Raw(str):
    """JSON text written as it is (a number's exact form, a literal Python cannot write)."""


class Obj(list):  # type: ignore[type-arg]
    """An object as its (key, value) pairs, so that a key can be repeated."""


def _struct(inner: st.SearchStrategy[DataType]) -> st.SearchStrategy[StructType]:
    names = st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True)
    return names.flatmap(
        lambda chosen: st.tuples(*[inner for _ in chosen]).map(
            lambda types: StructType(
                [StructField(n, t) for n, t in zip(chosen, types, strict=True)]
            )
        )
    )


def spark_types() -> st.SearchStrategy[StructType]:
    inner = st.recursive(
        st.sampled_from(LEAVES),
        lambda children: st.one_of(children.map(ArrayType), _struct(children)),
        max_leaves=6,
    )
    return _struct(inner)


# -- values ------------------------------------------------------------------------------------

BOUNDS = {ByteType: 7, ShortType: 15, IntegerType: 31, LongType: 63}


def _integers(bits: int, nasty: bool) -> st.SearchStrategy[Any]:
    top = 2**bits
    good = st.one_of(st.integers(-top, top - 1), st.sampled_from([-top, top - 1, 0]))
    if not nasty:
        return good
    odd = st.sampled_from(
        [top, -top - 1, Raw("-0"), Raw("1.0"), Raw("1e2"), 1.5, "12", True, 10**30]
    )
    return st.one_of(good, good, odd)


def _doubles(nasty: bool) -> st.SearchStrategy[Any]:
    good = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(10**6), 10**6))
    if not nasty:
        return good
    odd = st.sampled_from(
        [
            Raw("-0"),
            Raw("-0.0"),
            Raw("1e400"),
            Raw("Inf"),
            Raw("-Inf"),
            Raw("-NaN"),
            Raw("NaN"),
            Raw("Infinity"),
            10**30,
            "NaN",
            "+INF",
            "INF",
            "1.5",
            float("inf"),
            1e-320,
        ]
    )
    return st.one_of(good, st.floats(), odd)


def _decimals(spark_type: DecimalType, nasty: bool) -> st.SearchStrategy[Any]:
    whole = spark_type.precision - spark_type.scale
    scale = st.integers(0, spark_type.scale + (3 if nasty else 0))

    def text(sign: bool, digits: int, places: int, value: int) -> str:
        head = str(value % 10**digits) if digits else "0"
        tail = str(value // 7 % 10**places).rjust(places, "0") if places else ""
        return ("-" if sign else "") + head + ("." + tail if places else "")

    numbers = st.builds(
        text,
        st.booleans(),
        st.integers(0, whole + (1 if nasty else 0)),
        scale,
        st.integers(0, 10**40),
    )
    good = st.one_of(numbers.map(Raw), numbers)
    if not nasty:
        return good
    odd = st.sampled_from(
        ["1,234.5", " 1.5", "1_0", "1e1", ".5", "+5", "NaN", Raw("1E-2"), 1.25, 7]
    )
    return st.one_of(good, good, odd)


def _dates(nasty: bool) -> st.SearchStrategy[Any]:
    good = st.dates(min_value=date(1, 1, 1)).map(date.isoformat)
    if not nasty:
        return good
    odd = st.sampled_from(
        ["2024-1-2", "2024-02-30", "0000-01-01", " 2024-01-02", "2024-01-02T03:04", 19000, "2024"]
    )
    return st.one_of(good, odd)


def _times(zoned: bool, nasty: bool) -> st.SearchStrategy[Any]:
    moments = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))
    separators = st.sampled_from(["T", " "])
    fractions = st.integers(0, 9)
    zones = st.sampled_from(["Z", "+05:30", "-00:00", "+18:00", "-03:00", ""] if zoned else [""])

    def write(moment: datetime, separator: str, digits: int, zone: str) -> str:
        text = f"{moment.year:04d}-" + moment.strftime(f"%m-%d{separator}%H:%M:%S")
        micros = f"{moment.microsecond:06d}{moment.microsecond % 1000:03d}"
        return text + ("." + micros[:digits] if digits else "") + zone

    good = st.builds(write, moments, separators, fractions, zones)
    if not nasty:
        return good
    odd = st.sampled_from(
        [
            "2024-01-02T03:04:05+18:01",
            "2024-01-02T03:04:05+19:00",
            "2024-01-02T24:00:00Z",
            "2024-02-30T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "2024-01-02T03:04:05 PST",
            "2024-1-2",
            "2024-01-02T03:04:05+05",
            1700000000,
            1.5,
            "20240102T030405Z",
        ]
    )
    return st.one_of(good, odd)


def _strings(nasty: bool) -> st.SearchStrategy[Any]:
    good = st.text(max_size=12)
    if not nasty:
        return good
    odd = st.sampled_from(
        [Raw('"\\ud800"'), Raw('"\\ud83d\\ude00"'), 12, 1.5e10, True, Obj([("a", [1, 2.5])]), []]
    )
    return st.one_of(good, good, odd)


def values(spark_type: DataType, nasty: bool) -> st.SearchStrategy[Any]:
    leaf: st.SearchStrategy[Any]
    if isinstance(spark_type, StructType):
        fields = [
            st.one_of(st.none(), values(f.dataType, nasty)).map(lambda v, n=f.name: (n, v))
            for f in spark_type.fields
        ]
        pairs = st.tuples(*fields).flatmap(
            lambda chosen: (
                st.lists(st.sampled_from(chosen), max_size=len(chosen) + 1)
                if nasty
                else st.permutations(chosen)
            )
        )
        extra = st.lists(st.tuples(st.sampled_from(["zz", "Id"]), st.integers()), max_size=1)
        leaf = st.builds(lambda p, e: Obj([*p, *e]), pairs, extra)
    elif isinstance(spark_type, ArrayType):
        leaf = st.lists(st.one_of(st.none(), values(spark_type.elementType, nasty)), max_size=3)
    elif isinstance(spark_type, MapType):  # the partial bulk reader's (test_json_partial.py)
        keys = st.sampled_from(["k", "K", "a b", "é", "id"])
        item = st.tuples(keys, st.one_of(st.none(), values(spark_type.valueType, nasty)))
        leaf = st.lists(item, max_size=3, unique_by=None if nasty else lambda kv: kv[0]).map(Obj)
    elif isinstance(spark_type, BinaryType):
        leaf = st.binary(max_size=6).map(lambda b: base64.b64encode(b).decode())
        if nasty:
            leaf = st.one_of(leaf, st.sampled_from(["!!", "QQ", "QQ==\n", 12]))
    elif isinstance(spark_type, DecimalType):
        leaf = _decimals(spark_type, nasty)
    elif isinstance(spark_type, DoubleType | FloatType):
        leaf = _doubles(nasty)
    elif isinstance(spark_type, BooleanType):
        leaf = (
            st.booleans() if not nasty else st.one_of(st.booleans(), st.sampled_from([1, "true"]))
        )
    elif isinstance(spark_type, StringType):
        leaf = _strings(nasty)
    elif isinstance(spark_type, DateType):
        leaf = _dates(nasty)
    elif isinstance(spark_type, TimestampType | TimestampNTZType):
        leaf = _times(isinstance(spark_type, TimestampType), nasty)
    else:
        leaf = _integers(BOUNDS[type(spark_type)], nasty)
    if nasty and not isinstance(spark_type, StructType):
        return st.one_of(leaf, leaf, leaf, st.sampled_from([Obj([("k", 1)]), [1], "x"]))
    return leaf


def write(value: Any, spaced: bool, indent: bool) -> str:
    """Write a value as JSON text, with or without spaces or line breaks."""
    comma, colon = (", ", ": ") if spaced else (",", ":")
    if indent:
        comma = ",\n  "
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, Obj):
        items = comma.join(f"{json.dumps(k)}{colon}{write(v, spaced, indent)}" for k, v in value)
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + comma.join(write(v, spaced, indent) for v in value) + "]"
    return json.dumps(value, ensure_ascii=spaced)


def payloads(spark_type: StructType, nasty: bool) -> st.SearchStrategy[bytes | None]:
    document = st.builds(
        write, values(spark_type, nasty), st.booleans(), st.booleans() if nasty else st.just(False)
    ).map(str.encode)
    if not nasty:
        return document
    odd = st.sampled_from(
        [
            None,
            b"null",
            b"",
            b"  ",
            b'{"id": 1} x',
            b'{"id": 1}{"id": 2}',
            b"\xef\xbb\xbf{}",
            b"{\xff}",
            b"[]",
            b"{",
            b'\n{"id": 1}\n',
            b' {"n": 1} ',
        ]
    )
    return st.one_of(document, document, document, odd)


# -- the properties -----------------------------------------------------------------------------


def _same(value: Any) -> Any:
    """Put a value in a form where equality is bit for bit (-0.0 is not 0.0, NaN is NaN)."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else struct.pack(">d", value)
    if isinstance(value, dict):
        return {k: _same(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_same(v) for v in value]  # a map's entries come as (key, value) tuples
    return value


def _both(spark_type: StructType, batch: list[bytes | None]) -> tuple[Any, Any, bool]:
    read = reader_for(spark_type)
    target = to_arrow_type(spark_type, timezone="UTC")
    failed = False
    expected = []
    for payload in batch:
        try:
            expected.append(None if payload is None else read(payload))
        except PayloadDecodeError:
            failed = True
    decode = bulk_decoder(spark_type, read)
    assert decode is not None
    bulk = decode(pa.array(batch, pa.binary()))
    return bulk, None if failed else pa.array(expected, target), failed


@SETTINGS
@given(st.data())
def test_bulk_equals_record_by_record_or_gives_up(data: st.DataObject) -> None:
    spark_type = data.draw(spark_types())
    batch = data.draw(st.lists(payloads(spark_type, nasty=True), min_size=1, max_size=10))
    bulk, expected, failed = _both(spark_type, batch)
    if failed:
        assert bulk is None
    elif bulk is not None:
        assert bulk.type == expected.type
        assert _same(bulk.to_pylist()) == _same(expected.to_pylist())


@SETTINGS
@given(st.data())
def test_valid_documents_in_the_common_forms_are_read_in_bulk(data: st.DataObject) -> None:
    spark_type = data.draw(spark_types())
    batch = data.draw(st.lists(payloads(spark_type, nasty=False), min_size=1, max_size=10))
    bulk, expected, failed = _both(spark_type, batch)
    assert not failed
    assert bulk is not None
    assert bulk.type == expected.type
    assert _same(bulk.to_pylist()) == _same(expected.to_pylist())


def test_the_installed_pyarrow_is_strict_enough_for_the_bulk_reader() -> None:
    assert _pyarrow_is_strict()  # else nothing is read in bulk, and the tests above prove little


ORDER = StructType(
    [
        StructField("id", LongType()),
        StructField("amount", DecimalType(10, 2)),
        StructField("at", TimestampType()),
        StructField("price", DoubleType()),
    ]
)


def test_the_nasty_cases_of_the_issue_read_as_record_by_record() -> None:
    batch = [
        b'{"id": 1, "amount": 12.345, "at": 1700000000, "price": -0}',  # all send back
        b'{"id": 2, "amount": "12.34", "at": "2024-01-02T03:04:05+05:30", "price": 1.5}',
        b'{\n "id": 3\n}',
        b"",
        None,
        b'{"id": 4, "id": 5}',
    ]
    bulk, expected, failed = _both(ORDER, batch)
    assert not failed and bulk is not None
    assert _same(bulk.to_pylist()) == _same(expected.to_pylist())
    assert bulk.to_pylist()[0] == {
        "id": 1,
        "amount": Decimal("12.35"),
        "at": datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC),
        "price": 0.0,
    }


def test_a_record_that_does_not_decode_gives_the_batch_up() -> None:
    deep = b'{"id": 1, "z": ' + b"[" * 2000 + b"]" * 2000 + b"}"  # pyarrow reads it, Python not
    bad_ones = (b'{"id": "12"}', b'{"id": 1.5}', b"null", b'{"price": Inf}', b'{"id": 1} x', deep)
    for bad in bad_ones:
        bulk, _, failed = _both(ORDER, [b'{"id": 1}', bad])
        assert failed and bulk is None


def test_after_a_batch_mostly_read_again_the_next_batches_skip_the_bulk_reader() -> None:
    decode = bulk_decoder(ORDER, reader_for(ORDER))
    assert decode is not None
    epoch = pa.array([b'{"id": 1, "at": 1700000000}'] * 4, pa.binary())  # numbers: sent back
    clean = pa.array([b'{"id": 1, "at": "2024-01-02T03:04:05Z"}'] * 4, pa.binary())
    assert decode(epoch) is not None  # read again record by record, inside the decoder
    assert decode(clean) is None  # skipped once
    assert decode(epoch) is not None
    assert decode(clean) is None  # skipped twice, then back
    assert decode(clean) is None
    assert decode(clean) is not None
    assert decode(pa.array([b'{"id": "x"}'], pa.binary())) is None  # given up
    assert decode(clean) is None  # skipped
    assert decode(clean) is not None
    one = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(0)))
    assert decode(clean).to_pylist()[0]["at"] == one
