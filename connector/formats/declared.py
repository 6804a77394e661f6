"""Driver side: fix the reader schemas, declare the source's schema, plan the executors' work.

Spark asks a data source for its schema when a DataFrame is defined (``load()``) and hands it
back, parsed, to ``reader(schema)`` when the query starts; the reader schemas resolved for the
first are the ones the second decodes with (``KafkaSource`` keeps them), so a DataFrame reads
with the registry subject's version it was defined with. Typed columns are declared as DDL
(see :mod:`kafka_rescalable.formats.ddl`), so a reader's Spark type is whatever Spark parsed; the
executors convert to exactly that type.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql.types import ArrayType, DataType, MapType, StructField, StructType

from kafka_rescalable.config.values import AssignPartitions, SubscribeTopics, Subscription
from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.formats.codec import ReaderSchema, codec_for
from kafka_rescalable.formats.ddl import quote, to_ddl
from kafka_rescalable.formats.decoding import DECODE_ERROR_COLUMN, DecodePlan
from kafka_rescalable.formats.options import DecodeMode, PayloadSettings

__all__ = ["decode_plan", "declared_schema", "resolve_readers", "subscribed_topics"]


def subscribed_topics(subscription: Subscription) -> tuple[str, ...]:
    """Name the topics a subscription names; none for a pattern (known only when read)."""
    if isinstance(subscription, SubscribeTopics):
        return subscription.topics
    if isinstance(subscription, AssignPartitions):
        return tuple(sorted({tp.topic for tp in subscription.partitions}))
    return ()


def resolve_readers(payloads: PayloadSettings, topics: Sequence[str]) -> tuple[ReaderSchema, ...]:
    """Fix the reader schema of each typed column, key first."""
    return tuple(
        codec_for(payload.format).resolve(payload, payloads.registry, topics)
        for payload in payloads.columns
    )


def declared_schema(
    base: StructType, readers: Sequence[ReaderSchema], mode: DecodeMode
) -> StructType | str:
    """Declare the schema: ``base`` (Spark's Kafka schema) with the typed columns replaced.

    Returned as DDL when a column is typed, so that Spark parses a DDL reader schema too.
    """
    if not readers:
        return base
    typed = {reader.payload.column: reader.spark_ddl for reader in readers}
    fields = [
        f"{quote(field.name)} {typed.get(field.name) or to_ddl(field.dataType)}"
        for field in base.fields
    ]
    if mode is DecodeMode.PERMISSIVE:
        fields.append(f"{quote(DECODE_ERROR_COLUMN)} STRING")
    return ", ".join(fields)


def decode_plan(
    payloads: PayloadSettings, readers: Sequence[ReaderSchema], handed: StructType
) -> DecodePlan | None:
    """Plan what executors decode, with the types Spark handed back; ``None``: nothing.

    ``readers`` are those the source declared its schema with, so their types match what
    Spark hands back, unless the user gave the schema (``.schema(...)``) instead.

    Raises
    ------
    InvalidOptionError
        When a reader schema maps to another type than the one in the schema Spark handed
        back: a schema given with ``.schema(...)`` that does not fit the reader schema.
    """
    if not readers:
        return None
    types = {field.name: field.dataType for field in handed.fields}
    for reader in readers:
        column = reader.payload.column
        if reader.spark_type is not None and _shape(reader.spark_type) != _shape(types[column]):
            if reader.schema_id is None:
                option = reader.payload.option("Schema")
                source = f"'{option}'"
            else:
                option = reader.payload.option("Subject")
                source = f"the subject's version with schema id {reader.schema_id}"
            msg = (
                f"the schema given with .schema(...) declares '{column}' as "
                f"{to_ddl(types[column])}, but the reader schema ({source}) reads it as "
                f"{reader.spark_ddl}; leave out .schema(...) to let the source declare it, "
                "or declare that type"
            )
            raise InvalidOptionError(option, msg)
    return DecodePlan(
        tuple(readers),
        tuple(types[reader.payload.column].json() for reader in readers),
        payloads.mode,
        payloads.registry,
    )


def _shape(data_type: DataType) -> DataType:
    """``data_type`` with every nullability relaxed: what survives the trip through DDL.

    DDL cannot say that an array's elements or a map's values are never null, so Spark hands
    such a type back with nullable ones; only a change of the type itself is a new version.
    """
    if isinstance(data_type, StructType):
        return StructType(
            [StructField(field.name, _shape(field.dataType)) for field in data_type.fields]
        )
    if isinstance(data_type, ArrayType):
        return ArrayType(_shape(data_type.elementType))
    if isinstance(data_type, MapType):
        return MapType(_shape(data_type.keyType), _shape(data_type.valueType))
    return data_type
