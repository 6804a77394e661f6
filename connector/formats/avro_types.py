"""Avro schemas and Spark types, both ways, as spark-avro maps them; no I/O, no Kafka.

Reading (:func:`spark_type_of`): a record is a struct whose fields are nullable only when their
Avro type admits null, ``["null", T]`` is a nullable ``T``, ``[int, long]`` is a long and
``[float, double]`` a double, any other union a struct of ``member0``, ``member1``, ... (one
nullable field per non-null member), an enum a string, ``fixed`` and ``bytes`` binary, a
``decimal`` a decimal, ``date`` a date, ``timestamp-*`` a timestamp, ``local-timestamp-*`` a
timestamp without time zone; other logical types (``uuid``, ``time-millis``, ...) keep their
underlying type. fastavro decodes most of this straight into what Arrow takes; the logical
types Spark ignores are removed from the schemas before fastavro parses them
(:func:`without_ignored_logical_types`), so it never builds a ``UUID`` or ``time`` to undo, and
:func:`value_converter` is ``None`` (no pass over the values at all) unless a schema has a
union that spark-avro turns into a struct.

Writing (:func:`avro_schema_of`): a Spark type becomes the Avro schema spark-avro's ``to_avro``
writes (a record named ``topLevelRecord``, nested records named after their field, decimals
as named ``fixed``), except that a nullable type is ``["null", T]`` with a ``null`` default, so
that a later version of the schema may drop or add such a field compatibly.

The module is long because both directions follow one table of spark-avro's rules (names of
union members, nullability, decimals as ``fixed``) and share its walker over named types;
split, each half would restate the other's half of the table.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import pyspark.sql.types as T

from kafka_rescalable.errors import KafkaSourceError

__all__ = [
    "AvroMappingError",
    "Converter",
    "TOP_LEVEL_RECORD",
    "as_declared",
    "avro_schema_of",
    "has_struct_union",
    "spark_type_of",
    "value_converter",
    "without_ignored_logical_types",
    "writer_converter",
]

TOP_LEVEL_RECORD: Final = "topLevelRecord"
"""The name of the record :func:`avro_schema_of` writes for a struct, as spark-avro names it."""

Converter = Callable[[Any], Any]
"""One decoded (or to-be-encoded) value in, the same value as the other side wants it out."""

_KEPT_LOGICAL: Final = {
    "decimal": ("bytes", "fixed"),
    "date": ("int",),
    "timestamp-millis": ("long",),
    "timestamp-micros": ("long",),
    "local-timestamp-millis": ("long",),
    "local-timestamp-micros": ("long",),
}
"""The logical types Spark maps to a type of their own, with the Avro types they may annotate."""

_PRIMITIVES: Final[Mapping[str, T.DataType]] = {
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

_NAMED: Final = ("record", "error", "enum", "fixed")


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
    if logical is not None and cleaned.get("type") not in _KEPT_LOGICAL.get(logical, ()):
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


# --- Avro -> Spark ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mapped:
    data_type: T.DataType
    nullable: bool


class _Walk:
    """One walk over a parsed schema: named types by full name, the records being mapped."""

    def __init__(self) -> None:
        self.named: dict[str, Any] = {}
        self.open_records: list[str] = []

    def resolve(self, schema: Any) -> Any:
        """Follow a reference to a named type defined earlier in the schema."""
        if isinstance(schema, str) and schema not in _PRIMITIVES:
            try:
                return self.named[schema]
            except KeyError:
                raise AvroMappingError(f"unknown named type {schema!r}") from None
        if isinstance(schema, dict) and schema.get("type") in _NAMED and "name" in schema:
            self.named.setdefault(schema["name"], schema)
        return schema


_WIDENED: Final = (["int", "long"], ["double", "float"])
"""Unions of numbers Spark reads as the wider one (long, double), as spark-avro does."""


def _non_null(members: list[Any]) -> list[Any]:
    """Give a union's members but ``null``."""
    return [member for member in members if member != "null"]


def _one_type(others: list[Any]) -> bool:
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
    mapped = _map(schema, _Walk())
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


def _map(schema: Any, walk: _Walk) -> _Mapped:
    if isinstance(schema, str) and schema in _PRIMITIVES:
        return _Mapped(_PRIMITIVES[schema], schema == "null")
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


def _map_record(schema: Mapping[str, Any], walk: _Walk) -> _Mapped:
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


def _map_union(members: list[Any], walk: _Walk) -> _Mapped:
    nullable = "null" in members
    others = _non_null(members)
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


def _recursive(name: str, walk: _Walk) -> AvroMappingError:
    path = " -> ".join([*walk.open_records, name])
    msg = (
        f"record {name!r} contains itself ({path}); Spark types cannot be recursive, so "
        "give a reader schema that stops the recursion"
    )
    return AvroMappingError(msg)


# --- decoded values -> Arrow ------------------------------------------------------------------


def has_struct_union(schema: Any) -> bool:
    """Whether a parsed schema has a union that Spark reads as a ``member0, ...`` struct.

    Such a schema is decoded with fastavro's ``return_named_type``, so that the member a named
    value belongs to is known (see :func:`value_converter`).
    """
    walk = _Walk()
    seen: set[str] = set()

    def visit(node: Any) -> bool:
        if isinstance(node, list):
            others = _non_null(node)
            if len(others) > 1 and not _one_type(others):
                return True
            return any(visit(member) for member in others)
        if isinstance(node, str):
            if node in _PRIMITIVES or node in seen:
                return False
            seen.add(node)
        node = walk.resolve(node)
        if not isinstance(node, dict):
            return False
        if node.get("type") in ("record", "error"):
            seen.add(node["name"])
            return any(visit(field["type"]) for field in node["fields"])
        if node.get("type") == "array":
            return visit(node["items"])
        if node.get("type") == "map":
            return visit(node["values"])
        return isinstance(node.get("type"), (list, dict)) and visit(node["type"])

    return visit(schema)


def value_converter(schema: Any) -> Converter | None:
    """Build the function turning fastavro's value of ``schema`` into what Arrow takes.

    ``None`` when fastavro's values already fit, which is every schema without a union that
    Spark reads as a struct (with :func:`without_ignored_logical_types` applied). Otherwise the
    values come from fastavro's ``return_named_type`` mode, in which a value of a named type in
    a union is a ``(name, value)`` pair; the converter unwraps those, and turns the value of
    each struct union into ``{"member<i>": value}`` for the member it belongs to.
    """
    if not has_struct_union(schema):
        return None
    return _converter(schema, _Walk(), _READING) or _same


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class _Direction:
    """What one direction's converter does at a union, a record, an array and a map.

    The walk over the schema is the same when reading and when writing (:func:`_converter`);
    a part is ``None`` where it needs no conversion, so that a schema with nothing to convert
    costs nothing per value.
    """

    union: Callable[[list[Any], _Walk, Callable[[Any], Converter | None]], Converter | None]
    record: Callable[[list[tuple[str, Converter]]], Converter]
    array: Callable[[Converter | None], Converter | None]
    map: Callable[[Converter | None], Converter | None]


def _converter(schema: Any, walk: _Walk, direction: _Direction) -> Converter | None:
    """``None`` where the value needs nothing (no union below it, nothing to reshape)."""

    def part(node: Any) -> Converter | None:
        return _converter(node, walk, direction)

    if isinstance(schema, str) and schema in _PRIMITIVES:
        return None
    if isinstance(schema, list):
        return direction.union(schema, walk, part)
    if isinstance(schema, str) and schema in walk.open_records:
        return None  # has_struct_union's walk never recurses; spark_type_of refuses recursion
    schema = walk.resolve(schema)
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind in ("record", "error"):
        walk.open_records.append(schema["name"])
        fields = [
            (field["name"], converter)
            for field in schema["fields"]
            if (converter := part(field["type"])) is not None
        ]
        walk.open_records.pop()
        return direction.record(fields) if fields else None
    if kind == "array":
        return direction.array(part(schema["items"]))
    if kind == "map":
        return direction.map(part(schema["values"]))
    if isinstance(kind, (list, dict)):
        return part(kind)
    return None


def _none_passing(inner: Converter) -> Converter:
    """Let a null stay a null: ``inner`` sees only the values that are set."""

    def convert(value: Any) -> Any:
        return None if value is None else inner(value)

    return convert


def _unless_none(build: Callable[[Converter], Converter]) -> Callable[[Converter | None], Any]:
    """Wrap a part's converter with ``build``, where the part has one."""
    return lambda inner: None if inner is None else build(inner)


def _record_converter(fields: list[tuple[str, Converter]]) -> Converter:
    def convert(record: dict[str, Any]) -> dict[str, Any]:
        for name, converter in fields:
            record[name] = converter(record[name])
        return record

    return convert


def _list_converter(item: Converter) -> Converter:
    def convert(values: list[Any]) -> list[Any]:
        return [item(value) for value in values]

    return convert


def _map_converter(value: Converter) -> Converter:
    def convert(values: dict[str, Any]) -> dict[str, Any]:
        return {key: value(item) for key, item in values.items()}

    return convert


def _union_converter(
    members: list[Any], walk: _Walk, part: Callable[[Any], Converter | None]
) -> Converter:
    others = _non_null(members)
    resolved = [
        walk.resolve(member) if not isinstance(member, list) else member for member in others
    ]
    converters = [part(member) for member in others]
    if _one_type(others):
        only = converters[0] if len(others) == 1 else None
        return _unwrap_converter(only)
    names = [f"member{index}" for index in range(len(others))]
    by_name = {
        member["name"]: index
        for index, member in enumerate(resolved)
        if isinstance(member, dict) and "name" in member
    }
    pick = _member_picker(resolved)

    def convert(value: Any) -> Any:
        if type(value) is tuple:
            index = by_name[value[0]]
            value = value[1]
        else:
            index = pick(value)
        converter = converters[index]
        struct = dict.fromkeys(names)
        struct[names[index]] = value if converter is None else converter(value)
        return struct

    return _none_passing(convert)


def _unwrap_converter(inner: Converter | None) -> Converter:
    def convert(value: Any) -> Any:
        if type(value) is tuple:  # a named type's (name, value) in return_named_type mode
            value = value[1]
        return value if inner is None else inner(value)

    return _none_passing(convert)


def _member_picker(members: list[Any]) -> Callable[[Any], int]:
    """Tell which member a plain (unnamed) value of a struct union belongs to.

    Avro allows one member per unnamed type, so the Python type of the value says which,
    except for two numbers of one kind (``int`` and ``long``, ``float`` and ``double``) or an
    enum beside a string, where the narrower member (``int``, ``float``, the string) is taken.
    """
    kinds: dict[str, int] = {}
    enums: list[tuple[int, frozenset[str]]] = []
    for index, member in enumerate(members):
        kind = member if isinstance(member, str) else member.get("type")
        logical = member.get("logicalType") if isinstance(member, dict) else None
        if kind == "enum":
            enums.append((index, frozenset(member["symbols"])))
            continue
        key = logical if logical in _KEPT_LOGICAL else kind
        kinds.setdefault(str(key), index)

    def pick(value: Any) -> int:
        if isinstance(value, bool):
            return kinds["boolean"]
        if isinstance(value, int):
            fits_int = -(2**31) <= value < 2**31
            return (
                kinds["int"]
                if "int" in kinds and (fits_int or "long" not in kinds)
                else kinds["long"]
            )
        if isinstance(value, float):
            return kinds["float"] if "float" in kinds else kinds["double"]
        if isinstance(value, str):
            if "string" in kinds:
                return kinds["string"]
            return next(index for index, symbols in enums if value in symbols)
        if isinstance(value, (bytes, bytearray)):
            return kinds["bytes"] if "bytes" in kinds else kinds["fixed"]
        if isinstance(value, decimal.Decimal):
            return kinds["decimal"]
        if isinstance(value, datetime.datetime):
            aware = value.tzinfo is not None
            for logical in (
                ("timestamp-millis", "timestamp-micros")
                if aware
                else ("local-timestamp-millis", "local-timestamp-micros")
            ):
                if logical in kinds:
                    return kinds[logical]
        if isinstance(value, datetime.date):
            return kinds["date"]
        if isinstance(value, list):
            return kinds["array"]
        if isinstance(value, dict):
            return kinds["map"] if "map" in kinds else kinds["record"]
        msg = f"a {type(value).__name__} value matches no member of the union"
        raise ValueError(msg)

    return pick


_READING: Final = _Direction(
    union=_union_converter,
    record=_record_converter,
    array=_unless_none(_list_converter),
    map=_unless_none(_map_converter),
)
"""fastavro's values to Arrow's: unions unwrapped or made structs, records, lists, maps."""


# --- Spark -> Avro ----------------------------------------------------------------------------


def avro_schema_of(data_type: T.DataType, nullable: bool = False) -> Any:
    """Return the Avro schema (JSON-able) spark-avro's ``to_avro`` writes for ``data_type``.

    Raises
    ------
    AvroMappingError
        For a type Avro has no equivalent of (a map whose keys are not strings, intervals...).
    """
    return _avro(data_type, nullable, TOP_LEVEL_RECORD, "")


def _avro(data_type: T.DataType, nullable: bool, name: str, namespace: str) -> Any:
    schema = _avro_non_null(data_type, name, namespace)
    return ["null", schema] if nullable else schema


_AVRO_LEAVES: Final[tuple[tuple[type | tuple[type, ...], Any], ...]] = (
    (T.BooleanType, "boolean"),
    ((T.ByteType, T.ShortType, T.IntegerType), "int"),
    (T.LongType, "long"),
    (T.FloatType, "float"),
    (T.DoubleType, "double"),
    (T.StringType, "string"),
    (T.BinaryType, "bytes"),
    (T.NullType, "null"),
    (T.DateType, {"type": "int", "logicalType": "date"}),
    (T.TimestampType, {"type": "long", "logicalType": "timestamp-micros"}),
    (T.TimestampNTZType, {"type": "long", "logicalType": "local-timestamp-micros"}),
)
"""The Avro type of each Spark type that holds no other, as spark-avro's ``to_avro`` writes it."""


def _avro_non_null(data_type: T.DataType, name: str, namespace: str) -> Any:
    for spark_types, avro in _AVRO_LEAVES:
        if isinstance(data_type, spark_types):
            return dict(avro) if isinstance(avro, dict) else avro
    if isinstance(data_type, T.DecimalType):
        return {
            "type": "fixed",
            "name": f"{namespace}.{name}.fixed" if namespace else f"{name}.fixed",
            "size": _bytes_for_precision(data_type.precision),
            "logicalType": "decimal",
            "precision": data_type.precision,
            "scale": data_type.scale,
        }
    if isinstance(data_type, T.ArrayType):
        return {
            "type": "array",
            "items": _avro(data_type.elementType, data_type.containsNull, name, namespace),
        }
    if isinstance(data_type, T.MapType):
        if not isinstance(data_type.keyType, T.StringType):
            msg = f"Avro maps have string keys; {data_type.simpleString()} has other keys"
            raise AvroMappingError(msg)
        return {
            "type": "map",
            "values": _avro(data_type.valueType, data_type.valueContainsNull, name, namespace),
        }
    if isinstance(data_type, T.StructType):
        inner = f"{namespace}.{name}" if namespace else name
        fields = []
        for field in data_type.fields:
            avro_field: dict[str, Any] = {
                "name": field.name,
                "type": _avro(field.dataType, field.nullable, field.name, inner),
            }
            if field.nullable:
                avro_field["default"] = None
            fields.append(avro_field)
        record: dict[str, Any] = {"type": "record", "name": name, "fields": fields}
        if namespace:
            record["namespace"] = namespace
        return record
    msg = f"Avro has no type for Spark's {data_type.simpleString()}"
    raise AvroMappingError(msg)


def _bytes_for_precision(precision: int) -> int:
    """Count the fewest bytes whose two's complement holds ``precision`` digits."""
    size = 1
    while 2 ** (8 * size - 1) <= 10**precision - 1:
        size += 1
    return size


# --- Spark values -> fastavro -----------------------------------------------------------------


def writer_converter(schema: Any) -> Converter | None:
    """Build the function turning a row's value (``to_pylist``) into what fastavro writes.

    pyarrow gives a map as a list of ``(key, value)`` pairs, fastavro wants a dict; a struct
    read from a ``member0, ...`` union is written as the one member that is set. ``None`` when
    the schema has neither.
    """
    return _converter(schema, _Walk(), _WRITING)


def _union_writer(
    members: list[Any], walk: _Walk, part: Callable[[Any], Converter | None]
) -> Converter | None:
    others = _non_null(members)
    if _one_type(others):
        inner = part(others[0]) if len(others) == 1 else None
        return None if inner is None else _none_passing(inner)
    converters = [part(member) for member in others]
    return _member_writer([f"member{index}" for index in range(len(others))], converters)


def _record_writer(fields: list[tuple[str, Converter]]) -> Converter:
    def convert(record: Any) -> Any:
        record = dict(record)
        for name, converter in fields:
            if name in record:
                record[name] = converter(record[name])
        return record

    return _none_passing(convert)


def _map_writer(value: Converter | None) -> Converter:
    def convert(pairs: Any) -> Any:
        items = pairs.items() if isinstance(pairs, dict) else pairs
        if value is None:
            return dict(items)
        return {key: value(item) for key, item in items}

    return _none_passing(convert)


def _member_writer(names: list[str], converters: list[Converter | None]) -> Converter:
    def convert(struct: Any) -> Any:
        if not isinstance(struct, dict):
            return struct  # written to the union as it is: fastavro picks the member
        for name, converter in zip(names, converters, strict=True):
            value = struct.get(name)
            if value is not None:
                return value if converter is None else converter(value)
        return None

    return _none_passing(convert)


_WRITING: Final = _Direction(
    union=_union_writer,
    record=_record_writer,
    array=_unless_none(lambda item: _none_passing(_list_converter(item))),
    map=_map_writer,
)
"""Rows' values to fastavro's: member structs to the one member set, map pairs to dicts."""
