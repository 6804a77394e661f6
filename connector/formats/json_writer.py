"""Spark's Python values to JSON text, as ``to_json`` writes them (the sink's JSON encoder).

Timestamps as ISO-8601 UTC with milliseconds, dates as ISO dates, binary as base64, decimals
as exact numbers, NaN and the infinities as strings, null fields left out.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pyspark.sql.types as T

__all__ = ["has_decimal", "writer_for"]


def has_decimal(spark_type: T.DataType) -> bool:
    """Say whether ``spark_type`` holds a DECIMAL anywhere (its numbers need exact digits)."""
    if isinstance(spark_type, T.DecimalType):
        return True
    if isinstance(spark_type, T.StructType):
        return any(has_decimal(field.dataType) for field in spark_type.fields)
    if isinstance(spark_type, T.ArrayType):
        return has_decimal(spark_type.elementType)
    if isinstance(spark_type, T.MapType):
        return has_decimal(spark_type.valueType)
    return False


def writer_for(spark_type: T.DataType) -> tuple[Callable[[Any], Any], Callable[[Any], str]]:
    """Build ``(to_json_value, dumps)`` for a column of ``spark_type``.

    ``to_json_value`` turns a value as pyarrow's ``to_pylist`` gives it into plain JSON values
    (decimals stay :class:`~decimal.Decimal`, so that validation sees numbers); ``dumps``
    writes those as compact JSON text, decimals as exact numbers.
    """
    return _plain(spark_type), _dumps if has_decimal(spark_type) else _dumps_fast


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
