"""``json``: JSON text payloads, read as ``from_json`` reads them and written as ``to_json``.

The reader schema is ``valueSchema`` (a Spark DDL string, parsed by Spark, or a JSON Schema,
mapped by :mod:`kafka_rescalable.formats.json_types`) or, with a schema registry and no
``valueSchema``, the subject's latest JSON Schema, fixed with the DataFrame. Registry-framed
payloads (confluent-kafka's ``JSONSerializer``) lose their 5-byte header; the JSON text is read
by the reader schema alone, since JSON carries its field names: the writer's schema id is only
checked to exist, once per id and worker. The sink writes plain JSON text, or with a registry
confluent-kafka's ``JSONSerializer`` output (framed, validated against the registered schema).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import DataType

from kafka_rescalable.errors import InvalidOptionError, PayloadDecodeError, SchemaRegistryError
from kafka_rescalable.formats.codec import (
    ColumnDecoder,
    Decoder,
    Encoder,
    FormatCodec,
    ReaderSchema,
    WriterColumn,
)
from kafka_rescalable.formats.json_types import (
    check_ddl,
    column_ddl,
    is_json_schema,
    json_schema_of,
    spark_type_of,
    to_ddl,
)
from kafka_rescalable.formats.json_values import column_reader_for, reader_for, writer_for
from kafka_rescalable.formats.options import Framing, PayloadOptions, RegistrySettings
from kafka_rescalable.formats.registry import (
    latest_version,
    registry_client,
    split_frame,
    writer_schema,
)

__all__ = ["CODEC"]

_NOT_FOUND = 404


class _JsonCodec(FormatCodec):
    extra = "json"

    def resolve(
        self, payload: PayloadOptions, registry: RegistrySettings | None, topics: Sequence[str]
    ) -> ReaderSchema:
        option = payload.option("Schema")
        text = payload.schema
        if text is not None and not text.strip():
            msg = "it is empty; give a Spark DDL string such as 'id BIGINT, name STRING'"
            raise InvalidOptionError(option, msg)
        if text is not None and not is_json_schema(text):
            check_ddl(text, option)
            return ReaderSchema(payload, text, column_ddl(text))
        schema_id = None
        if text is None:
            if registry is None:  # payload_settings refuses this already; kept for direct use
                raise InvalidOptionError(option, "'json' needs a DDL string or a JSON Schema")
            subject = _subject(payload, topics)
            registered = _latest(registry, subject, payload)
            if registered.schema.schema_type != "JSON":
                msg = (
                    f"the subject {subject!r}'s latest version is a "
                    f"{registered.schema.schema_type} schema, not a JSON Schema; name the "
                    "subject holding this topic's JSON Schema, or give the schema inline in "
                    f"'{option}'"
                )
                raise InvalidOptionError(payload.option("Subject"), msg)
            text, schema_id, option = (
                registered.schema.schema_str,
                registered.schema_id,
                payload.option("Subject"),
            )
        spark_type = spark_type_of(text, option)
        return ReaderSchema(payload, text, to_ddl(spark_type), spark_type, schema_id)

    def decoder(
        self, reader: ReaderSchema, spark_type: DataType, registry: RegistrySettings | None
    ) -> Decoder:
        try:
            read = reader_for(spark_type)
        except ValueError as error:
            raise InvalidOptionError(reader.payload.option("Schema"), str(error)) from None
        if reader.payload.framing is Framing.NONE:
            return read
        known = _KnownIds(registry)

        def decode(payload: bytes) -> Any:
            schema_id, body = split_frame(payload)
            known.check(schema_id)
            try:
                return read(bytes(body))
            except PayloadDecodeError as error:
                raise PayloadDecodeError(error.reason, schema_id, error.partial) from None

        return decode

    def column_decoder(
        self,
        reader: ReaderSchema,
        spark_type: DataType,
        arrow_type: pa.DataType,
        registry: RegistrySettings | None,
    ) -> ColumnDecoder | None:
        """Decode JSON text a column at a time where that gives the same values.

        Registry-framed payloads lose their header first, each writer schema id in the batch
        checked to exist once, as :meth:`decoder` checks it.
        """
        framed = reader.payload.framing is not Framing.NONE
        try:
            return column_reader_for(spark_type, _KnownIds(registry).check if framed else None)
        except ValueError:
            return None  # decoder() names the option for a type from_json cannot read

    def encoder(self, column: WriterColumn) -> Encoder:
        to_value, dumps = writer_for(column.spark_type)
        if column.registry is None or column.payload.framing is Framing.NONE:
            return lambda value: dumps(to_value(value)).encode("utf-8")
        return _registry_encoder(column, column.registry, to_value, dumps)


def _subject(payload: PayloadOptions, topics: Sequence[str]) -> str:
    if payload.subject is not None:
        return payload.subject
    if len(topics) != 1:
        which = "a topic pattern" if not topics else f"{len(topics)} topics"
        msg = (
            f"with {which}, the subject of the reader schema is not '<topic>-{payload.column}'; "
            "name it here, or give the schema inline in "
            f"'{payload.option('Schema')}'"
        )
        raise InvalidOptionError(payload.option("Subject"), msg)
    return f"{topics[0]}-{payload.column}"


def _latest(registry: RegistrySettings, subject: str, payload: PayloadOptions) -> Any:
    """Ask for the subject's latest version (confluent-kafka's ``RegisteredSchema``)."""
    registered = latest_version(registry, subject)
    if registered is None:
        msg = (
            f"the schema registry at {registry.url} has no subject {subject!r}; register "
            f"the topic's JSON Schema there, name another subject in "
            f"'{payload.option('Subject')}', or give the schema in "
            f"'{payload.option('Schema')}'"
        )
        raise SchemaRegistryError(msg)
    return registered


class _KnownIds:
    """Writer schema ids seen to exist in the registry, checked once per id and worker.

    An id the registry does not know fails its record; a registry that does not answer
    raises :class:`SchemaRegistryError`, which fails the task whatever ``mode`` says.
    """

    def __init__(self, registry: RegistrySettings | None) -> None:
        if registry is not None:
            registry_client(registry)  # now: bad settings fail the task, not each record
        self._registry = registry
        self._known: set[int] = set()

    def check(self, schema_id: int) -> None:
        if self._registry is None or schema_id in self._known:
            return
        schema = writer_schema(self._registry, schema_id)
        if schema is None:
            msg = f"the schema registry at {self._registry.url} has no schema id {schema_id}"
            raise PayloadDecodeError(msg, schema_id)
        if schema.schema_type != "JSON":
            msg = f"the writer's schema (id {schema_id}) is {schema.schema_type}, not JSON"
            raise PayloadDecodeError(msg, schema_id)
        self._known.add(schema_id)


def _registry_encoder(
    column: WriterColumn,
    registry: RegistrySettings,
    to_value: Callable[[Any], Any],
    dumps: Callable[[Any], str],
) -> Encoder:
    """confluent-kafka's ``JSONSerializer``: framing, schema id, validation of each value.

    The schema is ``valueSchema`` when it is a JSON Schema (registered, as the serializer does
    by default), else the subject's latest version, else one derived from the column's type
    (registered). ``registry`` is ``column``'s, known to be set.
    """
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    payload, topic = column.payload, column.topic

    if payload.subject is None and topic is None:
        msg = (
            "the sink writes to the topics its rows name, so the registry subject is not "
            f"'<topic>-{payload.column}': name it here"
        )
        raise InvalidOptionError(payload.option("Subject"), msg)
    subject = payload.subject or f"{topic}-{payload.column}"
    client = registry_client(registry)
    conf: dict[str, Any] = {"subject.name.strategy": lambda ctx, name: subject}
    if payload.schema is not None and is_json_schema(payload.schema):
        schema: str | None = payload.schema
    elif _has_versions(client, subject):
        schema = None
        conf.update({"auto.register.schemas": False, "use.latest.version": True})
    else:
        schema = json.dumps(json_schema_of(column.spark_type))
    serializer = JSONSerializer(
        schema, client, to_dict=lambda value, ctx: to_value(value), conf=conf, json_encode=dumps
    )
    field = MessageField.KEY if payload.column == "key" else MessageField.VALUE
    context = SerializationContext(topic or subject, field)
    return lambda value: serializer(value, context)


def _has_versions(client: Any, subject: str) -> bool:
    from confluent_kafka.schema_registry.error import SchemaRegistryError as ClientError

    try:
        client.get_latest_version(subject)
    except ClientError as error:
        if error.http_status_code == _NOT_FOUND:
            return False
        raise
    return True


CODEC = _JsonCodec()
