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

__all__ = ["promotion_first", "resolution_differs", "union_names_a_type"]


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


def resolution_differs(writer: Any, reader: Any) -> bool:
    """Say whether fastavro resolves ``writer`` to ``reader`` otherwise than the core would.

    Both schemas as the decoders read them (without the logical types Spark ignores).
    Compared by position (record fields by name, array items, map values, every member of a
    union), where the two libraries are known to differ:

    - a ``long`` written for a ``float``: fastavro makes the integer a Python float (a
      double) and pyarrow rounds that to a ``float``, two roundings where the core rounds
      once, so beyond 2**53 the last bit may differ (an ``int`` becomes a double exactly,
      and a ``double`` is rounded once on both paths);
    - a logical type that is not the same on both sides (a decimal's scale, a timestamp read
      as a long): fastavro applies the writer's, the core the reader's;
    - a reader field the writer lacks, read from its default, of ``bytes``, ``fixed`` or a
      logical type: fastavro takes a bytes default's text as UTF-8 and a timestamp's
      default in microseconds, the core as the Avro specification says.
    """
    written = _positions(writer)
    read = _positions(reader)
    for path, kinds in read.items():
        if path not in written:
            if kinds & _FROM_TEXT or any(":" in kind for kind in kinds):
                return True
            continue
        if "long" in written[path] and "float" in kinds:
            return True
        if {k for k in kinds if ":" in k} != {k for k in written[path] if ":" in k}:
            return True
    return False


_FROM_TEXT: Final = frozenset({"bytes", "fixed"})
"""Types whose default is text standing for bytes."""


def _positions(schema: Any) -> dict[tuple[str, ...], frozenset[str]]:
    """Give the leaf types at each position of the schema (JSON, names unresolved).

    A leaf is a primitive's name, ``fixed`` or ``enum``, or ``type:logicalType:precision:scale``
    for a logical type.
    """
    named: dict[str, Any] = {}
    found: dict[tuple[str, ...], set[str]] = {}

    def leaf(path: tuple[str, ...], kind: str) -> None:
        found.setdefault(path, set()).add(kind)

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
                leaf(path, node)
            return
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if "name" in node and kind in ("record", "error", "enum", "fixed"):
            named[str(node["name"])] = node
        if "logicalType" in node:
            parts = (kind, node["logicalType"], node.get("precision"), node.get("scale", 0))
            leaf(path, ":".join(map(str, parts)))
        elif kind in ("record", "error"):
            leaf(path, "record")
            for field in node.get("fields") or ():
                if isinstance(field, dict):
                    visit(field.get("type"), (*path, str(field.get("name"))), depth + 1)
        elif kind == "array":
            visit(node.get("items"), (*path, "[]"), depth + 1)
        elif kind == "map":
            visit(node.get("values"), (*path, "{}"), depth + 1)
        elif kind in ("enum", "fixed"):
            leaf(path, kind)
        else:
            visit(kind, path, depth + 1)

    visit(schema, (), 0)
    return {path: frozenset(kinds) for path, kinds in found.items()}
