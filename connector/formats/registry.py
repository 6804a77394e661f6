"""A Confluent-style schema registry as the codecs meet it: its wire framing and its client.

The framing: a zero byte, then a 4-byte schema id. Every serializer of confluent-kafka (and of
the Java clients) writes it before the Avro, JSON or Protobuf payload; Protobuf adds the index
path of the message inside its file (a count and indexes as zig-zag varints, or a single 0 for
the first message) after the id.

The client: a framed payload's schema id means something only to the registry, so the Avro,
JSON and Protobuf codecs ask the same client, made here once per Python worker and registry
settings, through the questions asked here: a writer schema by id (executors), a subject's
latest version (the driver), and the subject versions a schema references (both). Each tells
a registry that says "no such schema" (the record or the option is at fault) from one that
does not answer (an outage, which no record may pay for). Framing and client live together
because a codec that reads one needs the other.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Any, Final

from kafka_rescalable.errors import (
    InvalidOptionError,
    MissingExtraError,
    PayloadDecodeError,
    SchemaRegistryError,
)
from kafka_rescalable.formats.options import RegistrySettings
from kafka_rescalable.formats.references import (
    ReferencedSchema,
    SchemaRef,
    follow_references,
    references_of,
)

__all__ = [
    "MAGIC_BYTE",
    "SERIALIZER_KEYS",
    "frame",
    "latest_version",
    "referenced_schemas",
    "registry_client",
    "split_frame",
    "split_message_indexes",
    "unavailable",
    "writer_schema",
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

_NOT_FOUND: Final = 404
_NO_SUCH_SCHEMA: Final = 40403
"""The registry's error code for a schema id it does not know (Confluent's, Apicurio's)."""
_NO_SUCH_SUBJECT: Final = frozenset({40401, 40402})
"""Subject not found, version not found: what a registry says of a subject with no version."""


_NUMBERS: Final = {
    "cache.capacity": int,
    "cache.latest.ttl.sec": float,
    "max.retries": int,
    "retries.wait.ms": int,
    "retries.max.wait.ms": int,
    "timeout": float,
}
"""``SchemaRegistryClient`` settings it wants as numbers; Spark hands every option over as text."""


@functools.cache
def registry_client(registry: RegistrySettings) -> Any:
    """confluent-kafka's ``SchemaRegistryClient`` for ``registry``, one per Python worker.

    One client per worker and settings keeps its cache of schemas by id across tasks, so an
    executor asks the registry once per writer schema, not per batch. (A subject's latest
    version is never taken from it: see :func:`latest_version`.)

    Raises
    ------
    MissingExtraError
        When confluent-kafka's registry client or its libraries are not installed.
    InvalidOptionError
        When the client refuses the ``schema.registry.*`` settings.
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
    config: dict[str, Any] = {k: v for k, v in registry.items if k not in SERIALIZER_KEYS}
    for key, kind in _NUMBERS.items():
        if key in config:
            try:
                config[key] = kind(config[key])
            except ValueError:
                msg = f"{config[key]!r} is not a number"
                raise InvalidOptionError(f"schema.registry.{key}", msg) from None
    try:
        return SchemaRegistryClient(config)
    except (TypeError, ValueError) as error:
        detail = registry.scrub(str(error))
        msg = f"confluent-kafka's registry client refused the settings: {detail}"
        raise InvalidOptionError("schema.registry.*", msg) from None


def writer_schema(registry: RegistrySettings, schema_id: int) -> Any | None:
    """Fetch the schema of ``schema_id`` for an executor (confluent-kafka's ``Schema``).

    Returns ``None`` when the registry answers that it has no such id: the record that names it
    is at fault, and ``mode`` decides what it does.

    Raises
    ------
    SchemaRegistryError
        When the registry does not answer, refuses the connector (credentials, TLS) or answers
        as no registry would (a 404 without its error code: the URL points elsewhere). No
        record is at fault, so none may be skipped or made null, even under ``PERMISSIVE``:
        the task fails, and Spark retries it.
    """
    return _ask(
        registry,
        lambda client: client.get_schema(schema_id),
        frozenset({_NO_SUCH_SCHEMA}),
        f"writer schema id {schema_id}",
        ". No record is at fault, so none is skipped or made null, whatever 'mode' says: the "
        "task fails, and Spark retries it",
    )


def latest_version(registry: RegistrySettings, subject: str) -> Any | None:
    """Ask the registry for ``subject``'s latest version now (a ``RegisteredSchema``).

    Always a request: confluent-kafka's ``get_latest_version`` keeps the first answer for the
    life of the client, one per Python worker, and Spark reuses its Python workers, so a
    DataFrame defined after a new version would get the old one. Returns ``None`` when the
    registry has no version of the subject.

    Raises
    ------
    SchemaRegistryError
        When the registry does not answer, refuses the connector, or does not answer as a
        registry.
    """
    return _ask(
        registry,
        lambda client: client.get_version(subject, "latest"),
        _NO_SUCH_SUBJECT,
        f"the latest version of subject {subject!r}",
    )


def referenced_schemas(
    registry: RegistrySettings, schema: Any, root: str, own: SchemaRef | None = None
) -> tuple[ReferencedSchema, ...]:
    """Fetch every schema ``schema`` (confluent-kafka's ``Schema``) references, dependencies first.

    Each is asked by subject and version, soft-deleted versions included (as confluent-kafka's
    own serializers ask: a version soft-deleted after another schema came to reference it
    still defines that schema). The client caches them, once per Python worker.

    Raises
    ------
    SchemaReferenceError
        When a reference is missing or the references form a cycle, naming ``root``.
    SchemaRegistryError
        When the registry does not answer (see :func:`latest_version`).
    """
    return follow_references(
        root, references_of(schema), lambda ref: _referenced(registry, ref), own
    )


def _referenced(registry: RegistrySettings, ref: SchemaRef) -> ReferencedSchema | None:
    registered = _ask(
        registry,
        lambda client: client.get_version(ref.subject, ref.version, True),
        _NO_SUCH_SUBJECT,
        f"the referenced {ref}",
    )
    if registered is None:
        return None
    schema = registered.schema
    return ReferencedSchema(
        ref.subject,
        ref.version,
        str(schema.schema_str),
        str(schema.schema_type or "AVRO").upper(),
        references_of(schema),
    )


def _ask(
    registry: RegistrySettings,
    question: Callable[[Any], Any],
    absent: frozenset[int],
    wanted: str,
    then: str = "",
) -> Any | None:
    """Ask the registry's client ``question``; ``None`` when the registry answers "no such".

    ``absent`` are the registry's error codes (with HTTP 404) that mean the thing asked for
    does not exist; any other failure is the registry's, raised with ``wanted`` named and
    ``then`` said after the reason.
    """
    from confluent_kafka.schema_registry.error import SchemaRegistryError as ClientError

    try:
        return question(registry_client(registry))
    except ClientError as error:
        if error.http_status_code == _NOT_FOUND and error.error_code in absent:
            return None
        failure: Exception = error
    except Exception as error:  # noqa: BLE001 - httpx's connection errors, TLS errors, ...
        failure = error
    raise SchemaRegistryError(unavailable(registry, wanted, failure) + then) from failure


def unavailable(registry: RegistrySettings, wanted: str, error: Exception) -> str:
    """Say that the registry could not give ``wanted``, why, and what to check.

    The URL and the error's text are shown without credentials.
    """
    from confluent_kafka.schema_registry.error import SchemaRegistryError as ClientError

    if isinstance(error, ClientError):
        status = error.http_status_code
        detail = f"HTTP {status}, error code {error.error_code}: {error.error_message}"
        if status in (401, 403):
            check = "the credentials in 'schema.registry.url' or schema.registry.basic.auth.*"
        elif status == _NOT_FOUND:
            check = "that 'schema.registry.url' is the registry's Confluent-compatible API"
        else:
            check = "that the registry is healthy and 'schema.registry.url'"
    else:
        detail = f"{type(error).__name__}: {error}"
        check = (
            "that the registry is up and reachable from the driver and every executor, and "
            "'schema.registry.url' and the other schema.registry.* settings (TLS, credentials)"
        )
    return (
        f"the schema registry at {registry.url} could not give {wanted} "
        f"({registry.scrub(detail)}); check {check}"
    )
