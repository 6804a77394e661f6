"""Micro-benchmark of typed-record decoding: µs per record, native core against fallback.

The Avro decoding benchmark's 400,000 "order" records (:mod:`benchmarks.whole_queries.avro_records`:
16 fields, some 205 bytes each) go through
:func:`kafka_rescalable.formats.decoding.decode_batch`, in source batches of 10,000 records
(the range reader's default batch), no Kafka, no Spark: the cost of decoding alone, on each
path (``KAFKA_RESCALABLE_NATIVE`` unset, then ``0``):

- *plain*: the schema inline (``valueSchema``), no registry framing;
- *framed, 2 ids*: Confluent framing with two writer schema ids taking turns record by
  record, the worst case for grouping by id (the two ids hold the same schema; the writers
  are given without a registry, as the registry's client cache would give them).

Payloads are built before the clock starts; each path decodes every batch once as a warm-up,
then ``runs`` times, and the best run counts. The rows of both paths are compared first.

Usage::

    python -m benchmarks.micro.avro_decoding [--records 400000] [--runs 3]
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from unittest import mock

import pyarrow as pa

from benchmarks.micro.speed_up import speed_up_main
from benchmarks.whole_queries.avro_records import ORDER_SCHEMA_JSON, order_bodies
from kafka_rescalable.formats import avro_codec
from kafka_rescalable.formats.avro_codec import CODEC
from kafka_rescalable.formats.decoding import DecodePlan, decode_batch
from kafka_rescalable.formats.native_core import NATIVE_ENV, native_core
from kafka_rescalable.formats.options import (
    DecodeMode,
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
)
from kafka_rescalable.formats.registry import frame
from kafka_rescalable.schema import arrow_schema

__all__ = ["DecodingRun", "main", "measure_decoding", "time_both_paths"]

BATCH = 10_000
"""Records per source batch: the range reader's default."""


@dataclass(frozen=True)
class DecodingRun:
    """One case on one path: the best run's µs per record."""

    case: str
    path: str
    micros_per_record: float


def _batches(bodies: list[bytes]) -> list[pa.RecordBatch]:
    moment = datetime(2026, 1, 1, tzinfo=timezone.utc)
    batches = []
    for start in range(0, len(bodies), BATCH):
        values = bodies[start : start + BATCH]
        count = len(values)
        batches.append(
            pa.RecordBatch.from_arrays(
                [
                    pa.array([None] * count, pa.binary()),
                    pa.array(values, pa.binary()),
                    pa.array(["orders"] * count),
                    pa.array([0] * count, pa.int32()),
                    pa.array(range(start, start + count), pa.int64()),
                    pa.array([moment] * count, pa.timestamp("us", tz="UTC")),
                    pa.array([0] * count, pa.int32()),
                ],
                schema=arrow_schema(False),
            )
        )
    return batches


def _plan(framing: Framing, registry: RegistrySettings | None) -> DecodePlan:
    payload = PayloadOptions("value", PayloadFormat.AVRO, ORDER_SCHEMA_JSON, framing=framing)
    reader = CODEC.resolve(payload, registry, ["orders"])
    assert reader.spark_type is not None
    return DecodePlan((reader,), (reader.spark_type.json(),), DecodeMode.FAILFAST, registry)


def _path(path: str) -> contextlib.AbstractContextManager[object]:
    """Decode on ``path`` inside the block: ``KAFKA_RESCALABLE_NATIVE=0`` for the fallback."""
    if path == "fallback":
        return mock.patch.dict(os.environ, {NATIVE_ENV: "0"})
    return mock.patch.dict(
        os.environ, {key: v for key, v in os.environ.items() if key != NATIVE_ENV}, clear=True
    )


@contextlib.contextmanager
def _writers() -> Iterator[None]:
    """Writer schemas 1 and 2 (the order schema) as the registry client's cache gives them."""
    with (
        mock.patch.object(
            avro_codec, "_writer_schema", lambda _r, _id: avro_codec._parsed(ORDER_SCHEMA_JSON)
        ),
        mock.patch.object(avro_codec, "_writer_text", lambda _r, _id: ORDER_SCHEMA_JSON),
    ):
        yield


def _best(plan: DecodePlan, batches: list[pa.RecordBatch], runs: int) -> tuple[float, list]:
    decoded = [decode_batch(batch, plan) for batch in batches]  # warm-up, and the rows
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        for batch in batches:
            decode_batch(batch, plan)
        best = min(best, time.perf_counter() - started)
    return best, decoded


def _check_native(plan: DecodePlan, batch: pa.RecordBatch, case: str) -> None:
    """Fail unless the native core decodes ``batch`` itself (no hand-over to the slow path)."""
    from pyspark.sql.pandas.types import to_arrow_type

    (reader,) = plan.readers
    arrow_type = to_arrow_type(reader.spark_type, timezone="UTC")
    bulk = CODEC.column_decoder(reader, reader.spark_type, arrow_type, plan.registry)
    with _path("native"):
        if bulk is None or bulk(batch.column(1)) is None:
            msg = f"{case}: the native core handed the batch to the pure-Python decoders"
            raise RuntimeError(msg)


def measure_decoding(records: int, runs: int) -> list[DecodingRun]:
    """Time both cases on both paths; fail unless both paths decode the same rows."""
    if native_core() is None:
        msg = "the native core is not installed: pip install ./native"
        raise RuntimeError(msg)
    bodies = [body for _, body in order_bodies(0, records)]
    framed = [frame(1 + index % 2, body) for index, body in enumerate(bodies)]
    registry = RegistrySettings((("url", "http://registry.invalid"),))
    cases = {
        "plain": (_plan(Framing.NONE, None), _batches(bodies)),
        "framed, 2 ids": (_plan(Framing.CONFLUENT, registry), _batches(framed)),
    }
    results = []
    with _writers():
        for case, (plan, batches) in cases.items():
            _check_native(plan, batches[0], case)
            results += time_both_paths(case, plan, batches, runs, pa.RecordBatch.equals)
    return results


def time_both_paths(
    case: str,
    plan: DecodePlan,
    batches: list[pa.RecordBatch],
    runs: int,
    same: Callable[[pa.RecordBatch, pa.RecordBatch], bool],
) -> list[DecodingRun]:
    """Time ``plan`` on the native path, then the fallback; fail unless every batch is ``same``."""
    records = sum(batch.num_rows for batch in batches)
    results, rows = [], {}
    for path in ("native", "fallback"):
        with _path(path):
            seconds, rows[path] = _best(plan, batches, runs)
        results.append(DecodingRun(case, path, seconds / records * 1e6))
    if not all(same(a, b) for a, b in zip(rows["native"], rows["fallback"], strict=True)):
        msg = f"{case}: the native core and the fallback decoded different rows"
        raise RuntimeError(msg)
    return results


def main() -> None:
    """Print a Markdown table of µs per record, and the speed-up of the native core."""
    speed_up_main(
        __doc__.splitlines()[0],
        measure_decoding,
        400_000,
        "order records",
        BATCH,
        ("native", "fallback"),
    )


if __name__ == "__main__":
    main()
