"""What spark-protobuf refuses in a message that protobuf's own parser lets pass.

protobuf's parser keeps a known field that came with another wire type than its type's (or a
closed enum's unknown number) among the message's unknown fields and reads the field as
unset. spark-protobuf's ``from_protobuf`` refuses such a record: the writer's schema was
another. The Python path asks :func:`misfit_field` of every message it parses, so that it
refuses what ``from_protobuf`` refuses; the native readers decline such batches to it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from kafka_rescalable.formats.protobuf_types import is_map

__all__ = ["misfit_field"]

Message = Any
"""A ``google.protobuf.message.Message`` (protobuf is imported lazily, as an extra)."""

_WIRE_TYPES = (
    "a varint",
    "a 64-bit value",
    "a length-delimited value",
    "a group",
    "a group end",
    "a 32-bit value",
)
"""How each wire type (0-5) is named in a record's failure reason."""


def misfit_field(message: Message) -> str | None:
    """Say which field of ``message`` itself its parser set aside as unknown, if one was.

    protobuf's parser keeps a known field that came with a wire type its type is not written
    with (or a closed enum's unknown number) among the unknown fields and reads the field as
    unset. spark-protobuf refuses such a record (a type mismatch: the writer's schema was
    another), for the fields of the message it reads, not those of messages within it (it
    checks the top level only); the Python path does the same, so the two agree. Records
    with no unknown field, nearly all, cost one empty look.
    """
    unknown = _unknown_fields()(message)
    if not unknown:
        return None
    fields = message.DESCRIPTOR.fields_by_number
    for item in unknown:
        field = fields.get(item.field_number)
        if field is None:
            continue
        if field.enum_type is not None and item.wire_type == 0:
            number = item.data - 2**64 if item.data >= 2**63 else item.data  # sign-extended
            return (
                f"field {field.full_name}: {number} is not a number of the closed enum "
                f"{field.enum_type.full_name}"
            )
        if is_map(field) and item.wire_type == 2:  # the entry is well formed, not its value
            value = field.message_type.fields_by_name["value"]
            if value.enum_type is not None:
                return (
                    f"field {field.full_name}: an entry's value is not a number of the closed "
                    f"enum {value.enum_type.full_name}"
                )
        wire = _WIRE_TYPES[item.wire_type] if item.wire_type < len(_WIRE_TYPES) else "?"
        return (
            f"field {field.full_name} (number {field.number}) came as {wire}, which is not how "
            "its type is written: the record was written with another schema"
        )
    return None


@functools.cache
def _unknown_fields() -> Callable[[Message], Any]:
    """Return how to list a message's unknown fields (protobuf 4.22 changed the API)."""
    try:
        from google.protobuf.unknown_fields import UnknownFieldSet
    except ImportError:  # pragma: no cover - protobuf before 4.22
        return lambda message: message.UnknownFields()
    return UnknownFieldSet
