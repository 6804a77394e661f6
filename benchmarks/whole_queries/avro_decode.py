"""Decoding Avro records: our ``valueFormat=avro`` against ``from_avro`` and a fastavro UDF.

One topic of Avro "order" records (:mod:`benchmarks.whole_queries.avro_records`: 16 fields, some 205
bytes of plain Avro, no registry framing), produced once, read in one ``local[2]`` session by:

- *ours, avro*: ``format("kafka-rescalable")`` with ``valueFormat=avro`` and the schema inline
  in ``valueSchema``, so our executors decode;
- *ours, avro + registry*: the same records with Confluent framing (magic byte and schema id)
  in a second topic, ``schema.registry.url`` pointing at a real registry
  (:class:`kafka_rescalable.testing.schema_registry.LocalSchemaRegistry`) that holds the schema;
- *built-in + from_avro*: Spark's ``format("kafka")`` and Spark's own JVM ``from_avro``
  (``spark-avro``), the way a user of the built-in source decodes Avro;
- *ours, binary + Arrow UDF*: our source's bytes and an ``arrow_udf`` calling fastavro per
  record, the way a user decodes Avro in Python when the source cannot.

Every query selects every decoded field (``v.*``) into the ``noop`` sink with
``Trigger.AvailableNow`` from the earliest offsets, so nothing is pruned. Before timing, each
contender batch-reads a small check topic, and its rows must equal the records written. Each
contender runs once first (a warm-up, reported apart), then ``runs`` times in rotating order;
the best timed run counts, as in the throughput benchmark.
"""

from __future__ import annotations

import contextlib
import functools
import io
import multiprocessing
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks.data import PRODUCER_CONFIG, create_topic, end_offsets, produce_one
from benchmarks.session import OURS, spark_session
from benchmarks.whole_queries.avro_records import (
    ORDER_SCHEMA,
    ORDER_SCHEMA_JSON,
    order,
    order_bodies,
    order_type,
)
from benchmarks.whole_queries.spark_throughput import (
    QueryRun,
    rotating_rounds,
    time_available_now,
)

__all__ = [
    "AVRO",
    "AVRO_REGISTRY",
    "BINARY_UDF",
    "BUILTIN_FROM_AVRO",
    "AvroRun",
    "avro_table",
    "decode_orders",
    "measure_avro",
]

AVRO = "ours, valueFormat=avro"
AVRO_REGISTRY = "ours, avro + registry (framed)"
BUILTIN_FROM_AVRO = "built-in + from_avro"
BINARY_UDF = "ours, binary + Arrow UDF (fastavro)"

RECORDS = 400_000
PARTITIONS = 4
CHECK_RECORDS = 500
"""Records of the check topics, read in batch and compared with what was written."""


@dataclass(frozen=True)
class AvroRun:
    """A contender's warm-up run and best timed run (``None`` when it did not run)."""

    contender: str
    first: QueryRun | None
    best: QueryRun | None
    note: str = ""


@dataclass(frozen=True)
class _Topics:
    """The topics one contender reads: the timed one and the check one."""

    timed: str
    check: str


def measure_avro(
    bootstrap: str,
    runs: int,
    say: Callable[[str], None],
    records: int = RECORDS,
    partitions: int = PARTITIONS,
    registry: bool = True,
) -> list[AvroRun]:
    """Produce the topics, check every contender's rows, then time each ``1 + runs`` times.

    Our ``avro`` contenders run only when ``kafka_rescalable.formats.avro_codec`` exists; the
    registry one only with ``registry``. Others are reported as not run, with the reason.
    """
    from integration_tests.reference_source import spark_avro_jars

    run_id = uuid.uuid4().hex[:8]
    plain = _Topics(f"avro-{run_id}", f"avro-check-{run_id}")
    framed = _Topics(f"avro-framed-{run_id}", f"avro-framed-check-{run_id}")
    skipped: dict[str, str] = {}
    if not _has_avro_codec():
        reason = "kafka_rescalable.formats.avro_codec is not on this branch yet"
        skipped = {AVRO: reason, AVRO_REGISTRY: reason}
    elif not registry:
        skipped[AVRO_REGISTRY] = "--avro-no-registry"

    for topics in (plain, framed) if AVRO_REGISTRY not in skipped else (plain,):
        create_topic(bootstrap, topics.timed, partitions)
        create_topic(bootstrap, topics.check, partitions)

    with contextlib.ExitStack() as stack:
        registry_url = _start_registry(stack, AVRO_REGISTRY not in skipped)
        schema_id = None
        if registry_url is not None:
            schema_id = _register(registry_url, f"{framed.timed}-value")
            # The check topic's subject holds the same schema, so it gets the same id.
            _register(registry_url, f"{framed.check}-value")
        seconds = produce_orders(bootstrap, plain.timed, records, partitions)
        say(
            f"\nAvro: {records:,} records of ~205 B in {partitions} partitions, produced in "
            f"{seconds:.1f} s"
        )
        produce_orders(bootstrap, plain.check, CHECK_RECORDS, partitions)
        if schema_id is not None:
            produce_orders(bootstrap, framed.timed, records, partitions, schema_id)
            produce_orders(bootstrap, framed.check, CHECK_RECORDS, partitions, schema_id)
            say(f"  framed copy produced (schema id {schema_id})")

        contenders = [AVRO, AVRO_REGISTRY, BUILTIN_FROM_AVRO, BINARY_UDF]
        active = [c for c in contenders if c not in skipped]
        topics_of = {c: framed if c == AVRO_REGISTRY else plain for c in contenders}
        with tempfile.TemporaryDirectory(prefix="bench-avro-") as scratch:
            spark = spark_session(Path(scratch) / "warehouse", extra_jars=spark_avro_jars())
            try:
                for contender in active:
                    frame = _decoded(
                        spark,
                        contender,
                        bootstrap,
                        topics_of[contender].check,
                        registry_url,
                        batch=True,
                    )
                    _check_rows(frame, contender)
                say(f"  every contender decoded the {CHECK_RECORDS} check records as written")
                first, best = rotating_rounds(
                    active,
                    runs,
                    lambda contender: time_available_now(
                        _decoded(
                            spark,
                            contender,
                            bootstrap,
                            topics_of[contender].timed,
                            registry_url,
                            batch=False,
                        ),
                        "append",
                        records,
                        f"{contender} on {topics_of[contender].timed}",
                    ),
                    say,
                    lambda contender: f"{contender:38}",
                )
            finally:
                spark.stop()
    return [AvroRun(c, first.get(c), best.get(c), skipped.get(c, "")) for c in contenders]


def avro_table(results: Sequence[AvroRun]) -> str:
    """Return the results as Markdown: rates, seconds, ratios to ``from_avro`` and to the UDF."""
    by_name = {r.contender: r for r in results}
    builtin = by_name[BUILTIN_FROM_AVRO].best
    udf = by_name[BINARY_UDF].best
    lines = [
        "| contender | first run rows/s | best rows/s | best wall s | in batches s | "
        "vs built-in + from_avro | vs binary + UDF |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for result in results:
        if result.best is None or result.first is None:
            lines.append(f"| {result.contender} | not run: {result.note} | | | | | |")
            continue
        rate = result.best.rows_per_second
        vs_builtin = f"{rate / builtin.rows_per_second:.2f}" if builtin else "-"
        vs_udf = f"{rate / udf.rows_per_second:.2f}" if udf else "-"
        lines.append(
            f"| {result.contender} | {result.first.rows_per_second:,.0f} | {rate:,.0f} | "
            f"{result.best.seconds:.1f} | {result.best.batch_seconds:.1f} | {vs_builtin} | "
            f"{vs_udf} |"
        )
    return "\n".join(lines)


def decode_orders(values: pa.Array) -> pa.Array:
    """Decode each plain Avro value with fastavro and build the struct: the Arrow UDF.

    What a user would write: one ``schemaless_reader`` call per record, the parsed schema and
    the Arrow type built once per Python worker.
    """
    import fastavro

    parsed, arrow_type = _udf_schema()
    read = fastavro.schemaless_reader
    rows = [
        None if value is None else read(io.BytesIO(value), parsed, None)
        for value in values.to_pylist()
    ]
    return pa.array(rows, type=arrow_type)


@functools.cache
def _udf_schema() -> tuple[Any, pa.DataType]:
    import fastavro
    from pyspark.sql.pandas.types import to_arrow_type

    return fastavro.parse_schema(dict(ORDER_SCHEMA)), to_arrow_type(order_type(), timezone="UTC")


def produce_orders(
    bootstrap: str, topic: str, records: int, partitions: int, schema_id: int | None = None
) -> float:
    """Write records ``0 .. records - 1`` (framed with ``schema_id`` if given); return seconds.

    Two producer processes, record ``i`` to partition ``i % partitions``; fails unless the
    topic then holds exactly ``records``.
    """
    started = time.perf_counter()
    shares = 2
    with multiprocessing.get_context("spawn").Pool(shares) as pool:
        errors = pool.starmap(
            _produce_share,
            [(bootstrap, topic, records, partitions, schema_id, k, shares) for k in range(shares)],
        )
    elapsed = time.perf_counter() - started
    if any(errors):
        msg = f"producing {topic} failed: {sum(errors)} delivery errors"
        raise RuntimeError(msg)
    held = sum(end_offsets(bootstrap, topic, partitions).values())
    if held != records:
        msg = f"{topic} holds {held} records after producing {records}"
        raise RuntimeError(msg)
    return elapsed


def _produce_share(
    bootstrap: str,
    topic: str,
    records: int,
    partitions: int,
    schema_id: int | None,
    share: int,
    shares: int,
) -> int:
    from confluent_kafka import Producer

    from kafka_rescalable.formats.registry import frame

    failures = []

    def on_error(error: object, _message: object) -> None:
        if error is not None:
            failures.append(error)

    producer = Producer(
        {"bootstrap.servers": bootstrap, **PRODUCER_CONFIG, "on_delivery": on_error}
    )
    for index, body in order_bodies(share, records, shares):
        value = body if schema_id is None else frame(schema_id, body)
        produce_one(producer, topic, value, index % partitions)
    producer.flush(120)
    return len(failures) + len(producer)


def _decoded(
    spark: Any, contender: str, bootstrap: str, topic: str, registry_url: str | None, batch: bool
) -> Any:
    """Return ``contender``'s DataFrame of the decoded fields (``v.*``) of ``topic``."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    source = "kafka" if contender == BUILTIN_FROM_AVRO else OURS
    reader = (spark.read if batch else spark.readStream).format(source)
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "startingOffsets": "earliest",
    }
    if contender == AVRO:
        options |= {"valueFormat": "avro", "valueSchema": ORDER_SCHEMA_JSON}
    elif contender == AVRO_REGISTRY:
        options |= {"valueFormat": "avro", "schema.registry.url": str(registry_url)}
    for key, value in options.items():
        reader = reader.option(key, value)
    frame = reader.load()
    if contender in (AVRO, AVRO_REGISTRY):
        value = F.col("value")
    elif contender == BUILTIN_FROM_AVRO:
        value = from_avro(F.col("value"), ORDER_SCHEMA_JSON)
    else:
        value = F.arrow_udf(decode_orders, order_type())(F.col("value"))
    return frame.select(value.alias("v")).select("v.*")


def _check_rows(frame: Any, contender: str) -> None:
    """Fail unless ``frame`` holds exactly records ``0 .. CHECK_RECORDS - 1`` as written."""
    rows = frame.toArrow().to_pylist()
    for row in rows:
        row["attributes"] = dict(row["attributes"])
    rows.sort(key=lambda row: row["order_id"])
    expected = [order(index) for index in range(CHECK_RECORDS)]
    if rows != expected:
        wrong = next(
            (i for i, (got, want) in enumerate(zip(rows, expected, strict=False)) if got != want),
            min(len(rows), len(expected)),
        )
        got = rows[wrong] if wrong < len(rows) else None
        msg = (
            f"{contender} decoded {len(rows)} check records, expected {CHECK_RECORDS}; first "
            f"difference at record {wrong}: {got!r} != {expected[wrong]!r}"
        )
        raise RuntimeError(msg)


def _start_registry(stack: contextlib.ExitStack, wanted: bool) -> str | None:
    """Start a :class:`LocalSchemaRegistry` on ``stack`` when ``wanted``; return its URL."""
    if not wanted:
        return None
    from kafka_rescalable.testing.schema_registry import LocalSchemaRegistry

    return stack.enter_context(LocalSchemaRegistry()).url


def _register(url: str, subject: str) -> int:
    """Register the order schema under ``subject``; return its id."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    client = SchemaRegistryClient({"url": url})
    return client.register_schema(subject, Schema(ORDER_SCHEMA_JSON, "AVRO"))


def _has_avro_codec() -> bool:
    import importlib.util

    return importlib.util.find_spec("kafka_rescalable.formats.avro_codec") is not None
