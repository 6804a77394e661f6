"""The sink's typed columns encoded: per task, the encoders; per batch, a column's payloads.

A typed column (``valueFormat``, ``keyFormat``) is described on the driver by a picklable
:class:`ColumnEncoding`; each task builds its :class:`RowEncoders` from it once. A batch's
column is encoded by :func:`encoded_column`: in bulk where the format's bulk encoder takes the
batch (Avro with the native core), else row by row with the per-record encoder, which stays
the reference the bulk path must match and the path that names a row that does not encode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_rescalable._logging import logger
from kafka_rescalable.errors import InvalidOptionError, KafkaSourceError, SinkInputError
from kafka_rescalable.formats.codec import ColumnEncoder, Encoder, WriterColumn, codec_for
from kafka_rescalable.formats.options import PayloadOptions, RegistrySettings

__all__ = ["ColumnEncoding", "RowEncoders", "encoded_column", "task_encoders"]


@dataclass(frozen=True)
class ColumnEncoding:
    """How the sink encodes one typed column; picklable, it travels to the executors.

    Its type travels as JSON; on the executor it becomes the codec's
    :class:`~kafka_rescalable.formats.codec.WriterColumn`, which the encoder is built for.

    Parameters
    ----------
    payload
        The column's options (``valueFormat``, ``valueSchema``, ...).
    spark_type_json
        The column's Spark type, in JSON (``DataType.json()``): what the encoder is built for.
    registry
        ``schema.registry.*``, when set.
    topic
        The ``topic`` option, which names the default subject ``<topic>-value`` (``-key``).
    """

    payload: PayloadOptions
    spark_type_json: str
    registry: RegistrySettings | None
    topic: str | None

    def encoder(self) -> Encoder:
        """Build the format's encoder for this column.

        Raises
        ------
        InvalidOptionError
            When the format cannot be written, or its schema refuses the column's type.
        SinkInputError
            When the encoder refuses the column's type for another reason, naming it.
        """
        column = self._writer_column()
        payload = self.payload
        try:
            return codec_for(payload.format).encoder(column)
        except NotImplementedError as error:
            raise InvalidOptionError(payload.option("Format"), str(error)) from error
        except KafkaSourceError:
            raise
        except Exception as error:
            msg = (
                f"column '{payload.column}' ({column.spark_type.simpleString()}) cannot be written "
                f"with '{payload.option('Format')}' {payload.format.value!r}: "
                f"{type(error).__name__}: {error}"
            )
            raise SinkInputError(msg, payload.column) from error

    def column_encoder(self, encode: Encoder) -> ColumnEncoder | None:
        """Build the format's bulk encoder for this column; ``None``: row by row only.

        The bulk encoder is an optimization, never a requirement: whatever fails while it is
        built leaves the column to ``encode``, the per-record encoder it must match.
        """
        payload = self.payload
        try:
            return codec_for(payload.format).column_encoder(self._writer_column(), encode)
        except Exception as error:  # noqa: BLE001 - the per-record encoder stays in charge
            logger.debug("column '%s' is encoded row by row: %s", payload.column, error)
            return None

    def _writer_column(self) -> WriterColumn:
        from pyspark.sql.types import _parse_datatype_json_string

        spark_type = _parse_datatype_json_string(self.spark_type_json)
        return WriterColumn(self.payload, spark_type, self.registry, self.topic)


@dataclass(frozen=True)
class RowEncoders:
    """The encoders of one task, built once for all its rows: ``None`` for a raw column.

    ``value_bulk`` and ``key_bulk`` encode a whole batch's column where the format can (see
    :data:`~kafka_rescalable.formats.codec.ColumnEncoder`); the per-record encoders remain
    the reference and the path that names a failing row.
    """

    value: Encoder | None = None
    key: Encoder | None = None
    value_bulk: ColumnEncoder | None = None
    key_bulk: ColumnEncoder | None = None


def task_encoders(value: ColumnEncoding | None, key: ColumnEncoding | None) -> RowEncoders:
    """Build one task's encoders of the typed ``value`` and ``key`` columns (``None``: raw)."""
    encode_value = value.encoder() if value else None
    encode_key = key.encoder() if key else None
    return RowEncoders(
        value=encode_value,
        key=encode_key,
        value_bulk=_bulk(value, encode_value),
        key_bulk=_bulk(key, encode_key),
    )


def _bulk(encoding: ColumnEncoding | None, encode: Encoder | None) -> ColumnEncoder | None:
    return None if encoding is None or encode is None else encoding.column_encoder(encode)


def _python_values(column: Any, name: str, first_row: int) -> list[Any]:
    """``column.to_pylist()``, or a :class:`SinkInputError` naming the row it cannot convert.

    Arrow holds values Python cannot, a time past year 9999 for one (a Protobuf source reads
    them as spark-protobuf does); encoding row by row needs Python values.
    """
    try:
        return column.to_pylist()
    except (OverflowError, ValueError) as error:
        row = next(i for i in range(len(column)) if not _converts(column, i))
        msg = (
            f"row {first_row + row} of this task: column '{name}' holds a value Python cannot "
            f"hold to encode it ({type(error).__name__}: {error}); cast or filter it before "
            "writing"
        )
        raise SinkInputError(msg, name) from error


def _converts(column: Any, row: int) -> bool:
    try:
        column[row].as_py()
    except (OverflowError, ValueError):
        return False
    return True


def encoded_column(
    batch: Any,
    name: str,
    encode: Encoder | None,
    encoding: ColumnEncoding | None,
    first_row: int,
    bulk: ColumnEncoder | None = None,
) -> list[Any]:
    """Give the column's values as the producer takes them: encoded when typed, nulls kept.

    A typed column is encoded in bulk when ``bulk`` takes the batch, else row by row, so
    that a value that does not encode is named by its row.
    """
    column = batch.column(name)
    if encode is None or encoding is None:
        return column.to_pylist()
    if bulk is not None:
        encoded = bulk(column)
        if encoded is not None:
            return encoded
    values = _python_values(column, name, first_row)
    encoded: list[Any] = []
    append = encoded.append
    try:
        for value in values:
            append(None if value is None else encode(value))
    except Exception as error:
        payload = encoding.payload
        msg = (
            f"row {first_row + len(encoded)} of this task: column '{name}' does not encode as "
            f"'{payload.option('Format')}' {payload.format.value!r}: "
            f"{type(error).__name__}: {error}"
        )
        raise SinkInputError(msg, name) from error
    return encoded
