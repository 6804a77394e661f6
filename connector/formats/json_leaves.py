"""One JSON value read as one Spark leaf type (numbers, text, dates...), as ``from_json`` does.

Each reader takes a value ``json.loads`` gave and returns what ``pa.array`` takes for the type,
or raises :class:`Mismatch`; the containers (structs, arrays, maps) and the path of a failure
are :mod:`~kafka_rescalable.formats.json_values`'s. Integers must fit their type (``TINYINT``
from -128 to 127: Spark wraps 128 to 255 around, this refuses them), fractional types take
integers and Spark's NaN and infinity strings, decimals take numbers and numeric strings
(commas dropped, as Spark's en-US parser does) rounded half up, timestamps take text in
Spark's forms or whole epoch seconds, dates text in Spark's forms
(:mod:`~kafka_rescalable.formats.json_times`), binary base64 text, and a string field any
value, others as their JSON text (:mod:`~kafka_rescalable.formats.json_text`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any

import pyspark.sql.types as T

from kafka_rescalable.errors import KafkaSourceError
from kafka_rescalable.formats.json_text import NumberBeyondDecimal, jackson_text
from kafka_rescalable.formats.json_times import parse_date, parse_local_timestamp, parse_timestamp

__all__ = ["Convert", "Mismatch", "leaf_reader"]

Convert = Callable[[Any], Any]
"""One JSON value in, the Python value of a Spark type out; raises :class:`Mismatch`."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NON_NUMBERS = {  # the strings Spark's JSON parser takes for a DOUBLE or FLOAT
    "NaN": float("nan"),
    "Infinity": float("inf"),
    "+Infinity": float("inf"),
    "+INF": float("inf"),
    "-Infinity": float("-inf"),
    "-INF": float("-inf"),
}
_INTEGERS = ((T.ByteType, 8), (T.ShortType, 16), (T.IntegerType, 32), (T.LongType, 64))
_MICROS = 10**6
_DECIMALS = Context(prec=80)
"""Room for any DECIMAL(38, s) value while rounding (the default context keeps 28 digits)."""
_DECIMAL_TEXT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")  # java BigDecimal's


class Mismatch(KafkaSourceError):
    """A JSON value that does not fit its Spark type; ``path`` grows as it goes up."""

    def __init__(self, expected: str, value: Any) -> None:
        super().__init__(expected)
        self.expected = expected
        self.value = value
        self.path: list[str] = []

    def describe(self, prefix: str = "") -> str:
        """Say where (``prefix``, the path above, then the path below) and what failed."""
        where = (prefix + "".join(reversed(self.path))).lstrip(".") or "the value"
        value = self.value
        if isinstance(value, NumberBeyondDecimal):
            shown = value.text
        elif isinstance(value, Decimal):
            shown = str(value)
        else:
            shown = json.dumps(value, default=str)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return f"{where}: expected {self.expected}, got {_json_kind(self.value)} {shown}"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float | Decimal):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def leaf_reader(spark_type: T.DataType) -> tuple[Convert, type | None, tuple[int, int] | None]:
    """Return ``(convert, fast, bounds)``: a value of type ``fast`` (within ``bounds``) is kept.

    ``convert`` takes any JSON value; ``fast`` lets a caller skip the call for the common case.

    Raises
    ------
    ValueError
        For a type ``from_json`` has no JSON form for (intervals, variants...).
    """
    if isinstance(spark_type, T.DecimalType):
        return _decimal(spark_type), None, None
    for integer, bits in _INTEGERS:
        if isinstance(spark_type, integer):
            low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
            return _integer(low, high, spark_type.simpleString().upper()), int, (low, high)
    for types, convert, fast in _LEAVES:
        if isinstance(spark_type, types):
            return convert, fast, None
    msg = f"from_json has no JSON form for {spark_type.simpleString()}"
    raise ValueError(msg)


def _decimal(spark_type: T.DecimalType) -> Convert:
    step = Decimal(1).scaleb(-spark_type.scale)
    limit = Decimal(10) ** (spark_type.precision - spark_type.scale)
    expected = f"a number fitting DECIMAL({spark_type.precision}, {spark_type.scale})"

    def convert(value: Any) -> Decimal:
        kind = type(value)
        if kind is str:
            value = value.replace(",", "")  # as Spark's en-US decimal parser does
            if not _DECIMAL_TEXT.fullmatch(value):
                raise Mismatch(expected, value)
        elif kind is float:
            value = repr(value)
        elif kind is not Decimal and kind is not int:
            raise Mismatch(expected, value)
        try:
            number = Decimal(value).quantize(step, ROUND_HALF_UP, _DECIMALS)
        except (InvalidOperation, ValueError):
            raise Mismatch(expected, value) from None
        if not number.is_finite() or number.copy_abs() >= limit:
            raise Mismatch(expected, value)
        return number

    return convert


def _integer(low: int, high: int, name: str) -> Convert:
    expected = f"an integer within {name} ({low} to {high})"

    def convert(value: Any) -> int:
        if type(value) is int and low <= value <= high:
            return value
        raise Mismatch(expected if type(value) is int else "an integer", value)

    return convert


def _fractional(value: Any) -> float:
    kind = type(value)
    if kind is float:
        return value
    if kind is int:
        try:
            return float(value)
        except OverflowError:  # as Java's BigInteger.doubleValue, beyond the largest double
            return float("inf") if value > 0 else float("-inf")
    if kind is Decimal:
        return float(value)
    if kind is str and value in _NON_NUMBERS:
        return _NON_NUMBERS[value]
    if kind is NumberBeyondDecimal:
        return float(value)
    raise Mismatch("a number", value)


def _boolean(value: Any) -> bool:
    if type(value) is bool:
        return value
    raise Mismatch("true or false", value)


def _string(value: Any) -> str:
    # from_json keeps any other JSON value as its JSON text
    return value if type(value) is str else jackson_text(value)


def _binary(value: Any) -> bytes:
    if type(value) is str:
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error:
            pass
    raise Mismatch("base64 text", value)


def _timestamp(value: Any) -> datetime:
    kind = type(value)
    if kind is int:  # whole seconds since the epoch, as from_json reads them
        try:
            return _EPOCH + timedelta(microseconds=value * _MICROS)
        except OverflowError:
            raise Mismatch("epoch seconds within years 1 to 9999", value) from None
    if kind is str:
        parsed = parse_timestamp(value)
        if parsed is not None:
            return parsed
        raise Mismatch("a timestamp (ISO-8601 or Spark's forms, years 1 to 9999)", value)
    raise Mismatch("a timestamp text or epoch seconds", value)


def _local_timestamp(value: Any) -> datetime:
    parsed = parse_local_timestamp(value) if type(value) is str else None
    if parsed is None:
        raise Mismatch("a timestamp without a time zone", value)
    return parsed


def _date(value: Any) -> Any:
    parsed = parse_date(value) if type(value) is str else None
    if parsed is None:
        raise Mismatch("a date (yyyy-[m]m-[d]d, years 1 to 9999)", value)
    return parsed


_LEAVES: tuple[tuple[type | tuple[type, ...], Convert, type | None], ...] = (
    (T.StringType, _string, str),
    ((T.DoubleType, T.FloatType), _fractional, float),
    (T.BooleanType, _boolean, bool),
    (T.BinaryType, _binary, None),
    (T.TimestampType, _timestamp, None),
    (T.TimestampNTZType, _local_timestamp, None),
    (T.DateType, _date, None),
)
