"""A Confluent-style schema registry as the codecs meet it: its wire framing and its client.

The framing: a zero byte, then a 4-byte schema id. Every serializer of confluent-kafka (and of
the Java clients) writes it before the Avro, JSON or Protobuf payload; Protobuf adds the index
path of the message inside its file (a count and indexes as zig-zag varints, or a single 0 for
the first message) after the id.

The client: a framed payload's schema id means something only to the registry, so the Avro,
JSON and Protobuf codecs ask the same client, made here once per Python worker and registry
settings. Both live here because a codec that reads one needs the other.
"""

from __future__ import annotations

import functools
import struct
from typing import Any, Final

from kafka_rescalable.errors import MissingExtraError, PayloadDecodeError
from kafka_rescalable.formats.options import RegistrySettings

__all__ = [
    "MAGIC_BYTE",
    "SERIALIZER_KEYS",
    "frame",
    "registry_client",
    "split_frame",
    "split_message_indexes",
]

MAGIC_BYTE: Final = 0
_HEADER: Final = struct.Struct(">bI")


def split_frame(payload: bytes) -> tuple[int, memoryview]:
    """Return ``(schema id, body)`` of a framed payload.

    Raises
    ------
    PayloadDecodeError
        When the payload is shorter than the 5-byte header or does not start with the magic
        byte (most often: the topic holds plain payloads, so the framing option is wrong).
    """
    if len(payload) < _HEADER.size:
        msg = f"{len(payload)} bytes is shorter than the registry framing's 5-byte header"
        raise PayloadDecodeError(msg)
    magic, schema_id = _HEADER.unpack_from(payload)
    if magic != MAGIC_BYTE:
        msg = (
            f"unknown magic byte {magic & 0xFF:#04x} (a registry-framed record starts with "
            "0x00); if the topic holds plain payloads, set the framing option to 'none'"
        )
        raise PayloadDecodeError(msg)
    return schema_id, memoryview(payload)[_HEADER.size :]


def frame(schema_id: int, body: bytes) -> bytes:
    """Prefix ``body`` with the registry framing for ``schema_id``."""
    return _HEADER.pack(MAGIC_BYTE, schema_id) + body


def split_message_indexes(body: memoryview, schema_id: int) -> tuple[tuple[int, ...], memoryview]:
    """Return the Protobuf message index path and the message bytes after it.

    A single ``0`` stands for ``(0,)``, the first message of the schema's file.
    """
    count, position = _read_zigzag(body, 0, schema_id)
    if count == 0:
        return (0,), body[position:]
    indexes = []
    for _ in range(count):
        index, position = _read_zigzag(body, position, schema_id)
        indexes.append(index)
    return tuple(indexes), body[position:]


def _read_zigzag(body: memoryview, position: int, schema_id: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if position >= len(body):
            msg = "truncated Protobuf message indexes after the schema id"
            raise PayloadDecodeError(msg, schema_id)
        byte = body[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), position
        shift += 7
        if shift > 63:
            msg = "malformed Protobuf message indexes after the schema id"
            raise PayloadDecodeError(msg, schema_id)

SERIALIZER_KEYS: Final = frozenset(
    {"auto.register.schemas", "normalize.schemas", "use.latest.version"}
)
"""``schema.registry.*`` settings of the sink's serializers, which ``SchemaRegistryClient``
refuses as unknown: the client is made without them."""


@functools.cache
def registry_client(registry: RegistrySettings) -> Any:
    """confluent-kafka's ``SchemaRegistryClient`` for ``registry``, one per Python worker.

    One client per worker and settings keeps its caches (schemas by id, subjects' versions)
    across tasks, so an executor asks the registry once per writer schema, not per batch.
    """
    try:
        from confluent_kafka.schema_registry import SchemaRegistryClient
    except ImportError as error:  # httpx, authlib, ... come with the extras
        msg = (
            "a schema registry needs confluent-kafka's registry client and its libraries "
            f"({error.name} is missing): pip install 'kafka-rescalable[avro]' (or [protobuf], "
            "[json])"
        )
        raise MissingExtraError(msg, "avro") from error
    config = {k: v for k, v in registry.items if k not in SERIALIZER_KEYS}
    return SchemaRegistryClient(config)
