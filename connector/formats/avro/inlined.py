"""An Avro schema that references other subjects, made self-contained: pure, no I/O.

A registry schema may use named types it does not define (``"type": "shop.common.Address"``),
defined by the schemas its references give. Both decoders take one schema's JSON text: the
native core is handed writer schemas as text and has no store of named types, and fastavro's
parsed form is cached by text. So the referenced types are written into the schema itself,
each defined where the schema first uses it and named by its full name afterwards, as Avro
requires (a named type is defined once, before any use, in the order a parser reads the JSON).
Full names are kept exactly, namespaces included, so that Avro's schema resolution matches
writer and reader types by the same names as it would with the references.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from kafka_rescalable.formats.avro.types import PRIMITIVES

__all__ = ["self_contained"]

_NAMED: Final = frozenset({"record", "error", "enum", "fixed"})
_BUILT_IN: Final = frozenset({*PRIMITIVES, *_NAMED, "array", "map"})


def self_contained(text: str, referenced: Sequence[str]) -> str:
    """Return the schema JSON ``text`` with the named types of ``referenced`` written into it.

    Parameters
    ----------
    text
        The referencing schema's JSON text.
    referenced
        The JSON texts of every schema it references, directly or not (in any order: each
        named type is written where it is first used).

    Text that is not JSON is given back as it is, for the codec's parser to refuse with its
    message. A name neither schema defines is left as it is, for the same reason.
    """
    if not referenced:
        return text
    try:
        document = json.loads(text)
        definitions: dict[str, dict[str, Any]] = {}
        for other in referenced:
            _collect(json.loads(other), "", definitions)
    except ValueError:
        return text
    return json.dumps(_Inliner(definitions).schema(document, ""))


def _full_name(node: dict[str, Any], namespace: str) -> tuple[str, str]:
    """Give a named type's full name and the namespace its inner types inherit."""
    name = str(node.get("name", ""))
    if "." in name:
        return name, name.rsplit(".", 1)[0]
    space = node.get("namespace", namespace)
    space = space if isinstance(space, str) else namespace
    return (f"{space}.{name}" if space else name), space


def _collect(node: Any, namespace: str, found: dict[str, dict[str, Any]]) -> None:
    """Record every named type defined in ``node`` by full name, with its namespace explicit.

    Not the full name as its name: the native core's parser does not take a dotted name's
    namespace for the types inside it, as Avro's specification says it should.
    """
    if isinstance(node, list):
        for member in node:
            _collect(member, namespace, found)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind in _NAMED and "name" in node:
        full, inner = _full_name(node, namespace)
        definition = dict(node)  # the namespace explicit: it is written elsewhere
        definition["name"] = full.rsplit(".", 1)[-1]
        definition["namespace"] = inner
        found.setdefault(full, definition)
        if kind in ("record", "error") and isinstance(node.get("fields"), list):
            for field in node["fields"]:
                if isinstance(field, dict):
                    _collect(field.get("type"), inner, found)
        return
    for key in ("type", "items", "values"):
        if key in node and not (key == "type" and isinstance(node[key], str)):
            _collect(node[key], namespace, found)


class _Inliner:
    """One walk over the referencing schema, in the order a parser reads it."""

    def __init__(self, definitions: dict[str, dict[str, Any]]) -> None:
        self.definitions = definitions
        self.defined: set[str] = set()
        self.inlining = 0
        """How deep the walk is inside referenced types (0: in the schema's own JSON)."""

    def schema(self, node: Any, namespace: str) -> Any:
        if isinstance(node, str):
            return self.name(node, namespace)
        if isinstance(node, list):
            return [self.schema(member, namespace) for member in node]
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        if kind in _NAMED and "name" in node:
            return self.named(node, namespace)
        out = dict(node)
        if kind == "array" and "items" in node:
            out["items"] = self.schema(node["items"], namespace)
        elif kind == "map" and "values" in node:
            out["values"] = self.schema(node["values"], namespace)
        elif isinstance(kind, str) and kind not in _BUILT_IN:
            inlined = self.name(kind, namespace)
            if isinstance(inlined, dict) and set(node) == {"type"}:
                return inlined  # {"type": "Address"} is Address itself
            out["type"] = inlined
        elif isinstance(kind, (list, dict)):
            out["type"] = self.schema(kind, namespace)
        return out

    def named(self, node: dict[str, Any], namespace: str) -> Any:
        full, inner = _full_name(node, namespace)
        if self.inlining and full in self.defined:
            # A referenced schema defines a type another one already brought in (Address
            # inside Customer, after Address itself): defined once, named afterwards. In the
            # schema's own JSON a second definition stays, for the parser to refuse.
            return full
        self.defined.add(full)
        out = dict(node)
        if node.get("type") in ("record", "error") and isinstance(node.get("fields"), list):
            out["fields"] = [
                {**field, "type": self.schema(field.get("type"), inner)}
                if isinstance(field, dict) and "type" in field
                else field
                for field in node["fields"]
            ]
        return out

    def name(self, name: str, namespace: str) -> Any:
        if name in _BUILT_IN:
            return name
        qualified = f"{namespace}.{name}" if namespace and "." not in name else name
        for candidate in dict.fromkeys((qualified, name)):
            if candidate in self.defined:
                return name
            if candidate in self.definitions:
                definition = dict(self.definitions[candidate])
                if not definition["namespace"] and not namespace:
                    del definition["namespace"]  # "" says null namespace where one is inherited
                self.inlining += 1
                try:
                    return self.named(definition, namespace)
                finally:
                    self.inlining -= 1
        return name
