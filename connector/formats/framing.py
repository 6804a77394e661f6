"""The wire framing of a Confluent-style schema registry: a zero byte, then a 4-byte schema id.

Every serializer of confluent-kafka (and of the Java clients) writes it before the Avro, JSON or
Protobuf payload; Protobuf adds the index path of the message inside its file (a count and
indexes as zig-zag varints, or a single 0 for the first message) after the id.
"""

from __future__ import annotations

import struct
from typing import Final

from connector.errors import PayloadDecodeError

__all__ = ["MAGIC_BYTE", "frame", "split_frame", "split_message_indexes"]

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
