"""Avro schemas read as Spark types, as spark-avro maps them; no I/O, no Kafka.

A record is a struct whose fields are nullable only when their Avro type admits null,
``["null", T]`` is a nullable ``T``, ``[int, long]`` is a long and ``[float, double]`` a
double, any other union a struct of ``member0``, ``member1``, ... (one nullable field per
non-null member), an enum a string, ``fixed`` and ``bytes`` binary, a ``decimal`` a decimal,
``date`` a date, ``timestamp-*`` a timestamp, ``local-timestamp-*`` a timestamp without time
zone; other logical types (``uuid``, ``time-millis``, ...) keep their underlying type, and
:func:`without_ignored_logical_types` removes them from a schema before a decoder parses it,
so that no decoder builds a ``UUID`` or a ``time`` to undo.

The walker over named types (:class:`SchemaWalk`) and the rules on unions are shared with
:mod:`kafka_rescalable.formats.avro.values` (decoded values to Arrow's and back) and
:mod:`kafka_rescalable.formats.avro.writer_schema` (Spark types to Avro schemas).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import pyspark.sql.types as T

from kafka_rescalable.errors import KafkaSourceError

__all__ = [
    "KEPT_LOGICAL",
    "PRIMITIVES",
    "AvroMappingError",
    "SchemaWalk",
    "as_declared",
    "non_null",
    "one_type",
    "record_without_fields",
    "spark_type_of",
    "without_ignored_logical_types",
]

KEPT_LOGICAL: Final = {
    "decimal": ("bytes", "fixed"),
    "date": ("int",),
    "timestamp-millis": ("long",),
    "timestamp-micros": ("long",),
    "local-timestamp-millis": ("long",),
    "local-timestamp-micros": ("long",),
}
"""The logical types Spark maps to a type of their own, with the Avro types they may annotate."""

PRIMITIVES: Final[Mapping[str, T.DataType]] = {
    "boolean": T.BooleanType(),
    "int": T.IntegerType(),
    "long": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "bytes": T.BinaryType(),
    "string": T.StringType(),
    "null": T.NullType(),
}


_MAX_PRECISION: Final = 38
"""Spark's widest decimal."""

NAMED: Final = ("record", "error", "enum", "fixed")


class AvroMappingError(KafkaSourceError, ValueError):
    """A schema Spark has no type for (recursive, a decimal wider than 38 digits, ...).

    The codec turns it into an :class:`~kafka_rescalable.errors.InvalidOptionError` naming the
    option
    the schema came from.
    """


def without_ignored_logical_types(schema: Any) -> Any:
    """Return the schema JSON without the logical types Spark reads as their plain type.

    ``uuid`` stays a string, ``time-millis`` an int, ``time-micros`` and ``timestamp-nanos``
    longs, as spark-avro reads them; removing them before fastavro parses the schema makes
    fastavro return those plain values, so nothing converts them back per record.
    """
    if isinstance(schema, list):
        return [without_ignored_logical_types(member) for member in schema]
    if not isinstance(schema, dict):
        return schema
    cleaned = dict(schema)
    logical = cleaned.get("logicalType")
    if logical is not None and cleaned.get("type") not in KEPT_LOGICAL.get(logical, ()):
        del cleaned["logicalType"]
    kind = cleaned.get("type")
    if isinstance(kind, (dict, list)):
        cleaned["type"] = without_ignored_logical_types(kind)
    if kind == "record" or kind == "error":
        cleaned["fields"] = [
            {**field, "type": without_ignored_logical_types(field["type"])}
            if isinstance(field, dict) and "type" in field
            else field  # fastavro says what is wrong with it
            for field in cleaned.get("fields", ())
        ]
    for part in ("items", "values"):
        if part in cleaned and kind in ("array", "map"):
            cleaned[part] = without_ignored_logical_types(cleaned[part])
    return cleaned


def record_without_fields(schema: Any) -> str | None:
    """Name the first record of the schema JSON that has no ``fields``, as Avro refuses it.

    fastavro takes such a record as one of no fields, which reads every payload as an empty
    row; Avro's Java parser (and so ``from_avro``) refuses the schema. ``None`` when every
    record has its ``fields``.
    """
    if isinstance(schema, list):
        return next(filter(None, map(record_without_fields, schema)), None)
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if kind in ("record", "error"):
        if "fields" not in schema:
            return f"{kind} {schema.get('name')!r} has no 'fields'"
        fields = schema["fields"] if isinstance(schema["fields"], list) else []
        types = [field.get("type") for field in fields if isinstance(field, dict)]
        return next(filter(None, map(record_without_fields, types)), None)
    parts = [kind, schema.get("items"), schema.get("values")]
    return next(filter(None, map(record_without_fields, parts)), None)


# --- Avro -> Spark ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mapped:
    data_type: T.DataType
    nullable: bool


class SchemaWalk:
    """One walk over a parsed schema: named types by full name, the records being mapped."""

    def __init__(self) -> None:
        self.named: dict[str, Any] = {}
        self.open_records: list[str] = []

    def resolve(self, schema: Any) -> Any:
        """Follow a reference to a named type defined earlier in the schema."""
        if isinstance(schema, str) and schema not in PRIMITIVES:
            try:
                return self.named[schema]
            except KeyError:
                raise AvroMappingError(f"unknown named type {schema!r}") from None
        if isinstance(schema, dict) and schema.get("type") in NAMED and "name" in schema:
            self.named.setdefault(schema["name"], schema)
        return schema


_WIDENED: Final = (["int", "long"], ["double", "float"])
"""Unions of numbers Spark reads as the wider one (long, double), as spark-avro does."""


def non_null(members: list[Any]) -> list[Any]:
    """Give a union's members but ``null``."""
    return [member for member in members if member != "null"]


def one_type(others: list[Any]) -> bool:
    """Say whether a union's non-null members are read as one Spark type, not a struct."""
    return len(others) == 1 or sorted(map(str, others)) in _WIDENED


def spark_type_of(schema: Any) -> tuple[T.DataType, bool]:
    """Map a schema parsed by ``fastavro.parse_schema`` to its Spark type and nullability.

    Raises
    ------
    AvroMappingError
        For a recursive record (Spark types cannot be recursive), a decimal of more than 38
        digits, a union of nothing but ``null``, or a type Avro does not have.
    """
    mapped = _map(schema, SchemaWalk())
    return mapped.data_type, mapped.nullable


def as_declared(data_type: T.DataType) -> T.DataType:
    """Return ``data_type`` as Spark parses it back from DDL: arrays and maps may hold nulls.

    DDL has no way to say that an array's elements or a map's values are never null, so the
    type the source declares (as DDL) comes back with ``containsNull`` and
    ``valueContainsNull`` set; spark-avro's ``false`` there cannot survive the declaration.
    """
    if isinstance(data_type, T.StructType):
        return T.StructType(
            [
                T.StructField(field.name, as_declared(field.dataType), field.nullable)
                for field in data_type.fields
            ]
        )
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(as_declared(data_type.elementType), True)
    if isinstance(data_type, T.MapType):
        return T.MapType(data_type.keyType, as_declared(data_type.valueType), True)
    return data_type


def _map(schema: Any, walk: SchemaWalk) -> _Mapped:
    if isinstance(schema, str) and schema in PRIMITIVES:
        return _Mapped(PRIMITIVES[schema], schema == "null")
    if isinstance(schema, list):
        return _map_union(schema, walk)
    if isinstance(schema, str) and schema in walk.open_records:
        raise _recursive(schema, walk)
    schema = walk.resolve(schema)
    if not isinstance(schema, dict):
        raise AvroMappingError(f"not an Avro schema: {schema!r}")
    kind = schema["type"]
    logical = schema.get("logicalType")
    if logical == "decimal":
        precision, scale = int(schema["precision"]), int(schema.get("scale", 0))
        if not 0 < precision <= _MAX_PRECISION or not 0 <= scale <= precision:
            msg = (
                f"decimal({precision}, {scale}) does not fit Spark's decimals (precision 1 to "
                f"{_MAX_PRECISION}, scale 0 to the precision)"
            )
            raise AvroMappingError(msg)
        return _Mapped(T.DecimalType(precision, scale), False)
    if logical == "date":
        return _Mapped(T.DateType(), False)
    if logical in ("timestamp-millis", "timestamp-micros"):
        return _Mapped(T.TimestampType(), False)
    if logical in ("local-timestamp-millis", "local-timestamp-micros"):
        return _Mapped(T.TimestampNTZType(), False)
    if kind in ("record", "error"):
        return _map_record(schema, walk)
    if kind == "enum":
        return _Mapped(T.StringType(), False)
    if kind == "fixed":
        return _Mapped(T.BinaryType(), False)
    if kind == "array":
        items = _map(schema["items"], walk)
        return _Mapped(T.ArrayType(items.data_type, items.nullable), False)
    if kind == "map":
        values = _map(schema["values"], walk)
        return _Mapped(T.MapType(T.StringType(), values.data_type, values.nullable), False)
    return _map(kind, walk)  # {"type": "int"} and the like


def _map_record(schema: Mapping[str, Any], walk: SchemaWalk) -> _Mapped:
    name = schema["name"]
    if name in walk.open_records:
        raise _recursive(name, walk)
    walk.open_records.append(name)
    fields = []
    for field in schema["fields"]:
        mapped = _map(field["type"], walk)
        fields.append(T.StructField(field["name"], mapped.data_type, mapped.nullable))
    walk.open_records.pop()
    return _Mapped(T.StructType(fields), False)


def _map_union(members: list[Any], walk: SchemaWalk) -> _Mapped:
    nullable = "null" in members
    others = non_null(members)
    if not others:
        raise AvroMappingError("a union of nothing but 'null' has no Spark type")
    if len(others) == 1:
        return _Mapped(_map(others[0], walk).data_type, True)
    if sorted(map(str, others)) == ["int", "long"]:
        return _Mapped(T.LongType(), nullable)
    if sorted(map(str, others)) == ["double", "float"]:
        return _Mapped(T.DoubleType(), nullable)
    fields = [
        T.StructField(f"member{index}", _map(member, walk).data_type, True)
        for index, member in enumerate(others)
    ]
    return _Mapped(T.StructType(fields), nullable)


def _recursive(name: str, walk: SchemaWalk) -> AvroMappingError:
    path = " -> ".join([*walk.open_records, name])
    msg = (
        f"record {name!r} contains itself ({path}); Spark types cannot be recursive, so "
        "give a reader schema that stops the recursion"
    )
    return AvroMappingError(msg)
