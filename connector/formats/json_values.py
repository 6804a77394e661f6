"""JSON values and Spark's Python values, both ways, by the rules of ``from_json`` / ``to_json``.

:func:`reader_for` builds, once per Spark type, a function from a payload's JSON text to the
value ``pa.array`` takes for that type. It reads as ``from_json`` does: a missing field is null,
an unknown field is ignored, names match case-sensitively, a string column takes any JSON value
as its JSON text, a timestamp takes an ISO-8601 string or whole epoch seconds, a decimal a number
or a string (rounded half up to its scale). Where ``from_json`` would give null for a value of the
wrong type (``"12"`` for a ``BIGINT``), this raises
:class:`~kafka_rescalable.errors.PayloadDecodeError`
naming the field, so ``mode`` decides: nothing turns null silently.

:func:`writer_for` goes back, as ``to_json`` writes: timestamps as ISO-8601 UTC with
milliseconds, dates as ISO dates, binary as base64, decimals as exact numbers, NaN and the
infinities as strings, null fields left out.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import pyspark.sql.types as T

from kafka_rescalable.errors import KafkaSourceError, PayloadDecodeError

__all__ = ["reader_for", "writer_for"]

_Convert = Callable[[Any], Any]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NON_NUMBERS = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "-Infinity": -math.inf,
    "INF": math.inf,
    "+INF": math.inf,
    "-INF": -math.inf,
}


class _Mismatch(KafkaSourceError):
    """A JSON value that does not fit its Spark type; ``path`` grows as it goes up."""

    def __init__(self, expected: str, value: Any) -> None:
        super().__init__(expected)
        self.expected = expected
        self.value = value
        self.path: list[str] = []

    def describe(self) -> str:
        where = "".join(reversed(self.path)).lstrip(".") or "the value"
        shown = json.dumps(self.value, default=str)
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


def reader_for(spark_type: T.DataType) -> Callable[[bytes | str], Any]:
    """Build the reader of one payload's JSON text as a value of ``spark_type``.

    Raises
    ------
    ValueError
        At build time, for a type ``from_json`` does not read either (a map with non-string
        keys, an interval).
    """
    convert, fast = _converter(spark_type)
    loads = _exact_loads if _has_decimal(spark_type) else json.loads

    def read(text: bytes | str) -> Any:
        try:
            value = loads(text)
        except (ValueError, UnicodeDecodeError) as error:
            raise PayloadDecodeError(f"not JSON: {error}") from None
        if value is None or type(value) is fast:
            return value
        try:
            return convert(value)
        except _Mismatch as mismatch:
            raise PayloadDecodeError(mismatch.describe()) from None

    return read


_DECIMAL_DECODER = json.JSONDecoder(parse_float=Decimal)


def _exact_loads(text: bytes | str) -> Any:
    """Parse with fractional numbers as Decimal: a decimal column needs their exact digits."""
    return _DECIMAL_DECODER.decode(text if isinstance(text, str) else text.decode("utf-8"))


def _has_decimal(spark_type: T.DataType) -> bool:
    if isinstance(spark_type, T.DecimalType):
        return True
    if isinstance(spark_type, T.StructType):
        return any(_has_decimal(field.dataType) for field in spark_type.fields)
    if isinstance(spark_type, T.ArrayType):
        return _has_decimal(spark_type.elementType)
    if isinstance(spark_type, T.MapType):
        return _has_decimal(spark_type.valueType)
    return False


def _converter(spark_type: T.DataType) -> tuple[_Convert, type | None]:
    """Return ``(convert, fast)``: a value whose type is exactly ``fast`` needs no conversion."""
    if isinstance(spark_type, T.StructType):
        return _struct(spark_type), None
    if isinstance(spark_type, T.ArrayType):
        return _array(spark_type), None
    if isinstance(spark_type, T.MapType):
        return _map(spark_type), None
    if isinstance(spark_type, T.DecimalType):
        return _decimal(spark_type), None
    for types, found in _LEAVES:
        if isinstance(spark_type, types):
            return found
    msg = f"from_json has no JSON form for {spark_type.simpleString()}"
    raise ValueError(msg)


def _struct(spark_type: T.StructType) -> _Convert:
    fields = tuple((field.name, *_converter(field.dataType)) for field in spark_type.fields)

    def convert(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise _Mismatch("an object", value)
        get = value.get
        out = {}
        for name, field_convert, fast in fields:
            item = get(name)
            fits = item is None or type(item) is fast  # _fits inline: once per field and record
            out[name] = item if fits else _nested(field_convert, item, ".{}", name)
        return out

    return convert


def _array(spark_type: T.ArrayType) -> _Convert:
    element, fast = _converter(spark_type.elementType)

    def convert(value: Any) -> list[Any]:
        if type(value) is not list:
            raise _Mismatch("an array", value)
        if _all_fit(value, fast):
            return value
        return [
            item if _fits(item, fast) else _nested(element, item, "[{}]", index)
            for index, item in enumerate(value)
        ]

    return convert


def _map(spark_type: T.MapType) -> _Convert:
    if not isinstance(spark_type.keyType, T.StringType):
        msg = f"a JSON object's keys are strings: {spark_type.simpleString()} cannot be read"
        raise ValueError(msg)
    element, fast = _converter(spark_type.valueType)

    def convert(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise _Mismatch("an object", value)
        if _all_fit(value.values(), fast):
            return value
        return {
            key: item if _fits(item, fast) else _nested(element, item, "[{!r}]", key)
            for key, item in value.items()
        }

    return convert


def _fits(item: Any, fast: type | None) -> bool:
    """Say whether ``item`` is kept as it is: a null, or exactly of type ``fast``."""
    return item is None or type(item) is fast


def _all_fit(items: Iterable[Any], fast: type | None) -> bool:
    """Say whether every item is null or of type ``fast``: the container needs no conversion."""
    return fast is not None and all(type(item) is fast or item is None for item in items)


def _nested(convert: _Convert, item: Any, place: str, key: Any) -> Any:
    """Convert a field's, element's or map value's ``item``; a mismatch learns where it was.

    ``place`` formats ``key`` as the path step (``.name``, ``[3]``, ``['k']``), only on a
    mismatch, so that values that fit pay nothing for it.
    """
    try:
        return convert(item)
    except _Mismatch as mismatch:
        mismatch.path.append(place.format(key))
        raise


def _decimal(spark_type: T.DecimalType) -> _Convert:
    step = Decimal(1).scaleb(-spark_type.scale)
    limit = Decimal(10) ** (spark_type.precision - spark_type.scale)
    expected = f"a number fitting DECIMAL({spark_type.precision}, {spark_type.scale})"

    def convert(value: Any) -> Decimal:
        kind = type(value)
        try:
            if kind is Decimal or kind is int or kind is str:
                number = Decimal(value).quantize(step, rounding=ROUND_HALF_UP)
            elif kind is float:
                number = Decimal(repr(value)).quantize(step, rounding=ROUND_HALF_UP)
            else:
                raise _Mismatch(expected, value)
        except (InvalidOperation, ValueError):
            raise _Mismatch(expected, value) from None
        if not number.is_finite() or abs(number) >= limit:
            raise _Mismatch(expected, value)
        return number

    return convert


def _integer(value: Any) -> int:
    raise _Mismatch("an integer", value)  # the fast path took every int; bool is no integer


def _fractional(value: Any) -> float:
    kind = type(value)
    if kind is int or kind is Decimal:
        return float(value)
    if kind is str and value in _NON_NUMBERS:
        return _NON_NUMBERS[value]
    raise _Mismatch("a number", value)


def _boolean(value: Any) -> bool:
    raise _Mismatch("true or false", value)


def _string(value: Any) -> str:
    # from_json keeps any other JSON value of a string column as its JSON text.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_number_text)


def _number_text(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(type(value).__name__)


def _binary(value: Any) -> bytes:
    if type(value) is str:
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error:
            pass
    raise _Mismatch("base64 text", value)


def _timestamp(value: Any) -> datetime:
    kind = type(value)
    if kind is int:
        return _EPOCH + timedelta(seconds=value)  # from_json: whole seconds since the epoch
    if kind is str:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise _Mismatch("an ISO-8601 timestamp", value) from None
        # A time without an offset is UTC: from_json would take the session time zone.
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    raise _Mismatch("an ISO-8601 timestamp or epoch seconds", value)


def _local_timestamp(value: Any) -> datetime:
    if type(value) is str:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is None:
            return parsed
    raise _Mismatch("an ISO-8601 timestamp without offset", value)


def _date(value: Any) -> date:
    if type(value) is str:
        try:
            return datetime.fromisoformat(value).date()  # from_json drops a time of day too
        except ValueError:
            pass
    raise _Mismatch("an ISO-8601 date", value)


_LEAVES: tuple[tuple[type | tuple[type, ...], tuple[_Convert, type | None]], ...] = (
    (T.StringType, (_string, str)),
    ((T.LongType, T.IntegerType, T.ShortType, T.ByteType), (_integer, int)),
    ((T.DoubleType, T.FloatType), (_fractional, float)),
    (T.BooleanType, (_boolean, bool)),
    (T.BinaryType, (_binary, None)),
    (T.TimestampType, (_timestamp, None)),
    (T.TimestampNTZType, (_local_timestamp, None)),
    (T.DateType, (_date, None)),
)


def writer_for(spark_type: T.DataType) -> tuple[Callable[[Any], Any], Callable[[Any], str]]:
    """Build ``(to_json_value, dumps)`` for a column of ``spark_type``.

    ``to_json_value`` turns a value as pyarrow's ``to_pylist`` gives it into plain JSON values
    (decimals stay :class:`~decimal.Decimal`, so that validation sees numbers); ``dumps``
    writes those as compact JSON text, decimals as exact numbers.
    """
    return _plain(spark_type), _dumps if _has_decimal(spark_type) else _dumps_fast


def _plain(spark_type: T.DataType) -> Callable[[Any], Any]:
    if isinstance(spark_type, T.StructType):
        fields = tuple((field.name, _plain(field.dataType)) for field in spark_type.fields)
        return lambda row: {
            name: write(row[name]) for name, write in fields if row.get(name) is not None
        }
    if isinstance(spark_type, T.ArrayType):
        element = _plain(spark_type.elementType)
        return lambda items: [None if item is None else element(item) for item in items]
    if isinstance(spark_type, T.MapType):
        value = _plain(spark_type.valueType)
        return lambda pairs: {
            str(key): None if item is None else value(item)
            for key, item in (pairs.items() if isinstance(pairs, dict) else pairs)
        }
    if isinstance(spark_type, T.TimestampType):
        return _iso_utc
    if isinstance(spark_type, T.TimestampNTZType):
        return lambda value: value.isoformat(timespec="milliseconds")
    if isinstance(spark_type, T.DateType):
        return date.isoformat
    if isinstance(spark_type, T.BinaryType):
        return lambda value: base64.b64encode(value).decode("ascii")
    if isinstance(spark_type, T.DoubleType | T.FloatType):
        return _fractional_value
    return lambda value: value


def _fractional_value(value: float) -> float | str:
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _iso_utc(value: datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def _dumps_fast(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _dumps(value: Any) -> str:
    """Write JSON text with decimals as exact numbers, which ``json.dumps`` cannot."""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dict):
        return "{" + ",".join(f"{_dumps_fast(k)}:{_dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dumps(v) for v in value) + "]"
    return _dumps_fast(value)
