"""``string``: UTF-8 text, as ``CAST(value AS STRING)`` gives it, but failing on bad bytes.

Spark's cast replaces invalid UTF-8 silently; here a bad payload is a decoding failure, which
``mode`` turns into a failed task or a ``decodeError``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql.types import DataType, StringType

from kafka_rescalable.formats.codec import Decoder, Encoder, FormatCodec, ReaderSchema, WriterColumn
from kafka_rescalable.formats.options import PayloadOptions, RegistrySettings

__all__ = ["CODEC"]


class _StringCodec(FormatCodec):
    def resolve(
        self, payload: PayloadOptions, registry: RegistrySettings | None, topics: Sequence[str]
    ) -> ReaderSchema:
        return ReaderSchema(payload, None, "STRING", StringType())

    def decoder(
        self, reader: ReaderSchema, spark_type: DataType, registry: RegistrySettings | None
    ) -> Decoder:
        return _decode

    def encoder(self, column: WriterColumn) -> Encoder:
        return str.encode


def _decode(payload: bytes) -> str:
    return payload.decode("utf-8")


CODEC = _StringCodec()
