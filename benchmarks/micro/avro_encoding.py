"""Micro-benchmark of the sink's Avro encoding: µs per record, bulk (native core) or per record.

The Avro decoding benchmark's "order" records (:mod:`benchmarks.whole_queries.avro_records`:
16 fields, some 205 bytes each) are first decoded into the Arrow column Spark would hand the
sink (the order struct), in batches of 10,000 rows; then each batch's column is encoded as
the sink encodes it (:func:`kafka_rescalable.sink.encoding.encoded_column`, which gives the
producer one ``bytes`` per row), no Kafka, no Spark:

- *bulk*: the column's bulk encoder (the native core, ``arrow-avro``'s writer) takes the
  whole batch; the cost includes rebuilding the column as the writer's Arrow types and
  turning the binary array into Python ``bytes``;
- *per record*: ``to_pylist`` and fastavro (or confluent-kafka's ``AvroSerializer``) row by
  row, as the sink did before the bulk path.

Two cases: *plain* (``valueSchema`` inline, no registry) and *framed* (Confluent framing,
the schema registered in confluent-kafka's in-memory mock registry, so that no server runs).
Each path encodes every batch once as a warm-up, then ``runs`` times; the best run counts.
The payloads of both paths are compared first.

Usage::

    python -m benchmarks.micro.avro_encoding [--records 200000] [--runs 3]
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from unittest import mock

import pyarrow as pa

from benchmarks.micro.avro_decoding import BATCH, _batches, _plan
from benchmarks.micro.speed_up import speed_up_main
from benchmarks.whole_queries.avro_records import ORDER_SCHEMA_JSON, order_bodies
from kafka_rescalable.formats import avro_codec
from kafka_rescalable.formats.decoding import decode_batch
from kafka_rescalable.formats.native_core import native_core
from kafka_rescalable.formats.options import (
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
)
from kafka_rescalable.sink.encoding import ColumnEncoding, encoded_column

__all__ = ["EncodingRun", "main", "measure_encoding"]

_MOCK_URL = "mock://bench"


@dataclass(frozen=True)
class EncodingRun:
    """One case on one path: the best run's µs per record."""

    case: str
    path: str
    micros_per_record: float


def _columns(records: int) -> list[pa.RecordBatch]:
    """Give the order records as the sink's input: one ``value`` struct column per batch."""
    bodies = [body for _, body in order_bodies(0, records)]
    plan = _plan(Framing.NONE, None)
    decoded = [decode_batch(batch, plan) for batch in _batches(bodies)]
    return [pa.RecordBatch.from_arrays([batch.column(1)], names=["value"]) for batch in decoded]


def _encoding(spark_type_json: str, framed: bool) -> ColumnEncoding:
    framing = Framing.CONFLUENT if framed else Framing.NONE
    payload = PayloadOptions("value", PayloadFormat.AVRO, ORDER_SCHEMA_JSON, framing=framing)
    registry = RegistrySettings((("url", _MOCK_URL),)) if framed else None
    return ColumnEncoding(payload, spark_type_json, registry, "orders")


def _best(encoding: ColumnEncoding, bulk: bool, batches: list[Any], runs: int) -> tuple:
    encode = encoding.encoder()
    column_encoder = encoding.column_encoder(encode) if bulk else None
    if bulk and column_encoder is None:
        msg = "the bulk encoder declined the order schema"
        raise RuntimeError(msg)

    def encode_all() -> list[list[Any]]:
        return [
            encoded_column(batch, "value", encode, encoding, 0, column_encoder) for batch in batches
        ]

    payloads = encode_all()  # warm-up, and the payloads
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        encode_all()
        best = min(best, time.perf_counter() - started)
    return best, payloads


def _check_bulk(encoding: ColumnEncoding, batch: pa.RecordBatch, case: str) -> None:
    """Fail unless the bulk encoder encodes ``batch`` itself (no hand-over to the slow path)."""
    bulk = encoding.column_encoder(encoding.encoder())
    if bulk is None or bulk(batch.column(0)) is None:
        msg = f"{case}: the bulk encoder handed the batch to the per-record encoder"
        raise RuntimeError(msg)


def measure_encoding(records: int, runs: int) -> list[EncodingRun]:
    """Time both cases on both paths; fail unless both paths give the same payloads."""
    if native_core() is None:
        msg = "the native core is not installed: pip install ./native"
        raise RuntimeError(msg)
    from confluent_kafka.schema_registry import SchemaRegistryClient

    batches = _columns(records)
    spark_type_json = _plan(Framing.NONE, None).readers[0].spark_type.json()
    registry = SchemaRegistryClient.new_client({"url": _MOCK_URL})
    results = []
    with mock.patch.object(avro_codec, "registry_client", lambda _settings: registry):
        for case, framed in (("plain", False), ("framed", True)):
            encoding = _encoding(spark_type_json, framed)
            _check_bulk(encoding, batches[0], case)
            payloads = {}
            for path, bulk in (("bulk", True), ("per record", False)):
                seconds, payloads[path] = _best(encoding, bulk, batches, runs)
                results.append(EncodingRun(case, path, seconds / records * 1e6))
            if payloads["bulk"] != payloads["per record"]:
                msg = f"{case}: the bulk and per-record encoders gave different payloads"
                raise RuntimeError(msg)
    return results


def main() -> None:
    """Print a Markdown table of µs per record, and the speed-up of the bulk path."""
    speed_up_main(
        __doc__.splitlines()[0],
        measure_encoding,
        200_000,
        "order records",
        BATCH,
        ("bulk", "per record"),
    )


if __name__ == "__main__":
    main()
