"""``avro``: Avro payloads, plain or framed for a schema registry, decoded with fastavro.

The reader schema is fixed on the driver: ``valueSchema`` inline, else the latest version of
the registry subject (``valueSubject``, by default ``<topic>-value``). On the executors each
framed payload is read with its writer schema, fetched by id once per Python worker (with the
subjects it references, written into it by :mod:`kafka_rescalable.formats.avro.registered`, as
for the reader schema), and resolved to the reader schema by fastavro (Avro's schema
resolution: a field the writer lacks takes the reader's default, a field the reader lacks is
skipped). Plain payloads are read with the reader schema as the writer's.
:mod:`kafka_rescalable.formats.avro.types` maps the types,
:mod:`kafka_rescalable.formats.avro.native` decodes whole columns where the native core is
installed.

The sink writes a row's value with ``valueSchema`` when given, else with the schema derived
from the column's Spark type; with a registry through confluent-kafka's ``AvroSerializer``,
which registers the schema (``schema.registry.auto.register.schemas``, default true) or uses
the subject's latest version, and frames the payload.
:mod:`kafka_rescalable.formats.avro.native_encoding` encodes whole columns where the native
core is installed and the bytes are proven the same.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

import pyarrow as pa
from pyspark.sql.types import DataType

from kafka_rescalable.errors import InvalidOptionError, PayloadDecodeError, SchemaRegistryError
from kafka_rescalable.formats.avro.registered import Unknown as _Unknown
from kafka_rescalable.formats.avro.registered import self_contained_text, writer_document
from kafka_rescalable.formats.avro.types import (
    AvroMappingError,
    as_declared,
    record_without_fields,
    spark_type_of,
    without_ignored_logical_types,
)
from kafka_rescalable.formats.avro.values import has_struct_union, value_converter, writer_converter
from kafka_rescalable.formats.avro.writer_schema import avro_schema_of
from kafka_rescalable.formats.codec import (
    ColumnDecoder,
    ColumnEncoder,
    Decoder,
    Encoder,
    FormatCodec,
    ReaderSchema,
    WriterColumn,
)
from kafka_rescalable.formats.ddl import to_ddl
from kafka_rescalable.formats.options import (
    Framing,
    PayloadOptions,
    RegistrySettings,
    schema_document,
)
from kafka_rescalable.formats.references import SchemaRef
from kafka_rescalable.formats.registry import latest_version, registry_client, split_frame

__all__ = ["CODEC", "SERIALIZER_SETTINGS"]

SERIALIZER_SETTINGS: Final = {
    "auto.register.schemas": True,
    "normalize.schemas": False,
    "use.latest.version": False,
}
"""``schema.registry.*`` settings meant for the sink's ``AvroSerializer``, with its defaults.

They are not ``SchemaRegistryClient`` settings (it refuses unknown ones), so they are taken
out of the settings before the client is made.
"""


class _AvroCodec(FormatCodec):
    extra = "avro"

    def resolve(
        self, payload: PayloadOptions, registry: RegistrySettings | None, topics: Sequence[str]
    ) -> ReaderSchema:
        if payload.schema is not None:
            text, schema_id, option = payload.schema, None, payload.option("Schema")
        elif registry is not None:
            subject = _subject(payload, topics)
            text, schema_id = _latest(registry, subject, payload)
            option = payload.option("Subject")
        else:  # options.py refuses this; kept for a codec used on its own
            msg = "'avro' needs a reader schema here, or 'schema.registry.url'"
            raise InvalidOptionError(payload.option("Schema"), msg)
        parsed = _parse(text, option, schema_id)
        try:
            mapped, _ = spark_type_of(parsed)
        except AvroMappingError as error:
            raise InvalidOptionError(option, _where(schema_id) + str(error)) from error
        spark_type = as_declared(mapped)
        return ReaderSchema(payload, text, to_ddl(spark_type), spark_type, schema_id)

    def decoder(
        self, reader: ReaderSchema, spark_type: DataType, registry: RegistrySettings | None
    ) -> Decoder:
        assert isinstance(reader.definition, str)
        reader_schema = _parsed(reader.definition)
        if reader.payload.framing is Framing.NONE or registry is None:
            writers: Callable[[int], Any] = lambda _schema_id: reader_schema  # noqa: E731
        else:
            settings = _client_settings(registry)
            registry_client(settings)  # now: bad settings fail the task, not each record
            writers = functools.partial(_writer_schema, settings)
        return _build_decoder(reader_schema, reader.payload.framing, writers)

    def column_decoder(
        self,
        reader: ReaderSchema,
        spark_type: DataType,
        arrow_type: pa.DataType,
        registry: RegistrySettings | None,
    ) -> ColumnDecoder | None:
        from kafka_rescalable.formats.avro.native import native_decoder

        assert isinstance(reader.definition, str)
        framing = reader.payload.framing
        if framing is Framing.NONE:
            return native_decoder(reader.definition, arrow_type, framing, None)
        if registry is None:  # framed, but every record is read with the reader schema
            definition = reader.definition
            return native_decoder(reader.definition, arrow_type, framing, lambda _id: definition)
        writers = functools.partial(_writer_text, _client_settings(registry))
        return native_decoder(reader.definition, arrow_type, framing, writers)

    def encoder(self, column: WriterColumn) -> Encoder:
        payload = column.payload
        text, option = _sink_schema(column)
        parsed = _parse(text, option, None)
        convert = writer_converter(parsed)
        if column.registry is None or payload.framing is Framing.NONE:
            if payload.framing is Framing.CONFLUENT:
                msg = "registry framing needs a schema id: set 'schema.registry.url'"
                raise InvalidOptionError(payload.option("Framing"), msg)
            return _plain_encoder(parsed, convert)
        return _registry_encoder(payload, text, convert, column.registry, column.topic)

    def column_encoder(self, column: WriterColumn, encode: Encoder) -> ColumnEncoder | None:
        from kafka_rescalable.formats.avro.native_encoding import native_encoder

        text, _ = _sink_schema(column)
        registry = column.registry
        framed = registry is not None and column.payload.framing is not Framing.NONE
        if registry is not None and framed and _serializer_conf(registry)["use.latest.version"]:
            return None  # the serializer writes with the subject's latest version, not ``text``
        return native_encoder(text, column.spark_type, encode, framed)


# --- driver ---------------------------------------------------------------------------------


def _subject(payload: PayloadOptions, topics: Sequence[str]) -> str:
    if payload.subject is not None:
        return payload.subject
    if len(topics) == 1:
        return f"{topics[0]}-{payload.column}"
    subscribed = "a topic pattern" if not topics else f"{len(topics)} topics"
    msg = (
        f"the reader schema is the latest version of a registry subject, but {subscribed} "
        f"give no single '<topic>-{payload.column}' subject: name the subject (e.g. "
        f"'{payload.option('Subject')}' = 'orders-{payload.column}') or give "
        f"'{payload.option('Schema')}' inline"
    )
    raise InvalidOptionError(payload.option("Subject"), msg)


def _latest(registry: RegistrySettings, subject: str, payload: PayloadOptions) -> tuple[str, int]:
    registered = latest_version(_client_settings(registry), subject)
    if registered is None:
        msg = (
            f"the schema registry at {registry.url} has no version of subject {subject!r}; "
            f"check the subject's name (option '{payload.option('Subject')}'), or give the "
            f"reader schema in '{payload.option('Schema')}'"
        )
        raise SchemaRegistryError(msg)
    schema = registered.schema
    if (schema.schema_type or "AVRO").upper() != "AVRO":
        msg = (
            f"subject {subject!r} holds a {schema.schema_type} schema (id "
            f"{registered.schema_id}), not Avro; set '{payload.option('Format')}' to match"
        )
        raise InvalidOptionError(payload.option("Subject"), msg)
    own = None if registered.version is None else SchemaRef(subject, int(registered.version))
    text = self_contained_text(_client_settings(registry), schema, f"subject {subject!r}", own)
    return text, registered.schema_id


def _where(schema_id: int | None) -> str:
    return "" if schema_id is None else f"the registry's schema id {schema_id}: "


def _parse(text: str, option: str, schema_id: int | None) -> Any:
    """Parse an Avro schema's JSON text, refusing it with ``option``'s name."""
    import fastavro

    refusal = f"{_where(schema_id)}not JSON"
    document = schema_document(text, option, refusal, "give an Avro schema as JSON text")
    missing = record_without_fields(document)
    if missing is not None:
        msg = f"{_where(schema_id)}not a valid Avro schema: {missing}"
        raise InvalidOptionError(option, msg)
    try:
        return fastavro.parse_schema(without_ignored_logical_types(document))
    except Exception as error:  # fastavro's SchemaParseException, KeyError, TypeError...
        detail = f"no {error} in it" if isinstance(error, KeyError) else str(error) or repr(error)
        msg = f"{_where(schema_id)}not a valid Avro schema: {detail}"
        raise InvalidOptionError(option, msg) from error


# --- executors ------------------------------------------------------------------------------


@functools.cache
def _parsed(text: str) -> Any:
    """Parse a reader or writer schema once per Python worker (fastavro's parsed form)."""
    import fastavro

    return fastavro.parse_schema(without_ignored_logical_types(json.loads(text)))


def _client_settings(registry: RegistrySettings) -> RegistrySettings:
    """Drop the serializer's settings, which ``SchemaRegistryClient`` refuses."""
    items = tuple((k, v) for k, v in registry.items if k not in SERIALIZER_SETTINGS)
    return registry if len(items) == len(registry.items) else RegistrySettings(items)


@functools.cache
def _writer_schema(registry: RegistrySettings, schema_id: int) -> Any:
    """Fetch and parse the writer schema of ``schema_id``, once per worker and id."""
    document = writer_document(registry, schema_id)
    if isinstance(document, _Unknown):
        return document
    try:
        return _parsed(document)
    except Exception as error:  # noqa: BLE001 - a registered schema fastavro refuses
        return _Unknown(f"schema id {schema_id} does not parse as Avro: {error}")


def _writer_text(registry: RegistrySettings, schema_id: int) -> str | None:
    """Give the writer schema's text for the native core; ``None`` where no record can be read.

    :func:`_writer_schema` decides, as for the slow path, and the core reads the same text.
    """
    if type(_writer_schema(registry, schema_id)) is _Unknown:
        return None
    return str(writer_document(registry, schema_id))


def _build_decoder(reader_schema: Any, framing: Framing, writers: Callable[[int], Any]) -> Decoder:
    import fastavro
    from fastavro.read import SchemaResolutionError

    read = fastavro.schemaless_reader
    bytes_io = io.BytesIO
    convert = value_converter(reader_schema)
    named = has_struct_union(reader_schema)

    def body(data: Any, writer: Any, schema_id: int | None) -> Any:
        try:
            value = read(bytes_io(data), writer, reader_schema, return_named_type=named)
        except SchemaResolutionError as error:
            reason = f"the writer schema cannot be resolved to the reader schema: {error}"
            raise PayloadDecodeError(reason, schema_id) from error
        except (EOFError, StopIteration, IndexError) as error:
            # fastavro reads past the end with an EOFError or an IndexError, by type
            reason = f"truncated Avro payload ({len(data)} bytes): {error}"
            raise PayloadDecodeError(reason, schema_id) from error
        except Exception as error:
            detail = str(error) or type(error).__name__
            raise PayloadDecodeError(f"malformed Avro payload: {detail}", schema_id) from error
        return value if convert is None else convert(value)

    if framing is Framing.NONE:

        def decode_plain(payload: bytes) -> Any:
            return body(payload, reader_schema, None)

        return decode_plain

    resolved: dict[int, Any] = {}

    def decode_framed(payload: bytes) -> Any:
        schema_id, data = split_frame(payload)
        writer = resolved.get(schema_id)
        if writer is None:
            writer = resolved[schema_id] = writers(schema_id)
        if type(writer) is _Unknown:
            raise PayloadDecodeError(writer.reason, schema_id)
        return body(data, writer, schema_id)

    return decode_framed


# --- sink -----------------------------------------------------------------------------------


def _sink_schema(column: WriterColumn) -> tuple[str, str]:
    """Give the writer schema's text and the option it comes from (or is derived for)."""
    payload = column.payload
    if payload.schema is not None:
        return payload.schema, payload.option("Schema")
    try:
        text = json.dumps(avro_schema_of(column.spark_type))
    except AvroMappingError as error:
        msg = f"the {payload.column} column cannot be written as Avro: {error}"
        raise InvalidOptionError(payload.option("Format"), msg) from error
    return text, payload.option("Format")


def _plain_encoder(parsed: Any, convert: Callable[[Any], Any] | None) -> Encoder:
    import fastavro

    write = fastavro.schemaless_writer
    bytes_io = io.BytesIO

    def encode(value: Any) -> bytes:
        out = bytes_io()
        write(out, parsed, value if convert is None else convert(value))
        return out.getvalue()

    return encode


def _serializer_conf(registry: RegistrySettings) -> dict[str, Any]:
    conf: dict[str, Any] = dict(SERIALIZER_SETTINGS)
    for key, text in registry.items:
        if key in SERIALIZER_SETTINGS:
            lowered = text.strip().lower()
            if lowered not in ("true", "false"):
                msg = f"{text!r} is not a boolean: use 'true' or 'false'"
                raise InvalidOptionError(f"schema.registry.{key}", msg)
            conf[key] = lowered == "true"
    return conf


def _registry_encoder(
    payload: PayloadOptions,
    text: str,
    convert: Callable[[Any], Any] | None,
    registry: RegistrySettings,
    topic: str | None,
) -> Encoder:
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    conf = _serializer_conf(registry)
    if payload.subject is not None:
        subject = payload.subject
        conf["subject.name.strategy"] = lambda _context, _record_name: subject
    elif topic is None:
        msg = (
            "the topic comes from each row's 'topic' column, so the registry subject cannot "
            f"be '<topic>-{payload.column}': name it"
        )
        raise InvalidOptionError(payload.option("Subject"), msg)
    to_dict = None if convert is None else (lambda value, _context: convert(value))
    serializer = AvroSerializer(
        registry_client(_client_settings(registry)), text, to_dict=to_dict, conf=conf
    )
    field = MessageField.KEY if payload.column == "key" else MessageField.VALUE
    context = SerializationContext(topic or "", field)

    def encode(value: Any) -> bytes:
        return serializer(value, context)

    return encode


CODEC = _AvroCodec()
