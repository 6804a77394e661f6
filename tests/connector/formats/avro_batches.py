"""Source batches of Avro payloads decoded on either path: the native core or the fallback.

:func:`decode_both` runs :func:`kafka_rescalable.formats.decoding.decode_batch` twice on one
batch, once with ``KAFKA_RESCALABLE_NATIVE=0`` (the pure-Python decoders) and once without
(the native core, which must be installed for the tests that use this), so that a test can
hold the two results equal.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import fastavro
import pyarrow as pa

from kafka_rescalable.formats.avro_codec import CODEC
from kafka_rescalable.formats.decoding import DecodePlan, decode_batch
from kafka_rescalable.formats.native_core import NATIVE_ENV
from kafka_rescalable.formats.options import (
    DecodeMode,
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
)
from kafka_rescalable.schema import arrow_schema

PATHS = ("native", "fallback")
"""The two decoding paths, as test parameters."""


@contextmanager
def decoding_path(path: str) -> Iterator[None]:
    """Decode with ``path`` (one of :data:`PATHS`) inside the block."""
    before = os.environ.get(NATIVE_ENV)
    if path == "fallback":
        os.environ[NATIVE_ENV] = "0"
    else:
        os.environ.pop(NATIVE_ENV, None)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(NATIVE_ENV, None)
        else:
            os.environ[NATIVE_ENV] = before


def write(schema: Any, value: Any) -> bytes:
    """Write ``value`` as plain Avro with fastavro."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), value)
    return out.getvalue()


def plan(
    schema: Any,
    framing: Framing = Framing.NONE,
    mode: DecodeMode = DecodeMode.FAILFAST,
    registry: RegistrySettings | None = None,
) -> DecodePlan:
    """Plan decoding values with reader schema ``schema`` (JSON-able or its text)."""
    text = schema if isinstance(schema, str) else json.dumps(schema)
    payload = PayloadOptions("value", PayloadFormat.AVRO, schema=text, framing=framing)
    reader = CODEC.resolve(payload, registry, ["orders"])
    assert reader.spark_type is not None
    return DecodePlan((reader,), (reader.spark_type.json(),), mode, registry)


def batch(payloads: Sequence[bytes | None], topic: str = "orders") -> pa.RecordBatch:
    """Build a source batch holding ``payloads`` as values, at offsets 0, 1, ... of partition 0."""
    count = len(payloads)
    moment = datetime(2024, 1, 1, tzinfo=timezone.utc)
    columns = [
        pa.array([None] * count, pa.binary()),
        pa.array(payloads, pa.binary()),
        pa.array([topic] * count, pa.string()),
        pa.array([0] * count, pa.int32()),
        pa.array(range(count), pa.int64()),
        pa.array([moment] * count, pa.timestamp("us", tz="UTC")),
        pa.array([0] * count, pa.int32()),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=arrow_schema(False))


def decode_on(path: str, decode_plan: DecodePlan, source: pa.RecordBatch) -> pa.RecordBatch:
    """Decode ``source`` on ``path``."""
    with decoding_path(path):
        return decode_batch(source, decode_plan)


def decode_both(
    decode_plan: DecodePlan, source: pa.RecordBatch
) -> tuple[pa.RecordBatch | BaseException, pa.RecordBatch | BaseException]:
    """Decode ``source`` on both paths: each result, or the exception it raised."""
    results: list[pa.RecordBatch | BaseException] = []
    for path in PATHS:
        try:
            results.append(decode_on(path, decode_plan, source))
        except Exception as error:  # noqa: BLE001 - compared by the caller
            results.append(error)
    return results[0], results[1]
