"""``protobuf``: messages described by a descriptor set file, plain or in registry framing.

The reader's message comes from ``valueSchema``, the path of a descriptor set (``protoc
--include_imports --descriptor_set_out=...``), and ``valueMessage``, the message's full name.
The driver reads the file once; its bytes travel in the :class:`ReaderSchema`, so executors
need no copy of it. Framed records carry the index path of the writer's message in its file;
it must point at the configured message. The writer's ``.proto`` itself is not needed: the
wire format lets a reader skip fields it does not know and default those it misses, which is
how Protobuf schemas evolve.

The sink encodes rows into the message, in registry framing through confluent-kafka's own
``ProtobufSerializer`` (which registers the message's file, unless the subject has it, and
writes the message indexes), or plain.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql.types import DataType, StructType

from kafka_rescalable.errors import InvalidOptionError, PayloadDecodeError, SchemaRegistryError
from kafka_rescalable.formats.codec import (
    ColumnDecoder,
    Decoder,
    Encoder,
    FormatCodec,
    ReaderSchema,
    WriterColumn,
)
from kafka_rescalable.formats.options import Framing, PayloadOptions, RegistrySettings
from kafka_rescalable.formats.protobuf_types import load_message, message_type
from kafka_rescalable.formats.protobuf_values import message_writer, record_reader
from kafka_rescalable.formats.registry import registry_client, split_frame, split_message_indexes

__all__ = ["CODEC"]


class _ProtobufCodec(FormatCodec):
    extra = "protobuf"

    def resolve(
        self, payload: PayloadOptions, registry: RegistrySettings | None, topics: Sequence[str]
    ) -> ReaderSchema:
        data = _read_descriptor_set(payload)
        descriptor = _message(data, payload)
        struct, ddl = message_type(descriptor, payload.option("Message"))
        return ReaderSchema(payload, data, ddl, struct)

    def decoder(
        self, reader: ReaderSchema, spark_type: DataType, registry: RegistrySettings | None
    ) -> Decoder:
        from google.protobuf.message import DecodeError
        from google.protobuf.message_factory import GetMessageClass

        payload = reader.payload
        assert isinstance(reader.definition, bytes)  # noqa: S101 - resolve() put it there
        descriptor = _message(reader.definition, payload)
        parse = GetMessageClass(descriptor).FromString
        read = record_reader(descriptor, _struct(spark_type, payload))
        name = descriptor.full_name
        required = _has_required(descriptor, set())

        def decode_body(body: Any, schema_id: int | None = None) -> dict[str, Any]:
            try:
                message = parse(body)
            except DecodeError as error:
                msg = f"not a valid {name} message: {error}"
                raise PayloadDecodeError(msg, schema_id) from error
            if required and not message.IsInitialized():  # protobuf's parser lets it pass
                missing = ", ".join(message.FindInitializationErrors())
                msg = f"not a valid {name} message: required fields missing: {missing}"
                raise PayloadDecodeError(msg, schema_id)
            try:
                return read(message)
            except PayloadDecodeError as error:  # raised without the schema id
                raise PayloadDecodeError(error.reason, schema_id) from error

        if payload.framing is Framing.NONE:
            return decode_body
        expected = _index_path(descriptor)

        def decode_framed(framed: bytes) -> dict[str, Any]:
            schema_id, body = split_frame(framed)
            indexes, body = split_message_indexes(body, schema_id)
            if indexes != expected:
                raise PayloadDecodeError(_other_message(descriptor, indexes), schema_id)
            return decode_body(body, schema_id)

        return decode_framed

    def column_decoder(
        self,
        reader: ReaderSchema,
        spark_type: DataType,
        arrow_type: pa.DataType,
        registry: RegistrySettings | None,
    ) -> ColumnDecoder | None:
        from kafka_rescalable.formats.protobuf.native import native_decoder

        payload = reader.payload
        assert isinstance(reader.definition, bytes)  # noqa: S101 - resolve() put it there
        descriptor = _message(reader.definition, payload)
        indexes = None if payload.framing is Framing.NONE else _index_path(descriptor)
        return native_decoder(reader.definition, descriptor.full_name, arrow_type, indexes)

    def encoder(self, column: WriterColumn) -> Encoder:
        from google.protobuf.message_factory import GetMessageClass

        payload = column.payload
        descriptor = _message(_read_descriptor_set(payload), payload)
        message_class = GetMessageClass(descriptor)
        try:
            write = message_writer(descriptor, _struct(column.spark_type, payload))
        except TypeError as error:
            raise InvalidOptionError(payload.option("Message"), str(error)) from error

        def message(value: Any) -> Any:
            built = message_class()
            write(built, value)
            return built

        if payload.framing is Framing.NONE:
            return lambda value: message(value).SerializeToString()
        serialize = _registry_serializer(payload, message_class, column.registry, column.topic)
        return lambda value: serialize(message(value))


def _read_descriptor_set(payload: PayloadOptions) -> bytes:
    option = payload.option("Schema")
    path = Path(str(payload.schema)).expanduser()
    try:
        return path.read_bytes()
    except OSError as error:
        msg = (
            f"cannot read the descriptor set {str(path)!r} ({error.strerror or error}); give "
            "the path of a file made with protoc --include_imports --descriptor_set_out=FILE"
        )
        raise InvalidOptionError(option, msg) from error


def _message(data: bytes, payload: PayloadOptions) -> Any:
    return load_message(
        data, str(payload.message), payload.option("Schema"), payload.option("Message")
    )


def _struct(spark_type: DataType, payload: PayloadOptions) -> StructType:
    if not isinstance(spark_type, StructType):
        msg = f"a Protobuf message is a struct, not {spark_type.simpleString()}"
        raise InvalidOptionError(payload.option("Message"), msg)
    return spark_type


def _has_required(descriptor: Any, seen: set[str]) -> bool:
    """Whether a message of ``descriptor`` may lack a proto2 ``required`` field."""
    seen.add(descriptor.full_name)
    return any(
        field.is_required
        or (
            field.message_type is not None
            and field.message_type.full_name not in seen
            and _has_required(field.message_type, seen)
        )
        for field in descriptor.fields
    )


def _index_path(descriptor: Any) -> tuple[int, ...]:
    """Where ``descriptor`` is in its file: indexes from the top-level messages down."""
    path = []
    while descriptor.containing_type is not None:
        parent = descriptor.containing_type
        path.append(list(parent.nested_types).index(descriptor))
        descriptor = parent
    path.append(list(descriptor.file.message_types_by_name.values()).index(descriptor))
    return tuple(reversed(path))


def _other_message(descriptor: Any, indexes: tuple[int, ...]) -> str:
    """Say which message a record's index path names, as the reader's file would have it."""
    messages = list(descriptor.file.message_types_by_name.values())
    found = None
    for index in indexes:
        found = messages[index] if 0 <= index < len(messages) else None
        if found is None:
            break
        messages = list(found.nested_types)
    writer = f"message {found.full_name}" if found is not None else "a message"
    return (
        f"the writer used {writer} (index path {list(indexes)} in its file), not "
        f"{descriptor.full_name} (index path {list(_index_path(descriptor))}); read the "
        "topic with that valueMessage, or check that both files list their messages in "
        "the same order"
    )


def _registry_serializer(
    payload: PayloadOptions,
    message_class: Any,
    registry: RegistrySettings | None,
    topic: str | None,
) -> Any:
    """confluent-kafka's ``ProtobufSerializer`` for the column, with its context bound."""
    if registry is None:
        msg = (
            "registry framing needs the schema's id: set 'schema.registry.url', or set "
            f"'{payload.option('Framing')}' to 'none' for plain payloads"
        )
        raise InvalidOptionError(payload.option("Framing"), msg)
    from confluent_kafka.schema_registry.error import SchemaRegistryError as RegistryFailure
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    config: dict[str, Any] = {}
    subject = payload.subject
    if subject is not None:
        config["subject.name.strategy"] = lambda _context, _record_name: subject
    elif topic is None:
        msg = "with no single topic to name the subject after, give the subject to write to"
        raise InvalidOptionError(payload.option("Subject"), msg)
    else:
        subject = f"{topic}-{payload.column}"
    serializer = ProtobufSerializer(message_class, registry_client(registry), config)
    field = MessageField.KEY if payload.column == "key" else MessageField.VALUE
    context = SerializationContext(topic or "", field)

    def serialize(message: Any) -> bytes:
        try:
            return serializer(message, context)
        except RegistryFailure as error:
            msg = (
                f"the schema registry at {registry.url} did not take subject {subject!r}'s "
                f"schema: {error}"
            )
            raise SchemaRegistryError(msg) from error

    return serialize


CODEC = _ProtobufCodec()
