"""Schema references: the other subjects a registry schema is read with, dependencies first.

A registered schema may name types it does not define (an Avro ``Address`` record shared by
teams) or import other files (a ``.proto`` importing ``common/money.proto``); its
``references`` say where those are: a name, a subject and a version, each of which may have
references of its own. Reading the schema needs all of them, so this module walks the graph
once and gives every referenced schema, each once, dependencies before what uses them (the
order in which a parser must meet them).

The walk is pure: the registry's answers come through a ``fetch`` function, so the decisions
(which order, what is missing, what is a cycle, and the message that says so) are tested
without a registry. :func:`kafka_rescalable.formats.registry.referenced_schema` is the fetch
the codecs use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kafka_rescalable.errors import SchemaReferenceError

__all__ = [
    "ReferencedSchema",
    "SchemaRef",
    "follow_references",
    "references_of",
]


@dataclass(frozen=True, order=True)
class SchemaRef:
    """One reference of a registry schema: ``name`` as the schema uses it, where it is kept."""

    subject: str
    version: int
    name: str = ""

    def __str__(self) -> str:
        """Show the reference as messages do: ``subject 'x' version 2``."""
        return f"subject {self.subject!r} version {self.version}"


@dataclass(frozen=True)
class ReferencedSchema:
    """A schema another one references: its text, type and own references."""

    subject: str
    version: int
    text: str
    schema_type: str
    references: tuple[SchemaRef, ...] = ()


Fetch = Callable[[SchemaRef], "ReferencedSchema | None"]
"""The registry's answer for one reference; ``None`` when it has no such subject or version."""


def references_of(schema: Any) -> tuple[SchemaRef, ...]:
    """Give the references of confluent-kafka's ``Schema`` as values (``()``: none)."""
    return tuple(
        SchemaRef(str(ref.subject), int(ref.version), str(ref.name or ""))
        for ref in schema.references or ()
    )


def follow_references(
    root: str, references: Iterable[SchemaRef], fetch: Fetch, own: SchemaRef | None = None
) -> tuple[ReferencedSchema, ...]:
    """Give every schema ``references`` lead to, each once, dependencies first.

    Parameters
    ----------
    root
        The schema whose references these are, for messages: ``subject 'orders-value'`` or
        ``schema id 7``.
    references
        Its references, in its own order.
    fetch
        Asks the registry for one reference.
    own
        The root's own subject and version when known, so that a reference back to it is
        refused as the cycle it is.

    Raises
    ------
    SchemaReferenceError
        When a reference is not in the registry, or leads back to a schema on its own path;
        the message names ``root``, the reference, and the path to it.
    """
    done: dict[tuple[str, int], ReferencedSchema] = {}
    order: list[ReferencedSchema] = []
    start = () if own is None else ((own.subject, own.version),)

    def visit(ref: SchemaRef, path: tuple[SchemaRef, ...]) -> None:
        key = (ref.subject, ref.version)
        if key in done:
            return  # a diamond: two paths to one schema, read once
        if key in start or any((step.subject, step.version) == key for step in path):
            raise _cycle(root, ref, path)
        found = fetch(ref)
        if found is None:
            raise _missing(root, ref, path)
        for inner in found.references:
            visit(inner, (*path, ref))
        done[key] = found
        order.append(found)

    for ref in references:
        visit(ref, ())
    return tuple(order)


def _way(root: str, path: tuple[SchemaRef, ...], ref: SchemaRef) -> str:
    return " -> ".join([root, *(str(step) for step in path), str(ref)])


def _cycle(root: str, ref: SchemaRef, path: tuple[SchemaRef, ...]) -> SchemaReferenceError:
    msg = (
        f"the references of {root} form a cycle ({_way(root, path, ref)}): a schema cannot be "
        f"read with itself as its own dependency; register {ref} without the reference that "
        "leads back, and point the referencing schemas at that version"
    )
    return SchemaReferenceError(msg, root, (ref.subject, ref.version))


def _missing(root: str, ref: SchemaRef, path: tuple[SchemaRef, ...]) -> SchemaReferenceError:
    named = f" (for {ref.name!r})" if ref.name else ""
    msg = (
        f"{root} references {ref}{named}, which the registry does not have "
        f"({_way(root, path, ref)}); register that version again under that subject, or "
        "register the referencing schema with references to versions that exist"
    )
    return SchemaReferenceError(msg, root, (ref.subject, ref.version))
