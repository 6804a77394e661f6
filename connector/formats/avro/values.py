"""Avro values as fastavro gives and takes them, turned into what Arrow takes and back.

fastavro decodes most values straight into what Arrow takes (with
:func:`~kafka_rescalable.formats.avro.types.without_ignored_logical_types` applied to the
schemas); :func:`value_converter` is ``None`` (no pass over the values at all) unless a schema
has a union that spark-avro turns into a ``member0, ...`` struct. :func:`writer_converter`
goes the other way for the sink: map pairs to dicts, a member struct to its one member set.
Both walk the schema the same way (:func:`_converter`), with one :class:`_Direction` each.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from kafka_rescalable.formats.avro.types import (
    KEPT_LOGICAL,
    PRIMITIVES,
    SchemaWalk,
    non_null,
    one_type,
)

__all__ = ["Converter", "has_struct_union", "value_converter", "writer_converter"]

Converter = Callable[[Any], Any]
"""One decoded (or to-be-encoded) value in, the same value as the other side wants it out."""


def has_struct_union(schema: Any) -> bool:
    """Whether a parsed schema has a union that Spark reads as a ``member0, ...`` struct.

    Such a schema is decoded with fastavro's ``return_named_type``, so that the member a named
    value belongs to is known (see :func:`value_converter`).
    """
    walk = SchemaWalk()
    seen: set[str] = set()

    def visit(node: Any) -> bool:
        if isinstance(node, list):
            others = non_null(node)
            if len(others) > 1 and not one_type(others):
                return True
            return any(visit(member) for member in others)
        if isinstance(node, str):
            if node in PRIMITIVES or node in seen:
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
    return _converter(schema, SchemaWalk(), _READING) or _same


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class _Direction:
    """What one direction's converter does at a union, a record, an array and a map.

    The walk over the schema is the same when reading and when writing (:func:`_converter`);
    a part is ``None`` where it needs no conversion, so that a schema with nothing to convert
    costs nothing per value.
    """

    union: Callable[[list[Any], SchemaWalk, Callable[[Any], Converter | None]], Converter | None]
    record: Callable[[list[tuple[str, Converter]]], Converter]
    array: Callable[[Converter | None], Converter | None]
    map: Callable[[Converter | None], Converter | None]


def _converter(schema: Any, walk: SchemaWalk, direction: _Direction) -> Converter | None:
    """``None`` where the value needs nothing (no union below it, nothing to reshape)."""

    def part(node: Any) -> Converter | None:
        return _converter(node, walk, direction)

    if isinstance(schema, str) and schema in PRIMITIVES:
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
    members: list[Any], walk: SchemaWalk, part: Callable[[Any], Converter | None]
) -> Converter:
    others = non_null(members)
    resolved = [
        walk.resolve(member) if not isinstance(member, list) else member for member in others
    ]
    converters = [part(member) for member in others]
    if one_type(others):
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
        key = logical if logical in KEPT_LOGICAL else kind
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


# --- Spark values -> fastavro ----------------------------------------------------------------


def writer_converter(schema: Any) -> Converter | None:
    """Build the function turning a row's value (``to_pylist``) into what fastavro writes.

    pyarrow gives a map as a list of ``(key, value)`` pairs, fastavro wants a dict; a struct
    read from a ``member0, ...`` union is written as the one member that is set. ``None`` when
    the schema has neither.
    """
    return _converter(schema, SchemaWalk(), _WRITING)


def _union_writer(
    members: list[Any], walk: SchemaWalk, part: Callable[[Any], Converter | None]
) -> Converter | None:
    others = non_null(members)
    if one_type(others):
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
