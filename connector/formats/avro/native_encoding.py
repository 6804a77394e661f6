"""Avro values encoded in bulk by the native core, for the sink, when it is installed.

The sink's typed column, as PySpark hands it in an Arrow batch, is rebuilt as the Arrow types
``arrow-avro``'s writer takes for the writer schema
(:func:`~kafka_rescalable.formats.avro.writer_arrow.fit`), and the core writes one payload per
row, framed for the registry when the sink writes to one. The core takes no decision; this
module keeps them:

- which schemas: those :func:`~kafka_rescalable.formats.avro.writer_arrow.fit` does not
  decline; with a registry, only where confluent-kafka's ``AvroSerializer`` writes with the
  sink's own schema (not with ``schema.registry.use.latest.version``, where it writes with the
  subject's latest version), and not a schema that is ``bytes`` itself (which the serializer
  writes raw, without Avro's length);
- the schema id: the per-record encoder (the serializer) registers or looks up the schema as
  it does today, for the first row; the id its framing carries is the one the core writes;
- a check: that first row is encoded both ways once, and the column is never encoded in bulk
  again in this task unless both give the same bytes;
- failures: a batch the core does not encode (a value the schema cannot hold, a case not
  proven alike) is encoded record by record, where today's
  :class:`~kafka_rescalable.errors.SinkInputError` names the row.

``KAFKA_RESCALABLE_NATIVE=0`` turns the bulk path off, as for decoding.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import DataType

from kafka_rescalable._logging import logger
from kafka_rescalable.formats.avro.types import without_ignored_logical_types
from kafka_rescalable.formats.avro.writer_arrow import BulkDeclined, SchemaDeclined, fit
from kafka_rescalable.formats.codec import ColumnEncoder, Encoder
from kafka_rescalable.formats.native_core import native_core

__all__ = ["native_encoder"]


def native_encoder(
    schema_text: str, spark_type: DataType, encode: Encoder, framed: bool
) -> ColumnEncoder | None:
    """Build the bulk encoder of one sink column, once per task; ``None``: row by row only.

    Parameters
    ----------
    schema_text
        The writer schema's JSON text, as the per-record encoder writes it.
    spark_type
        The column's Spark type.
    encode
        The column's per-record encoder: the reference the bulk path must match.
    framed
        Whether ``encode`` frames payloads for a registry (it then gives the schema id).
    """
    from pyspark.sql.pandas.types import to_arrow_type  # as the source builds its columns

    schema = without_ignored_logical_types(json.loads(schema_text))
    if framed and _written_raw(schema):
        return None
    try:
        fit(pa.array([], to_arrow_type(spark_type, timezone="UTC")), schema)
    except BulkDeclined as error:
        logger.debug("the sink encodes %s record by record: %s", spark_type.simpleString(), error)
        return None
    return _BulkEncoder(schema, encode, framed).encode


def _written_raw(schema: Any) -> bool:
    """Whether confluent-kafka's serializer writes this schema's values as raw bytes."""
    return schema == "bytes" or (isinstance(schema, dict) and schema.get("type") == "bytes")


class _BulkEncoder:
    """One column's core encoder, made for the first batch, checked against its first row."""

    def __init__(self, schema: Any, encode: Encoder, framed: bool) -> None:
        self.schema = schema
        self.encode_one = encode
        self.framed = framed
        self.core: Any = None
        """The core's ``AvroEncoder``; ``False`` when this column is never encoded in bulk."""

    def encode(self, column: pa.Array) -> list[bytes | None] | None:
        core = native_core()
        if core is None or self.core is False:
            return None
        if column.null_count == len(column):
            return [None] * len(column)  # tombstones only: nothing to encode
        try:
            values = fit(column, self.schema)
        except SchemaDeclined as error:  # never seen: the type was accepted when built
            logger.debug("the sink encodes this column record by record: %s", error)
            self.core = False
            return None
        except BulkDeclined as error:
            logger.debug("a batch is encoded record by record: %s", error)
            return None
        reference = None
        if self.core is None:
            reference = self._start(core, column, values)
            if reference is None:
                return None
        try:
            payloads = self.core.encode(values).to_pylist()
        except core.NativeEncodeError as error:
            logger.debug("a batch is encoded record by record: %s", error)
            if reference is not None:
                self.core = None  # unchecked: the next batch starts again, with its first row
            return None
        if reference is not None and payloads[reference[0]] != reference[1]:
            logger.warning(
                "the native core's Avro differs from the per-record encoder's for %s; "
                "this column is encoded record by record",
                json.dumps(self.schema)[:200],
            )
            self.core = False
            return None
        return payloads

    def _start(self, core: Any, column: pa.Array, values: pa.Array) -> tuple[int, bytes] | None:
        """Make the core's encoder, with the registry's schema id from a first row's framing.

        Returns the row and the bytes the per-record encoder gave it, which the batch's bulk
        payload of that row must equal; ``None`` when the batch goes record by record.
        """
        row = pc.index(column.is_valid(), True).as_py()
        try:
            expected = self.encode_one(column[row].as_py())
        except Exception:  # noqa: BLE001 - the per-record path names the row and says why
            return None
        schema_id = None
        if self.framed:
            if len(expected) < 5 or expected[0] != 0:
                self.core = False  # not the framing the core writes
                return None
            schema_id = int.from_bytes(expected[1:5], "big")
        encoder = core.AvroEncoder(json.dumps(self.schema), schema_id)
        try:
            encoder.encode(values.slice(0, 0))  # parses the schema and plans for the type
        except core.NativeEncodeError as error:
            logger.debug("the native core cannot write this column: %s", error)
            self.core = False
            return None
        self.core = encoder
        return row, expected
