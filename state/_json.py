"""JSON values as the slots document's readers see them: repeated keys kept, kinds named.

Shared by both layouts of the document (``kafka_rescalable.state.document`` and
``kafka_rescalable.state.topic_layout``), so a
refusal names a value the same way wherever it is found.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kafka_rescalable.state.errors import OffsetDocumentError


class JsonObject(dict[str, Any]):
    """A parsed JSON object that remembers the keys it saw twice.

    ``json.loads`` keeps the last value of a repeated key; recording the repeats lets the
    checks report them with their path instead of reading half of a corrupted document.
    """

    duplicates: tuple[str, ...]

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        seen: set[str] = set()
        repeated = []
        for key, _ in pairs:
            if key in seen:
                repeated.append(key)
            seen.add(key)
        self.duplicates = tuple(repeated)


JSON_OBJECTS: Final = frozenset({dict, JsonObject})
"""Mapping types ``isinstance(..., Mapping)`` accepts, tested first without the ABC machinery."""


def repeated(value: object) -> tuple[str, ...]:
    """Keys a parsed JSON object listed more than once; none for values not parsed here."""
    return getattr(value, "duplicates", ())


def check_object(value: object, path: str, must_be: str, key: str, where: str = "") -> None:
    """Refuse ``value`` unless it is a JSON object that lists no ``key`` twice.

    The one shape check of every object in the document, so each refusal reads alike:
    ``<path>: must be <must_be>, got <kind>`` or ``<path>: <key> 'x' is listed twice<where>``.

    Raises
    ------
    OffsetDocumentError
        When ``value`` is not a mapping, or a parsed object that repeated a key.
    """
    if type(value) not in JSON_OBJECTS and not isinstance(value, Mapping):
        raise OffsetDocumentError(f"must be {must_be}, got {kind(value)}", path)
    if repeated(value):
        raise OffsetDocumentError(f"{key} {repeated(value)[0]!r} is listed twice{where}", path)


def kind(value: object) -> str:
    """Name a value the way JSON does, since the reader is looking at JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def no_constant(name: str) -> Any:
    msg = f"not valid JSON: {name} is not a JSON number"
    raise OffsetDocumentError(msg)
