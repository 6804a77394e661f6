"""Turn a list of consumed Kafka messages into one Arrow RecordBatch.

Arrow batches, not per-row tuples, go back to Spark: a tuple per record would cost a Python
object conversion per field on the way into the JVM.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from connector.schema import arrow_schema

__all__ = ["messages_to_batch"]


def messages_to_batch(messages: Sequence[Any], include_headers: bool) -> pa.RecordBatch:
    """Build the output batch for ``messages`` (confluent-kafka ``Message`` objects).

    Kafka's timestamp type codes are shifted to Spark's: confluent-kafka reports 1 for
    CreateTime and 2 for LogAppendTime (0: none), Spark's column holds 0 and 1 (-1: none), the
    ids of Java's ``TimestampType``. A record without a timestamp keeps Kafka's -1 ms, as in
    Spark's built-in source.
    """
    keys = []
    values = []
    topics = []
    partitions = []
    offsets = []
    timestamps = []
    timestamp_types = []
    for message in messages:
        keys.append(message.key())
        values.append(message.value())
        topics.append(message.topic())
        partitions.append(message.partition())
        offsets.append(message.offset())
        kind, millis = message.timestamp()
        timestamps.append(millis * 1000)
        timestamp_types.append(kind - 1)
    schema = arrow_schema(include_headers)
    columns = [
        pa.array(keys, pa.binary()),
        pa.array(values, pa.binary()),
        pa.array(topics, pa.string()),
        pa.array(partitions, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array(timestamps, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
        pa.array(timestamp_types, pa.int32()),
    ]
    if include_headers:
        headers = [_headers_of(message) for message in messages]
        columns.append(pa.array(headers, schema.field("headers").type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _headers_of(message: Any) -> list[dict[str, Any]] | None:
    """Headers as Spark shows them: null when a record has none, else key/value structs."""
    headers = message.headers()
    if not headers:
        return None
    return [{"key": key, "value": value} for key, value in headers]
