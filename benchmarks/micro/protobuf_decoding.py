"""Micro-benchmark of Protobuf decoding: µs per record, native core against the Python path.

The benchmark's order message (:data:`benchmarks.whole_queries.order_encodings.ORDER_MESSAGE`:
the Avro order's 16 fields, with a ``Timestamp``, an enum, a repeated string and a map) goes
through :func:`kafka_rescalable.formats.decoding.decode_batch`, in source batches of 10,000
records, no Kafka, no Spark: the cost of decoding alone, on each path (``KAFKA_RESCALABLE_NATIVE``
unset, then ``0``):

- *plain*: the descriptor set and message name, no registry framing;
- *framed*: Confluent framing (schema id and the message index ``0``), as the registry's
  serializer writes it; the reader's descriptor set is the same.

It mirrors :mod:`benchmarks.micro.avro_decoding` (its batches, timing and table). The rows of
both paths are compared first, maps in key order: the Python path's map order is protobuf's
hash order, which changes from one process to the next.

Usage::

    python -m benchmarks.micro.protobuf_decoding [--records 200000] [--runs 3]
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks.micro.avro_decoding import (
    BATCH,
    DecodingRun,
    _batches,
    _path,
    time_both_paths,
)
from benchmarks.micro.speed_up import speed_up_main
from benchmarks.whole_queries.order_encodings import (
    ORDER_MESSAGE,
    encoded_orders,
    order_descriptor_set,
)
from kafka_rescalable.formats.decoding import DecodePlan
from kafka_rescalable.formats.native_core import native_core
from kafka_rescalable.formats.options import DecodeMode, Framing, PayloadFormat, PayloadOptions
from kafka_rescalable.formats.protobuf_codec import CODEC
from kafka_rescalable.formats.registry import frame

__all__ = ["main", "measure_decoding"]


def _plan(descriptors: Path, framing: Framing) -> DecodePlan:
    payload = PayloadOptions(
        "value",
        PayloadFormat.PROTOBUF,
        schema=str(descriptors),
        message=ORDER_MESSAGE,
        framing=framing,
    )
    reader = CODEC.resolve(payload, None, ["orders"])
    assert reader.spark_type is not None
    return DecodePlan((reader,), (reader.spark_type.json(),), DecodeMode.FAILFAST, None)


def _check_native(plan: DecodePlan, batch: pa.RecordBatch, case: str) -> None:
    """Fail unless the native core decodes ``batch`` itself (no hand-over to the slow path)."""
    from pyspark.sql.pandas.types import to_arrow_type

    (reader,) = plan.readers
    arrow_type = to_arrow_type(reader.spark_type, timezone="UTC")
    bulk = CODEC.column_decoder(reader, reader.spark_type, arrow_type, None)
    with _path("native"):
        if bulk is None or bulk(batch.column(1)) is None:
            msg = f"{case}: the native core handed the batch to the Python path"
            raise RuntimeError(msg)


def _key_ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the rows with each map (``attributes``) in key order, as both paths compare."""
    return [
        {**row, "attributes": sorted(row["attributes"])} if row["attributes"] else row
        for row in rows
    ]


def measure_decoding(records: int, runs: int) -> list[DecodingRun]:
    """Time both cases on both paths; fail unless both paths decode the same rows."""
    if native_core() is None or not hasattr(native_core(), "ProtobufDecoder"):
        msg = "the native core (with ProtobufDecoder) is not installed: pip install ./native"
        raise RuntimeError(msg)
    bodies = [body for _, body in encoded_orders("protobuf", 0, records)]
    framed = [frame(1, b"\x00" + body) for body in bodies]
    results = []
    with tempfile.TemporaryDirectory() as folder:
        descriptors = Path(folder) / "order.desc"
        descriptors.write_bytes(order_descriptor_set())
        cases = {
            "plain": (_plan(descriptors, Framing.NONE), _batches(bodies)),
            "framed": (_plan(descriptors, Framing.CONFLUENT), _batches(framed)),
        }
        for case, (plan, batches) in cases.items():
            _check_native(plan, batches[0], case)
            results += time_both_paths(case, plan, batches, runs, _same_values)
    return results


def _same_values(native: pa.RecordBatch, fallback: pa.RecordBatch) -> bool:
    """Compare the decoded values, maps in key order (the Python path's maps have none)."""
    return _key_ordered(native.column(1).to_pylist()) == _key_ordered(
        fallback.column(1).to_pylist()
    )


def main() -> None:
    """Print a Markdown table of µs per record, and the speed-up of the native core."""
    speed_up_main(
        __doc__.splitlines()[0],
        measure_decoding,
        200_000,
        "order messages",
        BATCH,
        ("native", "fallback"),
    )


if __name__ == "__main__":
    main()
