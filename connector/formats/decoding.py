"""Executor side: the raw key and value columns of an Arrow batch in, typed columns out.

The range reader yields Spark's Kafka columns (``key`` and ``value`` as bytes); this replaces
the typed ones in place, keeping every other column, so the read path, offsets and timestamps
are the same whatever the format. Under ``PERMISSIVE`` a ``decodeError`` column is appended,
null for every record that decoded. Under ``DEADLETTER``, :func:`decode_separating` sets the
records that did not decode apart, for the dead-letter topic.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import pyarrow as pa

from kafka_rescalable.errors import PayloadDecodeError, RecordDecodeError, SchemaRegistryError
from kafka_rescalable.formats.codec import ColumnDecoder, Decoder, ReaderSchema, codec_for
from kafka_rescalable.formats.options import DecodeMode, RegistrySettings

__all__ = ["DECODE_ERROR_COLUMN", "DecodePlan", "Separated", "decode_batch", "decode_separating"]

DECODE_ERROR_COLUMN: Final = "decodeError"
"""Under ``mode`` ``PERMISSIVE``: why a record's key or value did not decode, else null."""


@dataclass(frozen=True)
class DecodePlan:
    """What executors need to decode: picklable and hashable (it keys a per-worker cache).

    ``spark_types_json`` holds each reader's Spark type, as Spark handed it back to the
    reader, in JSON (``DataType.json()``): the type the Arrow columns must have.
    """

    readers: tuple[ReaderSchema, ...]
    spark_types_json: tuple[str, ...]
    mode: DecodeMode
    registry: RegistrySettings | None


@dataclass(frozen=True)
class _Column:
    name: str
    arrow_type: pa.DataType
    decode: Decoder
    decode_column: ColumnDecoder | None
    """Decodes the whole column at once where it can; else ``decode`` does, record by record."""


@functools.cache
def _columns(plan: DecodePlan) -> tuple[_Column, ...]:
    from pyspark.sql.pandas.types import to_arrow_type
    from pyspark.sql.types import _parse_datatype_json_string

    built = []
    for reader, type_json in zip(plan.readers, plan.spark_types_json, strict=True):
        spark_type = _parse_datatype_json_string(type_json)
        codec = codec_for(reader.payload.format)
        arrow_type = to_arrow_type(spark_type, timezone="UTC")
        built.append(
            _Column(
                reader.payload.column,
                arrow_type,
                codec.decoder(reader, spark_type, plan.registry),
                codec.column_decoder(reader, spark_type, arrow_type, plan.registry),
            )
        )
    return tuple(built)


def decode_batch(batch: pa.RecordBatch, plan: DecodePlan) -> pa.RecordBatch:
    """Decode ``batch``'s typed columns.

    Under ``DEADLETTER`` the records that did not decode are still in the batch, with null
    columns: :func:`decode_separating` is the function for that mode.

    Raises
    ------
    RecordDecodeError
        Under ``FAILFAST``, for the first record whose key or value does not decode, naming
        its topic-partition, offset, column, writer schema id and the reason.
    """
    arrays, fields, reasons = _decode(batch, plan)
    if plan.mode is DecodeMode.PERMISSIVE:
        arrays.append(pa.array(reasons, pa.string()))
        fields.append(pa.field(DECODE_ERROR_COLUMN, pa.string()))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


@dataclass(frozen=True)
class Separated:
    """A batch decoded under ``DEADLETTER``: the rows that decoded, and those that did not.

    ``bad_rows`` are row numbers of the batch as it was read (raw bytes, which a dead letter
    carries); ``reasons`` the matching texts, as ``decodeError`` would give them.
    """

    good: pa.RecordBatch
    bad_rows: tuple[int, ...]
    reasons: tuple[str, ...]


def decode_separating(batch: pa.RecordBatch, plan: DecodePlan) -> Separated:
    """Decode ``batch`` and set apart the records whose key or value does not decode."""
    arrays, fields, reasons = _decode(batch, plan)
    decoded = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
    if reasons.count(None) == len(reasons):  # the common case, counted without a Python loop
        return Separated(decoded, (), ())
    bad_rows = tuple(row for row, reason in enumerate(reasons) if reason is not None)
    good = decoded.filter(pa.array([reason is None for reason in reasons]))
    return Separated(good, bad_rows, tuple(reasons[row] or "" for row in bad_rows))


def _decode(
    batch: pa.RecordBatch, plan: DecodePlan
) -> tuple[list[pa.Array], list[pa.Field], list[str | None]]:
    permissive = plan.mode is not DecodeMode.FAILFAST  # reasons are collected, not raised
    reasons: list[str | None] = [None] * batch.num_rows
    names = batch.schema.names
    arrays = list(batch.columns)
    for column in _columns(plan):
        index = names.index(column.name)
        whole = None if column.decode_column is None else column.decode_column(arrays[index])
        if whole is None:
            payloads = arrays[index].to_pylist()
            values = _decode_all(batch, column, payloads, reasons, permissive)
            whole = _to_arrow(batch, column, values, reasons, permissive)
        arrays[index] = whole
    fields = [pa.field(name, array.type) for name, array in zip(names, arrays, strict=True)]
    return arrays, fields, reasons


def _decode_all(
    batch: pa.RecordBatch,
    column: _Column,
    payloads: list[bytes | None],
    reasons: list[str | None],
    permissive: bool,
) -> list[Any]:
    decode = column.decode
    values: list[Any] = []
    append = values.append
    for row, payload in enumerate(payloads):
        if payload is None:
            append(None)  # a null key or value stays null, as in Spark's Kafka source
            continue
        try:
            append(decode(payload))
        except SchemaRegistryError:
            # The registry did not answer: nothing is wrong with the record, so it must not
            # become a null under PERMISSIVE. The task fails and Spark retries it.
            raise
        except Exception as error:  # noqa: BLE001 - any failure of a library's decoder
            _refuse(batch, row, column.name, error, reasons, permissive)
            append(error.partial if isinstance(error, PayloadDecodeError) else None)
    return values


def _to_arrow(
    batch: pa.RecordBatch,
    column: _Column,
    values: Sequence[Any],
    reasons: list[str | None],
    permissive: bool,
) -> pa.Array:
    """Build the column; a value that does not fit the type is found and refused alone."""
    try:
        return pa.array(values, column.arrow_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        pass
    fitting: list[Any] = []
    for row, value in enumerate(values):
        try:
            pa.array([value], column.arrow_type)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as error:
            _refuse(batch, row, column.name, error, reasons, permissive)
            value = None
        fitting.append(value)
    return pa.array(fitting, column.arrow_type)


def _refuse(
    batch: pa.RecordBatch,
    row: int,
    column: str,
    error: Exception,
    reasons: list[str | None],
    permissive: bool,
) -> None:
    schema_id = error.schema_id if isinstance(error, PayloadDecodeError) else None
    reason = error.reason if isinstance(error, PayloadDecodeError) else _describe(error)
    written = "" if schema_id is None else f" (writer schema id {schema_id})"
    if permissive:
        said = f"{column}{written}: {reason}"
        reasons[row] = said if reasons[row] is None else f"{reasons[row]}; {said}"
        return
    topic = batch.column(2)[row].as_py()
    partition = batch.column(3)[row].as_py()
    offset = batch.column(4)[row].as_py()
    msg = (
        f"the {column} of the record at {topic}-{partition} offset {offset}{written} could not "
        f"be decoded: {reason}. Set 'mode' to 'PERMISSIVE' to read on, with the reason in the "
        f"'{DECODE_ERROR_COLUMN}' column, set 'deadLetterTopic' to write such records there, "
        "or fix the schema options"
    )
    raise RecordDecodeError(msg, topic, partition, offset, schema_id) from error


def _describe(error: Exception) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
