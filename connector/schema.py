"""The output schema, identical to Spark's built-in Kafka source, in Spark and Arrow form.

Spark checks every Arrow batch a Python data source yields against the Arrow form of the
declared schema, field names and list element names included, so the two forms are built side
by side here and a unit test holds them equal to Spark's own conversion.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

__all__ = ["arrow_schema", "spark_schema"]

_HEADER_SPARK = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
_HEADER_ARROW = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])


def spark_schema(include_headers: bool) -> StructType:
    """Spark's Kafka schema: ``headers`` is present only when ``includeHeaders`` is true."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", ArrayType(_HEADER_SPARK)))
    return StructType(fields)


def arrow_schema(include_headers: bool) -> pa.Schema:
    """Return the Arrow form Spark expects for :func:`spark_schema`.

    Timestamps are in UTC microseconds.
    """
    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestampType", pa.int32()),
    ]
    if include_headers:
        fields.append(pa.field("headers", pa.list_(pa.field("element", _HEADER_ARROW))))
    return pa.schema(fields)
