"""Avro schemas as the registry gives them: one self-contained text each, references in.

The reader schema (a subject's latest version, on the driver) and each writer schema (by id,
on the executors) may reference other subjects for named types they share. Here each is
fetched with all it references (:func:`~kafka_rescalable.formats.registry.referenced_schemas`)
and made one text (:func:`~kafka_rescalable.formats.avro.inlined.self_contained`), which both
decoders read alike: the native core and fastavro never see a reference.
"""

from __future__ import annotations

import functools
from typing import Any

from kafka_rescalable.errors import SchemaReferenceError
from kafka_rescalable.formats.avro.inlined import self_contained
from kafka_rescalable.formats.options import RegistrySettings
from kafka_rescalable.formats.references import SchemaRef
from kafka_rescalable.formats.registry import referenced_schemas, writer_schema

__all__ = ["Unknown", "self_contained_text", "writer_document"]


class Unknown:
    """A schema id that no record can be read with; remembered per worker with its reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def self_contained_text(
    registry: RegistrySettings, schema: Any, root: str, own: SchemaRef | None = None
) -> str:
    """Give a registry schema's text with the named types it references written into it.

    Parameters
    ----------
    registry
        The registry's settings (those of ``SchemaRegistryClient``).
    schema
        confluent-kafka's ``Schema``, as the registry gave it.
    root
        The schema for messages: ``subject 'orders-value'``, ``schema id 7``.
    own
        Its subject and version, when known: a reference back to it is a cycle.

    Raises
    ------
    SchemaReferenceError
        When a reference is missing, the references form a cycle, or one is not Avro.
    SchemaRegistryError
        When the registry does not answer.
    """
    text = str(schema.schema_str)
    if not schema.references:
        return text
    referenced = referenced_schemas(registry, schema, root, own)
    for other in referenced:
        if other.schema_type != "AVRO":
            msg = (
                f"{root} references subject {other.subject!r} version {other.version}, a "
                f"{other.schema_type} schema: an Avro schema can only use Avro named types"
            )
            raise SchemaReferenceError(msg, root, (other.subject, other.version))
    return self_contained(text, [other.text for other in referenced])


@functools.cache
def writer_document(registry: RegistrySettings, schema_id: int) -> str | Unknown:
    """Fetch the writer schema of ``schema_id`` as one text, references written in.

    An id the registry does not know, or whose references cannot be followed, is a decoding
    failure of the records written with it, remembered once per worker and id. A registry
    that does not answer raises :class:`~kafka_rescalable.errors.SchemaRegistryError` (see
    :func:`~kafka_rescalable.formats.registry.writer_schema`), which is not remembered: the
    retried task asks again.
    """
    schema = writer_schema(registry, schema_id)
    if schema is None:
        return Unknown(f"the schema registry at {registry.url} has no schema with id {schema_id}")
    if (schema.schema_type or "AVRO").upper() != "AVRO":
        return Unknown(f"schema id {schema_id} is a {schema.schema_type} schema, not Avro")
    try:
        return self_contained_text(registry, schema, f"schema id {schema_id}")
    except SchemaReferenceError as error:
        return Unknown(str(error))
