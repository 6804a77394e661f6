"""Where the native core and the pure-Python decoders would read a schema differently.

The two paths must give the same rows (tests/connector/formats/test_native_avro.py holds them
to it on random schemas). Where the libraries differ, the schema, or the writer schema, is
read on the slow path: each predicate here names one such difference and says why.
"""

from __future__ import annotations

from typing import Any, Final

from kafka_rescalable.formats.avro.types import (
    PRIMITIVES,
    AvroMappingError,
    SchemaWalk,
    non_null,
    one_type,
)

__all__ = ["promotes_long_to_float", "promotion_first", "union_names_a_type"]


def union_names_a_type(schema: Any) -> bool:
    """Say whether a union of two or more types other than null refers to a type by name.

    ``arrow-avro`` 60.1 reads such a member wrongly and without an error (``["int", "F"]``
    with ``F`` a ``fixed`` defined earlier in the schema reads a written ``F`` as an int, and
    the next fields from the wrong bytes); a union with the named type written out in it is
    read right. Such schemas are decoded on the slow path.
    """

    def visit(node: Any) -> bool:
        if isinstance(node, list):
            others = non_null(node)
            if len(others) > 1 and any(isinstance(m, str) and m not in PRIMITIVES for m in others):
                return True
            return any(visit(member) for member in others)
        if not isinstance(node, dict):
            return False
        fields = node.get("fields") if node.get("type") in ("record", "error") else None
        parts = [node.get("type"), node.get("items"), node.get("values")]
        parts += [field.get("type") for field in fields or () if isinstance(field, dict)]
        return any(visit(part) for part in parts)

    return visit(schema)


_PROMOTED: Final = {
    "int": ("long", "float", "double"),
    "long": ("float", "double"),
    "float": ("double",),
    "string": ("bytes",),
    "bytes": ("string",),
}
"""Avro's promotions: the reader types a writer's primitive type may be read as."""


def promotion_first(schema: Any) -> bool:
    """Say whether a union Spark reads as a struct has a member a later one promotes to.

    The slow path (fastavro) resolves a writer's union branch to the first reader member it
    matches, promotions included, so ``["long", "int", "string"]`` reads a written ``int`` as
    its ``long``; Avro's Java library and the native core prefer the member of the same
    type. Where such a union is in the reader schema, records whose writer schema differs
    from the reader's are decoded on the slow path, so both paths give the same rows.
    """
    walk = SchemaWalk()
    seen: set[str] = set()

    def visit(node: Any) -> bool:
        if isinstance(node, list):
            others = non_null(node)
            kinds = [member if isinstance(member, str) else None for member in others]
            if len(others) > 1 and not one_type(others):
                for index, kind in enumerate(kinds):
                    if any(kind in _PROMOTED.get(str(later), ()) for later in kinds[index + 1 :]):
                        return True
            return any(visit(member) for member in others)
        if isinstance(node, str):
            if node in seen:
                return False
            seen.add(node)
        node = walk.resolve(node)
        if not isinstance(node, dict):
            return False
        kind = node.get("type")
        if kind in ("record", "error"):
            seen.add(node["name"])
            return any(visit(field["type"]) for field in node["fields"])
        if kind == "array":
            return visit(node["items"])
        if kind == "map":
            return visit(node["values"])
        return isinstance(kind, (list, dict)) and visit(kind)

    try:
        return visit(schema)
    except AvroMappingError:  # a reference this plain walk cannot follow: assume the worst
        return True


def promotes_long_to_float(writer: Any, reader: Any) -> bool:
    """Say whether a ``long`` the writer wrote may be read as a ``float``.

    fastavro makes the integer a Python float (a double) and pyarrow rounds that to a
    ``float``: two roundings, where the core rounds once, so beyond 2**53 the two may differ
    in the last bit (an ``int`` becomes a double exactly, and a ``double`` is rounded once on
    both paths). Compared by position: record fields by name, array items, map values, every
    member of a union.
    """
    written = _primitives(writer)
    read = _primitives(reader)
    return any(
        "long" in kinds and "float" in read.get(path, frozenset())
        for path, kinds in written.items()
    )


def _primitives(schema: Any) -> dict[tuple[str, ...], frozenset[str]]:
    """Give the primitive types at each position of the schema (JSON, names unresolved)."""
    named: dict[str, Any] = {}
    found: dict[tuple[str, ...], set[str]] = {}

    def visit(node: Any, path: tuple[str, ...], depth: int) -> None:
        if depth > 32:  # a recursive writer schema: positions this deep are not compared
            return
        if isinstance(node, list):
            for member in node:
                visit(member, path, depth + 1)
            return
        if isinstance(node, str):
            if node in named:
                visit(named[node], path, depth + 1)
            else:
                found.setdefault(path, set()).add(node)
            return
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if "name" in node and kind in ("record", "error", "enum", "fixed"):
            named[str(node["name"])] = node
        if kind in ("record", "error"):
            for field in node.get("fields") or ():
                if isinstance(field, dict):
                    visit(field.get("type"), (*path, str(field.get("name"))), depth + 1)
        elif kind == "array":
            visit(node.get("items"), (*path, "[]"), depth + 1)
        elif kind == "map":
            visit(node.get("values"), (*path, "{}"), depth + 1)
        elif kind in ("enum", "fixed"):
            return
        else:
            visit(kind, path, depth + 1)

    visit(schema, (), 0)
    return {path: frozenset(kinds) for path, kinds in found.items()}
