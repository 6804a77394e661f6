"""Rows in, Kafka records out: the input contract of Spark's Kafka sink, checked and converted.

The DataFrame has a ``value`` column (string or binary, required) and may have ``key`` (string
or binary), ``topic`` (string), ``partition`` (int) and ``headers``
(``array<struct<key: string, value: binary>>``); other columns are ignored, as Spark does. The
``topic`` option, when set, overrides the ``topic`` column. With a typed ``valueFormat``
(``keyFormat``) the column holds what that format encodes instead: text for ``string``, a
struct (or any type the schema maps to) for ``json``, ``avro`` and ``protobuf``; each row's
value is encoded on the executors, by the format's encoder, before it is produced: a whole
Arrow batch at once where the format has a bulk encoder that takes it (Avro with the native
core), else row by row, where a value that fails is named by its row.

The columns are checked once on the driver, against the Spark schema, so a wrong type fails
when the query starts; the rows are converted on the executors, from the Arrow batches PySpark
hands a writer, one column at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Final

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    StringType,
    StructType,
)

from kafka_rescalable.errors import SinkInputError
from kafka_rescalable.formats.options import (
    PLAIN,
    PayloadFormat,
    PayloadOptions,
    PayloadSettings,
)
from kafka_rescalable.sink.encoding import (
    ColumnEncoding,
    RowEncoders,
    encoded_column,
    task_encoders,
)

__all__ = [
    "ColumnEncoding",
    "KafkaRecord",
    "RowEncoders",
    "SinkColumns",
    "first_topic",
    "kafka_records",
]

UNASSIGNED_PARTITION: Final = -1
"""librdkafka's "let the partitioner choose" (``RD_KAFKA_PARTITION_UA``)."""

KafkaRecord = tuple[str, Any, Any, int, Any]
"""``(topic, value, key, partition, headers)``, as ``Producer.produce`` takes them."""

_BYTES_OR_TEXT = "string or binary"
_HEADERS_TYPE = "array<struct<key: string, value: binary>>"
_STRUCT_FORMATS = "'json', 'avro' or 'protobuf'"


@dataclass(frozen=True)
class SinkColumns:
    """Which optional columns the input has, and the topic every row goes to if fixed.

    Build it with :meth:`from_schema`, which checks the types.
    """

    has_key: bool = False
    has_topic: bool = False
    has_partition: bool = False
    has_headers: bool = False
    topic: str | None = None
    value_encoding: ColumnEncoding | None = None
    key_encoding: ColumnEncoding | None = None

    @classmethod
    def from_schema(
        cls, schema: StructType, topic: str | None, payloads: PayloadSettings = PLAIN
    ) -> SinkColumns:
        """Check the input schema against the sink's contract and the columns' formats.

        Parameters
        ----------
        schema
            The DataFrame's schema.
        topic
            The ``topic`` option.
        payloads
            The ``keyFormat`` / ``valueFormat`` options: a typed column takes the type its
            format encodes instead of string or binary.

        Raises
        ------
        SinkInputError
            For a missing ``value`` column, a column of the wrong type (for a typed column,
            naming its format option too), a ``keyFormat`` with no ``key`` column, or no
            topic at all (neither the option nor a column), naming the column.
        """
        types = {f.name: f.dataType for f in schema.fields}
        if "value" not in types:
            msg = (
                "the Kafka sink needs a 'value' column (string or binary, or the type "
                f"'valueFormat' encodes); the input has {sorted(types)}. Select or alias one, "
                "e.g. struct(*) AS value"
            )
            raise SinkInputError(msg, "value")
        encodings: dict[str, ColumnEncoding] = {}
        for payload in (payloads.value, payloads.key):
            name = payload.column
            if name not in types:
                if payload.typed:
                    msg = (
                        f"'{payload.option('Format')}' is {payload.format.value!r} but the "
                        f"input has no '{name}' column; add one or drop the option"
                    )
                    raise SinkInputError(msg, name)
                continue
            _check_payload_type(payload, types[name])
            if payload.typed:
                encodings[name] = ColumnEncoding(
                    payload, types[name].json(), payloads.registry, topic
                )
        if "topic" in types:
            _check_type("topic", types["topic"], (StringType,), "string")
        if "partition" in types:
            _check_type("partition", types["partition"], (IntegerType,), "int")
        if "headers" in types and not _is_headers(types["headers"]):
            msg = (
                f"column 'headers' has type {types['headers'].simpleString()}; the Kafka sink "
                f"needs {_HEADERS_TYPE}"
            )
            raise SinkInputError(msg, "headers")
        if topic is None and "topic" not in types:
            msg = (
                "no topic to write to: set the 'topic' option or give the DataFrame a 'topic' "
                "column (string)"
            )
            raise SinkInputError(msg, "topic")
        return cls(
            has_key="key" in types,
            has_topic="topic" in types,
            has_partition="partition" in types,
            has_headers="headers" in types,
            topic=topic,
            value_encoding=encodings.get("value"),
            key_encoding=encodings.get("key"),
        )

    def encoders(self) -> RowEncoders:
        """Build the typed columns' encoders, for one task.

        Once per task on the executors, and once on the driver, so that a schema that refuses
        the column fails when the query starts.
        """
        return task_encoders(self.value_encoding, self.key_encoding)


_ACCEPTED: Final = {
    PayloadFormat.BINARY: (
        (StringType, BinaryType),
        "the Kafka sink needs string or binary. Cast it, e.g. CAST({name} AS STRING), or set "
        f"'{{option}}' to {_STRUCT_FORMATS} to encode a struct",
    ),
    PayloadFormat.STRING: (
        (StringType,),
        "'{option}' is 'string', which writes string columns. Cast it, e.g. CAST({name} AS "
        f"STRING), or choose {_STRUCT_FORMATS} for a struct",
    ),
    PayloadFormat.PROTOBUF: (
        (StructType,),
        "'{option}' is 'protobuf', which writes a message from a struct column; build one, "
        "e.g. struct(*) AS {name}",
    ),
}
"""The column types a format takes, and why others are refused; ``json`` and ``avro`` leave it
to the schema, which the encoder checks when it is built."""


def _check_payload_type(payload: PayloadOptions, actual: DataType) -> None:
    """Refuse a column its format cannot encode, naming the column and the format option."""
    if payload.format not in _ACCEPTED:
        return
    allowed, why = _ACCEPTED[payload.format]
    if not isinstance(actual, allowed):
        name = payload.column
        reason = why.format(name=name, option=payload.option("Format"))
        raise SinkInputError(f"column '{name}' has type {actual.simpleString()}; {reason}", name)


def _check_type(name: str, actual: DataType, allowed: tuple[type, ...], wanted: str) -> None:
    if not isinstance(actual, allowed):
        msg = f"column '{name}' has type {actual.simpleString()}; the Kafka sink needs {wanted}" + (
            f". Cast it, e.g. CAST({name} AS STRING)" if wanted != "int" else ""
        )
        raise SinkInputError(msg, name)


def _is_headers(actual: DataType) -> bool:
    if not isinstance(actual, ArrayType) or not isinstance(actual.elementType, StructType):
        return False
    fields = {f.name: f.dataType for f in actual.elementType.fields}
    return (
        set(fields) == {"key", "value"}
        and isinstance(fields["key"], StringType)
        and isinstance(fields["value"], BinaryType)
    )


def kafka_records(
    batch: Any, columns: SinkColumns, first_row: int = 0, encoders: RowEncoders | None = None
) -> Iterator[KafkaRecord]:
    """Yield one Kafka record per row of an Arrow record batch.

    Parameters
    ----------
    batch
        A ``pyarrow.RecordBatch`` with the columns :meth:`SinkColumns.from_schema` accepted.
    columns
        The checked columns.
    first_row
        The index of the batch's first row in the task's input, for error messages.
    encoders
        The task's encoders (:meth:`SinkColumns.encoders`); built here when not given.

    Raises
    ------
    SinkInputError
        For a row whose topic is null (and no ``topic`` option), or whose typed value or key
        does not encode, naming the row.
    """
    rows = batch.num_rows
    if encoders is None:
        encoders = columns.encoders()
    values = encoded_column(
        batch, "value", encoders.value, columns.value_encoding, first_row, encoders.value_bulk
    )
    if columns.has_key:
        keys: Any = encoded_column(
            batch, "key", encoders.key, columns.key_encoding, first_row, encoders.key_bulk
        )
    else:
        keys = repeat(None, rows)
    if columns.topic is not None:
        topics: Any = repeat(columns.topic, rows)
    else:
        topic_column = batch.column("topic")
        if topic_column.null_count:
            index = topic_column.is_null().to_pylist().index(True)
            msg = (
                f"row {first_row + index} of this task has a null 'topic' and no 'topic' option "
                "is set; fill the column or set the option as the default"
            )
            raise SinkInputError(msg, "topic")
        topics = topic_column.to_pylist()
    if columns.has_partition:
        partitions: Any = (
            UNASSIGNED_PARTITION if p is None else p for p in batch.column("partition").to_pylist()
        )
    else:
        partitions = repeat(UNASSIGNED_PARTITION, rows)
    if columns.has_headers:
        headers: Any = (
            None if h is None else [(pair["key"], pair["value"]) for pair in h]
            for h in batch.column("headers").to_pylist()
        )
    else:
        headers = repeat(None, rows)
    return zip(topics, values, keys, partitions, headers, strict=False)


def first_topic(batch: Any, columns: SinkColumns) -> str:
    """Return the topic of a non-empty batch's first row (the option, else the column).

    Raises
    ------
    SinkInputError
        When that row's topic is null and no ``topic`` option is set.
    """
    if columns.topic is not None:
        return columns.topic
    topic = batch.column("topic")[0].as_py()
    if topic is None:
        next(kafka_records(batch.slice(0, 1), columns, encoders=RowEncoders()))  # raises
    return topic
