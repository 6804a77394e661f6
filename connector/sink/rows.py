"""Rows in, Kafka records out: the input contract of Spark's Kafka sink, checked and converted.

The DataFrame has a ``value`` column (string or binary, required) and may have ``key`` (string
or binary), ``topic`` (string), ``partition`` (int) and ``headers``
(``array<struct<key: string, value: binary>>``); other columns are ignored, as Spark does. The
``topic`` option, when set, overrides the ``topic`` column.

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

from connector.errors import SinkInputError

__all__ = ["KafkaRecord", "SinkColumns", "first_topic", "kafka_records"]

UNASSIGNED_PARTITION: Final = -1
"""librdkafka's "let the partitioner choose" (``RD_KAFKA_PARTITION_UA``)."""

KafkaRecord = tuple[str, Any, Any, int, Any]
"""``(topic, value, key, partition, headers)``, as ``Producer.produce`` takes them."""

_BYTES_OR_TEXT = "string or binary"
_HEADERS_TYPE = "array<struct<key: string, value: binary>>"


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

    @classmethod
    def from_schema(cls, schema: StructType, topic: str | None) -> SinkColumns:
        """Check the input schema against the sink's contract; ``topic`` is the option.

        Raises
        ------
        SinkInputError
            For a missing ``value`` column, a column of the wrong type, or no topic at all
            (neither the option nor a column), naming the column.
        """
        types = {f.name: f.dataType for f in schema.fields}
        if "value" not in types:
            msg = (
                "the Kafka sink needs a 'value' column (string or binary); the input has "
                f"{sorted(types)}. Select or alias one, e.g. to_json(struct(*)) AS value"
            )
            raise SinkInputError(msg, "value")
        for name in ("value", "key"):
            if name in types:
                _check_type(name, types[name], (StringType, BinaryType), _BYTES_OR_TEXT)
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
        )


def _check_type(name: str, actual: DataType, allowed: tuple[type, ...], wanted: str) -> None:
    if not isinstance(actual, allowed):
        msg = (
            f"column '{name}' has type {actual.simpleString()}; the Kafka sink needs {wanted}"
            + (f". Cast it, e.g. CAST({name} AS STRING)" if wanted != "int" else "")
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


def kafka_records(batch: Any, columns: SinkColumns, first_row: int = 0) -> Iterator[KafkaRecord]:
    """Yield one Kafka record per row of an Arrow record batch.

    Parameters
    ----------
    batch
        A ``pyarrow.RecordBatch`` with the columns :meth:`SinkColumns.from_schema` accepted.
    columns
        The checked columns.
    first_row
        The index of the batch's first row in the task's input, for error messages.

    Raises
    ------
    SinkInputError
        For a row whose topic is null (and no ``topic`` option), naming the row.
    """
    rows = batch.num_rows
    values = batch.column("value").to_pylist()
    keys = batch.column("key").to_pylist() if columns.has_key else repeat(None, rows)
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
            UNASSIGNED_PARTITION if p is None else p
            for p in batch.column("partition").to_pylist()
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
        next(kafka_records(batch.slice(0, 1), columns))  # raises, naming the row
    return topic
