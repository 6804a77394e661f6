"""Hypothesis strategies: Avro schemas within our type mapping, their records, and evolutions.

A reader schema is a record of random fields (every type :mod:`kafka_rescalable.formats.avro.types`
maps, nested records, arrays, maps, nullable and general unions); its records are drawn
from it; a writer schema is derived from it by Avro's resolution rules (a reader field the
writer lacks has a default, a writer field the reader lacks is skipped, ``int`` written for a
``long``, ``float`` for a ``double`` and integers for either, fields in another order, an
enum symbol the reader does not know read as the reader's default). Records are drawn for
the writer schema.
"""

from __future__ import annotations

import copy
import itertools
from decimal import Context, Decimal
from typing import Any

import fastavro
from hypothesis import strategies as st

_names = itertools.count()

_INT = st.integers(-(2**31), 2**31 - 1)
_LONG = st.integers(-(2**63), 2**63 - 1)
_TEXT = st.text(max_size=6)
_MILLIS = st.integers(-62_135_596_800_000, 253_402_300_799_999)
_MICROS = st.integers(-62_135_596_800_000_000, 253_402_300_799_999_999)

_LEAVES: dict[str, tuple[Any, st.SearchStrategy[Any]]] = {
    "boolean": ("boolean", st.booleans()),
    "int": ("int", _INT),
    "long": ("long", _LONG),
    "float": ("float", st.floats(width=32, allow_nan=False)),
    "double": ("double", st.floats(allow_nan=False)),
    "string": ("string", _TEXT),
    "bytes": ("bytes", st.binary(max_size=6)),
    "date": ({"type": "int", "logicalType": "date"}, st.integers(-719_162, 2_932_896)),
    "ts-ms": ({"type": "long", "logicalType": "timestamp-millis"}, _MILLIS),
    "ts-us": ({"type": "long", "logicalType": "timestamp-micros"}, _MICROS),
    "local-ms": ({"type": "long", "logicalType": "local-timestamp-millis"}, _MILLIS),
    "local-us": ({"type": "long", "logicalType": "local-timestamp-micros"}, _MICROS),
    "uuid": (
        {"type": "string", "logicalType": "uuid"},
        st.uuids().map(str),
    ),
    "time-ms": ({"type": "int", "logicalType": "time-millis"}, st.integers(0, 86_399_999)),
    "time-us": ({"type": "long", "logicalType": "time-micros"}, st.integers(0, 86_399_999_999)),
}


def _name(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


Defined = list[tuple[str, st.SearchStrategy[Any]]]
"""The named types a schema being drawn has defined so far: later parts may refer to them."""


@st.composite
def _named(draw: st.DrawFn, kind: str, defined: Defined) -> tuple[Any, st.SearchStrategy[Any]]:
    schema, values = draw(_new_named(kind))
    if "name" in schema:
        defined.append((schema["name"], values))
    return schema, values


@st.composite
def _new_named(draw: st.DrawFn, kind: str) -> tuple[Any, st.SearchStrategy[Any]]:
    if kind == "enum":
        symbols = draw(st.lists(st.sampled_from("ABCDEFG"), min_size=1, max_size=4, unique=True))
        schema = {"type": "enum", "name": _name("E"), "symbols": symbols}
        return schema, st.sampled_from(symbols)
    if kind == "fixed":
        size = draw(st.integers(1, 5))
        return {"type": "fixed", "name": _name("F"), "size": size}, st.binary(
            min_size=size, max_size=size
        )
    precision = draw(st.integers(1, 38))
    scale = draw(st.integers(0, precision))
    digits = st.integers(-(10**precision) + 1, 10**precision - 1)
    values = digits.map(lambda unscaled: _decimal(unscaled, scale))
    if kind == "decimal-bytes":
        schema: dict[str, Any] = {"type": "bytes"}
    else:
        size = (precision * 10 // 24) + 2  # enough bytes for the precision's digits
        schema = {"type": "fixed", "name": _name("D"), "size": size}
    return {**schema, "logicalType": "decimal", "precision": precision, "scale": scale}, values


def _leaf(defined: Defined) -> st.SearchStrategy[tuple[Any, st.SearchStrategy[Any]]]:
    return st.one_of(
        st.sampled_from(sorted(_LEAVES)).map(lambda kind: _LEAVES[kind]),
        st.sampled_from(["enum", "fixed", "decimal-bytes", "decimal-fixed"]).flatmap(
            lambda kind: _named(kind, defined)
        ),
    )


@st.composite
def _record(draw: st.DrawFn, depth: int, defined: Defined) -> tuple[Any, st.SearchStrategy[Any]]:
    count = draw(st.integers(1, 4 if depth else 6))
    fields = []
    values = {}
    for index in range(count):
        schema, strategy = draw(_type(depth + 1, defined))
        name = f"f{index}"
        fields.append({"name": name, "type": schema})
        values[name] = strategy
    record = {"type": "record", "name": _name("R"), "fields": fields}
    defined.append((record["name"], st.fixed_dictionaries(values)))
    return record, st.fixed_dictionaries(values)


@st.composite
def _union(draw: st.DrawFn, depth: int, defined: Defined) -> tuple[Any, st.SearchStrategy[Any]]:
    """Draw a union Spark reads as a ``member<i>`` struct, or one it widens."""
    shape = draw(st.sampled_from(["general", "int-long", "float-double"]))
    nullable = draw(st.booleans())
    if shape == "int-long":
        members, strategy = ["int", "long"], st.one_of(_INT, _LONG)
    elif shape == "float-double":
        members, strategy = ["float", "double"], st.floats(width=32, allow_nan=False)
    else:
        choices = ["int", "string", "boolean", "bytes", "record", "array"]
        kinds = draw(
            st.lists(
                st.sampled_from([*choices, "ref"] if defined else choices),
                min_size=2,
                max_size=3,
                unique=True,
            )
        )
        members, strategies = [], []
        for kind in kinds:
            if kind == "ref":  # a named type defined earlier, referred to by its name
                schema, values = draw(st.sampled_from(defined))
                if schema in members:
                    continue
            elif kind == "record":
                schema, values = draw(_record(depth + 1, defined))
            elif kind == "array":
                schema, values = {"type": "array", "items": "long"}, st.lists(_LONG, max_size=3)
            else:
                schema, values = _LEAVES[kind]
            members.append(schema)
            strategies.append(values)
        strategy = st.one_of(*strategies)
    if nullable:
        return ["null", *members], st.one_of(st.none(), strategy)
    return members, strategy


@st.composite
def _type(draw: st.DrawFn, depth: int, defined: Defined) -> tuple[Any, st.SearchStrategy[Any]]:
    kinds = ["leaf"] * 6 + ["nullable"] * 2 + (["ref"] if defined else [])
    if depth < 3:
        kinds += ["record", "array", "map", "union"]
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        return draw(_leaf(defined))
    if kind == "ref":
        return draw(st.sampled_from(defined))
    if kind == "record":
        return draw(_record(depth, defined))
    if kind == "union":
        return draw(_union(depth, defined))
    inner, values = draw(_type(depth + 1, defined))
    if kind == "nullable":
        if isinstance(inner, list):  # a union cannot hold a union
            return inner, values
        members = ["null", inner] if draw(st.booleans()) else [inner, "null"]
        return members, st.one_of(st.none(), values)
    if kind == "array":
        return {"type": "array", "items": inner}, st.lists(values, max_size=3)
    return {"type": "map", "values": inner}, st.dictionaries(_TEXT, values, max_size=3)


def reader_schemas() -> st.SearchStrategy[tuple[Any, st.SearchStrategy[Any]]]:
    """Draw a record schema and the strategy of its records."""
    return st.builds(list).flatmap(lambda defined: _record(0, defined))


_ADDED: list[tuple[Any, Any]] = [
    (["null", "string"], None),
    ("int", 7),
    ("string", "dflt"),
    ("boolean", True),
    ("double", 1.5),
]
"""Types of reader fields a writer may lack, with their defaults."""


@st.composite
def evolutions(draw: st.DrawFn) -> tuple[Any, Any, st.SearchStrategy[Any]]:
    """Draw a reader schema, a writer schema evolved from it, and the writer's records."""
    reader, _ = draw(reader_schemas())
    writer = copy.deepcopy(reader)
    writer_fields = writer["fields"]
    # Reader fields the writer lacks: added to the reader with a default.
    for _ in range(draw(st.integers(0, 2))):
        schema, default = draw(st.sampled_from(_ADDED))
        position = draw(st.integers(0, len(reader["fields"])))
        field = {"name": _name("added"), "type": schema, "default": default}
        reader["fields"].insert(position, field)
    # Writer fields the reader lacks: removed from the reader.
    for _ in range(draw(st.integers(0, 2))):
        schema, _default = draw(st.sampled_from(_ADDED))
        writer_fields.append({"name": _name("removed"), "type": schema})
    # Promotions, and enums the reader reads with a default.
    for reader_field, writer_field in zip(reader_fields(reader), writer_fields, strict=False):
        _evolve(draw, reader_field, writer_field)
    order = draw(st.permutations(range(len(writer_fields))))
    reordered = {**writer, "fields": [writer_fields[i] for i in order]}
    try:  # a field referring to a named type by name must stay after the type's definition
        fastavro.parse_schema(copy.deepcopy(reordered))
        writer = reordered
    except Exception:  # noqa: BLE001, S110 - keep the writer's fields in the reader's order
        pass
    return reader, writer, records_of(writer)


def reader_fields(reader: Any) -> list[Any]:
    """Give the reader's fields that the writer has too (not the added ones), in order."""
    return [f for f in reader["fields"] if not f["name"].startswith("added")]


def _evolve(draw: st.DrawFn, reader_field: Any, writer_field: Any) -> None:
    kind = reader_field["type"]
    if kind == "long" and draw(st.booleans()):
        writer_field["type"] = "int"
    elif kind == "double" and draw(st.booleans()):
        writer_field["type"] = draw(st.sampled_from(["float", "float", "int", "long"]))
    elif kind == "float" and draw(st.integers(0, 3)) == 0:
        writer_field["type"] = draw(st.sampled_from(["int", "long"]))
    elif isinstance(kind, dict) and kind.get("type") == "enum" and draw(st.booleans()):
        kind["default"] = kind["symbols"][0]
        writer_field["type"] = {**kind, "symbols": [*kind["symbols"], "NEW"]}
        writer_field["type"].pop("default")


def records_of(schema: Any) -> st.SearchStrategy[Any]:
    """Give records of a schema drawn by :func:`reader_schemas` or :func:`evolutions`."""
    return _strategy(schema, {})


def _strategy(schema: Any, named: dict[str, Any]) -> st.SearchStrategy[Any]:
    if isinstance(schema, list):
        return st.one_of(*(_strategy(member, named) for member in schema))
    if isinstance(schema, str):
        if schema == "null":
            return st.none()
        if schema in named:
            return _strategy(named[schema], named)
        return _LEAVES[schema][1]
    kind = schema["type"]
    if "name" in schema:
        named[schema["name"]] = schema
    logical = schema.get("logicalType")
    if logical is not None:
        for leaf, strategy in _LEAVES.values():
            if leaf == schema:
                return strategy
    if kind == "record":
        return st.fixed_dictionaries(
            {field["name"]: _strategy(field["type"], named) for field in schema["fields"]}
        )
    if kind == "enum":
        return st.sampled_from(schema["symbols"])
    if kind == "array":
        return st.lists(_strategy(schema["items"], named), max_size=3)
    if kind == "map":
        return st.dictionaries(_TEXT, _strategy(schema["values"], named), max_size=3)
    if logical == "decimal":
        digits = 10 ** schema["precision"] - 1
        scale = schema["scale"]
        return st.integers(-digits, digits).map(lambda unscaled: _decimal(unscaled, scale))
    if kind == "fixed":
        return st.binary(min_size=schema["size"], max_size=schema["size"])
    return _strategy(kind, named)


_EXACT = Context(prec=40)
"""Room for Avro's 38 decimal digits: the default context's 28 would round a value drawn
with more digits up past its schema's precision."""


def _decimal(unscaled: int, scale: int) -> Decimal:
    """Return ``unscaled * 10**-scale`` with every digit kept."""
    return Decimal(unscaled).scaleb(-scale, _EXACT)
