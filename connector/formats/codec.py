"""What a payload format is: its reader schema, resolved on the driver, and its decoder.

Each format is one module (``kafka_rescalable.formats.<format>_codec``) exposing ``CODEC``, a
:class:`FormatCodec`. The driver calls :meth:`FormatCodec.resolve` when a DataFrame is defined,
which fixes the reader schema (an inline schema, a descriptor set read from disk, or a registry
subject's latest version) in a picklable :class:`ReaderSchema`; executors build a :data:`Decoder`
from it once per Python worker. A format's modules import their libraries (fastavro, protobuf)
lazily, so a missing extra fails with :class:`~kafka_rescalable.errors.MissingExtraError` naming it.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.types import DataType

from kafka_rescalable.errors import MissingExtraError
from kafka_rescalable.formats.options import PayloadFormat, PayloadOptions, RegistrySettings

__all__ = [
    "ColumnDecoder",
    "ColumnEncoder",
    "Decoder",
    "Encoder",
    "FormatCodec",
    "ReaderSchema",
    "WriterColumn",
    "codec_for",
]

Decoder = Callable[[bytes], Any]
"""One payload in, the Python value of the column's Spark type out (what ``pa.array`` takes).

It raises :class:`~kafka_rescalable.errors.PayloadDecodeError` for a payload it cannot decode; any
other exception is taken as a decoding failure of that payload too.
"""

ColumnDecoder = Callable[[pa.Array], pa.Array | None]
"""A whole column of payloads in (binary, nulls for null payloads), the typed column out.

It must give exactly what the column's :data:`Decoder` gives record by record; it returns
``None`` for a batch it does not decode whole (a record that fails, a case it cannot prove
equal), which is then decoded record by record, where failures are named and ``mode`` applies.
"""

Encoder = Callable[[Any], bytes]
"""One row's value (as ``pyarrow``'s ``to_pylist`` gives it) in, the payload out."""

ColumnEncoder = Callable[[pa.Array], "list[bytes | None] | None"]
"""A whole column of the sink's batch in, one payload per row out (``None`` for a null row).

It must give exactly what the column's :data:`Encoder` gives row by row; it returns ``None``
for a batch it does not encode whole (a value that fails, a case it cannot prove equal),
which is then encoded row by row, where a failure names the row.
"""


@dataclass(frozen=True)
class ReaderSchema:
    """One column's reader schema, fixed on the driver when the query is defined or starts.

    Parameters
    ----------
    payload
        The column's options.
    definition
        What the decoder needs: an Avro schema's JSON text, a JSON Schema or DDL text, or a
        Protobuf descriptor set's bytes; ``None`` for ``string``.
    spark_ddl
        The column's Spark type as DDL, spliced into the source's declared schema.
    spark_type
        The same type, when it is known without Spark's parser (every format except a JSON
        schema given as DDL); used to check that the type Spark hands back is the one fixed.
    schema_id
        The registry's id of the reader schema, when it came from the registry.
    """

    payload: PayloadOptions
    definition: str | bytes | None
    spark_ddl: str
    spark_type: DataType | None = None
    schema_id: int | None = None


@dataclass(frozen=True)
class WriterColumn:
    """One column the sink writes, as its encoder is built on an executor.

    Parameters
    ----------
    payload
        The column's options (``valueFormat``, ``valueSchema``, ...).
    spark_type
        The column's Spark type: what the encoder is built for.
    registry
        ``schema.registry.*``, when set.
    topic
        The ``topic`` option, which names the default subject ``<topic>-value`` (``-key``).
    """

    payload: PayloadOptions
    spark_type: DataType
    registry: RegistrySettings | None
    topic: str | None


class FormatCodec(ABC):
    """One payload format: how its reader schema is found, and how payloads are decoded."""

    extra: str | None = None
    """The pip extra installing the format's libraries; ``None`` when it needs none."""

    @abstractmethod
    def resolve(
        self, payload: PayloadOptions, registry: RegistrySettings | None, topics: Sequence[str]
    ) -> ReaderSchema:
        """Fix the reader schema on the driver; ``topics`` are the subscribed topic names.

        Raises
        ------
        InvalidOptionError
            Naming the option whose schema does not parse or cannot be mapped to Spark.
        SchemaRegistryError
            When the registry cannot give the subject's latest version.
        """

    @abstractmethod
    def decoder(
        self, reader: ReaderSchema, spark_type: DataType, registry: RegistrySettings | None
    ) -> Decoder:
        """Build the decoder on an executor; ``spark_type`` is the type Spark handed back."""

    def column_decoder(
        self,
        reader: ReaderSchema,
        spark_type: DataType,
        arrow_type: pa.DataType,
        registry: RegistrySettings | None,
    ) -> ColumnDecoder | None:
        """Build the decoder of whole columns, on an executor; ``None``: record by record only.

        ``arrow_type`` is the Arrow type of ``spark_type``, the type Spark handed back. A
        format that can decode a batch's payloads at once (the native Avro core, pyarrow's
        JSON reader) overrides this; the per-payload :meth:`decoder` stays the slow path with
        the same contract, and names the record that fails.
        """
        return None

    def encoder(self, column: WriterColumn) -> Encoder:
        """Build the sink's encoder for ``column`` (on an executor)."""
        msg = f"writing {column.payload.format.value!r} payloads is not supported"
        raise NotImplementedError(msg)

    def column_encoder(self, column: WriterColumn, encode: Encoder) -> ColumnEncoder | None:
        """Build the sink's encoder of whole columns; ``None``: row by row only.

        ``encode`` is the column's :meth:`encoder`, the slow path with the same contract,
        which a format may also use to settle what it must match (a registry's schema id).
        """
        return None


_MODULES = {
    PayloadFormat.STRING: "kafka_rescalable.formats.string_codec",
    PayloadFormat.JSON: "kafka_rescalable.formats.json_codec",
    PayloadFormat.AVRO: "kafka_rescalable.formats.avro_codec",
    PayloadFormat.PROTOBUF: "kafka_rescalable.formats.protobuf_codec",
}

_EXTRAS = {
    PayloadFormat.JSON: "json",
    PayloadFormat.AVRO: "avro",
    PayloadFormat.PROTOBUF: "protobuf",
}


def codec_for(payload_format: PayloadFormat) -> FormatCodec:
    """Return the codec of a typed format.

    Raises
    ------
    MissingExtraError
        When the format's libraries are not installed, naming the extra that installs them.
    """
    try:
        module = importlib.import_module(_MODULES[payload_format])
    except ModuleNotFoundError as error:
        extra = _EXTRAS.get(payload_format, payload_format.value)
        msg = (
            f"the {payload_format.value!r} format needs {error.name}, which is not installed: "
            f"pip install 'kafka-rescalable[{extra}]' on the driver and every executor"
        )
        raise MissingExtraError(msg, extra) from error
    return module.CODEC
