"""Turn a list of consumed Kafka messages into one Arrow RecordBatch.

Arrow batches, not per-row tuples, go back to Spark: a tuple per record would cost a Python
object conversion per field on the way into the JVM.

This runs once per record on the executors, so it is written for speed: one list
comprehension per accessor (each a tight loop of C calls), arithmetic on whole Arrow arrays
instead of per-record Python, and a constant topic column when the caller knows every
message comes from one topic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafka_rescalable.schema import arrow_schema

__all__ = ["messages_to_batch"]

_SPARK_TIMESTAMP = pa.timestamp("us", tz="UTC")
_SCHEMAS = {include: arrow_schema(include) for include in (False, True)}


def messages_to_batch(
    messages: Sequence[Any], include_headers: bool, topic: str | None = None
) -> pa.RecordBatch:
    """Build the output batch for ``messages`` (confluent-kafka ``Message`` objects).

    Kafka's timestamp type codes are shifted to Spark's: confluent-kafka reports 1 for
    CreateTime and 2 for LogAppendTime (0: none), Spark's column holds 0 and 1 (-1: none), the
    ids of Java's ``TimestampType``. A record without a timestamp keeps Kafka's -1 ms, as in
    Spark's built-in source.

    Parameters
    ----------
    messages
        The records, without error events.
    include_headers
        Add the ``headers`` column.
    topic
        The topic of every message, when the caller knows they all share one: the column is
        then filled without asking each message.
    """
    count = len(messages)
    stamps = [m.timestamp() for m in messages]
    if topic is None:
        topics = pa.array([m.topic() for m in messages], pa.string())
    else:
        topics = pa.repeat(pa.scalar(topic, pa.string()), count)
    columns = [
        pa.array([m.key() for m in messages], pa.binary()),
        pa.array([m.value() for m in messages], pa.binary()),
        topics,
        pa.array([m.partition() for m in messages], pa.int32()),
        pa.array([m.offset() for m in messages], pa.int64()),
        pc.multiply_checked(pa.array([s[1] for s in stamps], pa.int64()), 1000).cast(
            _SPARK_TIMESTAMP
        ),
        pc.subtract(pa.array([s[0] for s in stamps], pa.int32()), pa.scalar(1, pa.int32())),
    ]
    schema = _SCHEMAS[include_headers]
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
