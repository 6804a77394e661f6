"""Decoding typed records: our ``valueFormat`` against Spark's JVM decoders, on the same bytes.

The "order" records (:mod:`benchmarks.whole_queries.avro_records`: 16 fields, some 205 bytes
of plain Avro) are written in each encoding the chosen formats need
(:mod:`benchmarks.whole_queries.order_encodings`: plain Avro, Confluent-framed Avro with the
schema in a real registry, JSON, Protobuf), one topic per encoding and size, 4 partitions.
One ``local[2]`` session reads them with both sides of every format
(:mod:`benchmarks.whole_queries.typed_contenders`): our source decoding, and Spark's built-in
source plus Spark's JVM decoder on the same topic; the ``binary`` format, no decoding on
either side, is the floor.

Every query selects every decoded field (``v.*``) into the ``noop`` sink with
``Trigger.AvailableNow`` from the earliest offsets, so nothing is pruned. Before timing, each
contender batch-reads a small check topic of its encoding and its rows must equal the records
written. Per size, each contender runs once first (a warm-up, reported apart), then ``runs``
times in rotating order; the best timed run counts, as in the throughput benchmark. A size's
topics are deleted before the next size is written.

Our decoders (the native core or the pure-Python fallback, per format) are whatever the
session's Python workers load; they are asked of a worker and named in the table
(``KAFKA_RESCALABLE_NATIVE=0`` in the environment forces the fallback).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import report
from benchmarks.data import PRODUCER_CONFIG, create_topic, delete_topics, end_offsets, produce_one
from benchmarks.session import spark_session
from benchmarks.whole_queries.avro_records import ORDER_SCHEMA_JSON
from benchmarks.whole_queries.order_encodings import (
    encoded_orders,
    expected_rows,
    order_descriptor_set,
)
from benchmarks.whole_queries.spark_throughput import (
    QueryRun,
    rotating_rounds,
    time_available_now,
)
from benchmarks.whole_queries.typed_contenders import (
    FORMATS,
    JVM,
    OURS_SIDE,
    Contender,
    Reading,
    decoded,
    spark_decoders,
    spark_protobuf_jars,
)

__all__ = [
    "AVRO_FORMATS",
    "DEFAULT_FORMATS",
    "RECORDS",
    "TypedResults",
    "TypedRun",
    "contenders_of",
    "measure_typed",
    "produce_orders",
    "typed_section",
    "typed_table",
]

RECORDS = (400_000, 2_000_000)
"""Records per topic: the project's order workload, and a topic five times larger."""
DEFAULT_FORMATS = ("binary", "avro", "avro-registry", "protobuf", "json")
AVRO_FORMATS = ("avro", "avro-registry", "avro-udf")
"""What ``--only avro`` runs: the Avro formats, and the fastavro UDF a Python user would write."""
PARTITIONS = 4
CHECK_RECORDS = 500
"""Records of the check topics, read in batch and compared with what was written."""


@dataclass(frozen=True)
class TypedRun:
    """A contender's warm-up run and best timed run at one size (``None``: did not run)."""

    records: int
    contender: Contender
    first: QueryRun | None
    best: QueryRun | None
    note: str = ""


@dataclass(frozen=True)
class TypedResults:
    """Every run, and the decoder our source used per family: ``native`` or ``python``."""

    decoders: Mapping[str, str]
    runs: list[TypedRun]
    """Filled size by size, in the order of :func:`contenders_of`."""

    def label(self, name: str) -> str:
        """Name our side of format ``name``: ``ours (native)``, ``ours + UDF``, ``ours``."""
        if name == "avro-udf":
            return "ours + UDF"
        family = FORMATS[name].family
        return f"ours ({self.decoders[family]})" if family else "ours"

    def summary(self) -> str:
        """``Avro native, JSON python``: our decoders of the formats run (all, before a run)."""
        names = {"avro": "Avro", "protobuf": "Protobuf", "json": "JSON"}
        run = {FORMATS[r.contender.format].family for r in self.runs}
        return ", ".join(
            f"{names[family]} {path}"
            for family, path in self.decoders.items()
            if family in run or not self.runs
        )


def contenders_of(formats: Sequence[str]) -> list[Contender]:
    """Return the contenders of ``formats``: ours for each, a JVM side once per decoder.

    Raises
    ------
    ValueError
        If a format is unknown; the message lists the known ones.
    """
    unknown = [name for name in formats if name not in FORMATS]
    if unknown:
        msg = f"unknown typed format(s) {unknown}: choose from {', '.join(FORMATS)}"
        raise ValueError(msg)
    ours = [Contender(name, OURS_SIDE) for name in formats]
    jvm = dict.fromkeys(Contender(FORMATS[name].jvm_key, JVM) for name in formats)
    return [*ours, *jvm]


def measure_typed(
    bootstrap: str,
    runs: int,
    say: Callable[[str], None],
    sizes: Sequence[int] = RECORDS,
    formats: Sequence[str] = DEFAULT_FORMATS,
    protobuf_jar: Path | None = None,
    partitions: int = PARTITIONS,
) -> TypedResults:
    """Write the topics, check every contender's rows, then time each at every size."""
    from integration_tests.reference_source import spark_avro_jars

    contenders = contenders_of(formats)
    skipped: dict[Contender, str] = {}
    protobuf_jars: list[Path] = []
    if Contender("protobuf", JVM) in contenders:
        protobuf_jars, reason = spark_protobuf_jars(protobuf_jar)
        if reason:
            skipped[Contender("protobuf", JVM)] = reason
    active = [c for c in contenders if c not in skipped]
    encodings = sorted({FORMATS[c.format].encoding for c in contenders})
    run_id = uuid.uuid4().hex[:8]
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-typed-")))
        registry_url = _start_registry(stack) if "avro-framed" in encodings else None
        descriptor_set = scratch / "order.desc"
        descriptor_set.write_bytes(order_descriptor_set())
        reading = Reading(bootstrap, registry_url, descriptor_set)
        fill = functools.partial(_fill, bootstrap, encodings, partitions, reading)
        check = fill(f"typed-check-{run_id}", CHECK_RECORDS)
        jars = [*spark_avro_jars(), *protobuf_jars]
        spark = spark_session(scratch / "warehouse", extra_jars=jars)
        stack.callback(spark.stop)
        results = TypedResults(spark_decoders(spark), [])
        say(f"\nTyped records: our source's decoders: {results.summary()}")
        for contender in active:
            topic = check[FORMATS[contender.format].encoding]
            _check_rows(decoded(spark, contender, topic, reading, batch=True), contender)
        say(f"  every contender decoded the {CHECK_RECORDS} check records as written")
        for size in sizes:
            started = time.perf_counter()
            topics = fill(f"typed-{size}-{run_id}", size)
            say(
                f"\n{size:,} records in {partitions} partitions, {', '.join(encodings)}: "
                f"written in {time.perf_counter() - started:.0f} s"
            )
            first, best = _rounds(spark, active, runs, topics, size, reading, say)
            results.runs.extend(
                TypedRun(size, c, first.get(c), best.get(c), skipped.get(c, "")) for c in contenders
            )
            delete_topics(bootstrap, topics.values())
    return results


def _rounds(
    spark: Any,
    active: Sequence[Contender],
    runs: int,
    topics: Mapping[str, str],
    records: int,
    reading: Reading,
    say: Callable[[str], None],
) -> tuple[dict[Contender, QueryRun], dict[Contender, QueryRun]]:
    """Time every active contender on ``topics``: the first run and the best of ``runs``."""
    by_name = {str(c): c for c in active}

    def run_one(name: str) -> QueryRun:
        contender = by_name[name]
        topic = topics[FORMATS[contender.format].encoding]
        frame = decoded(spark, contender, topic, reading, batch=False)
        return time_available_now(frame, "append", records, f"{name} on {topic}")

    first, best = rotating_rounds(list(by_name), runs, run_one, say, "{:22}".format)
    return (
        {by_name[name]: run for name, run in first.items()},
        {by_name[name]: run for name, run in best.items()},
    )


def typed_section(results: TypedResults, runs: int) -> list[str]:
    """Return the report's heading (our decoders, ``runs`` timed runs) and table."""
    return [
        f"## Typed records: ours against Spark's JVM decoders (order records, best of {runs} "
        f"timed runs; our decoders: {results.summary()})",
        typed_table(results),
    ]


def typed_table(results: TypedResults) -> str:
    """Return the results as Markdown: each format's two sides, their best runs, the ratios.

    ``ours / JVM`` divides wall-time rates (query start-up included, as every whole-query
    benchmark here); ``in batches`` divides the rates inside micro-batches.
    """
    by_key = {(r.records, r.contender): r for r in results.runs}
    rows = []
    for records, contender in by_key:
        if contender.side != OURS_SIDE:
            continue
        shape = FORMATS[contender.format]
        ours = by_key[(records, contender)]
        jvm = by_key.get((records, Contender(shape.jvm_key, JVM)))
        label = results.label(contender.format)
        ratio = ratio_in_batches = "-"
        if ours.best and jvm and jvm.best:
            ratio = f"{ours.best.rows_per_second / jvm.best.rows_per_second:.2f}"
            ratio_in_batches = (
                f"{ours.best.batch_rows_per_second / jvm.best.batch_rows_per_second:.2f}"
            )
        rows.append(
            f"{records:,} | {shape.title} | {label} | {_cells(ours)} | {shape.jvm_title} | "
            f"{_cells(jvm)} | {ratio} | {ratio_in_batches}"
        )
    return report.markdown_table(
        "records | format | ours | rows/s | s (in batches) | built-in + JVM decoder | rows/s | "
        "s (in batches) | ours / JVM | in batches",
        "rllrrlrrrr",
        rows,
    )


def _cells(run: TypedRun | None) -> str:
    if run is None or run.best is None:
        return f"not run: {run.note if run else 'not chosen'} | "
    best = run.best
    return f"{best.rows_per_second:,.0f} | {best.seconds:.1f} ({best.batch_seconds:.1f})"


def _fill(
    bootstrap: str,
    encodings: Sequence[str],
    partitions: int,
    reading: Reading,
    prefix: str,
    records: int,
) -> dict[str, str]:
    """Create and fill one topic per encoding; return each encoding's topic."""
    topics = {}
    for encoding in encodings:
        topic = f"{prefix}-{encoding}"
        create_topic(bootstrap, topic, partitions)
        schema_id = None
        if encoding == "avro-framed":
            schema_id = _register(str(reading.registry_url), f"{topic}-value")
        produce_orders(bootstrap, topic, records, partitions, encoding, schema_id)
        topics[encoding] = topic
    return topics


def produce_orders(
    bootstrap: str,
    topic: str,
    records: int,
    partitions: int,
    encoding: str = "avro",
    schema_id: int | None = None,
) -> float:
    """Write records ``0 .. records - 1`` in ``encoding``; return the seconds it took.

    Two producer processes, record ``i`` to partition ``i % partitions``; fails unless the
    topic then holds exactly ``records``.
    """
    started = time.perf_counter()
    shares = 2
    arguments = [
        (bootstrap, topic, records, partitions, encoding, schema_id, k, shares)
        for k in range(shares)
    ]
    with multiprocessing.get_context("spawn").Pool(shares) as pool:
        errors = pool.starmap(_produce_share, arguments)
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
    encoding: str,
    schema_id: int | None,
    share: int,
    shares: int,
) -> int:
    from confluent_kafka import Producer

    failures = []

    def on_error(error: object, _message: object) -> None:
        if error is not None:
            failures.append(error)

    producer = Producer(
        {"bootstrap.servers": bootstrap, **PRODUCER_CONFIG, "on_delivery": on_error}
    )
    for index, value in encoded_orders(encoding, share, records, shares, schema_id):
        produce_one(producer, topic, value, index % partitions)
    producer.flush(120)
    return len(failures) + len(producer)


def _check_rows(frame: Any, contender: Contender) -> None:
    """Fail unless ``frame`` holds exactly records ``0 .. CHECK_RECORDS - 1`` as written."""
    encoding = FORMATS[contender.format].encoding
    rows = frame.toArrow().to_pylist()
    if contender.format == "binary":
        got: list[Any] = sorted(row["value"] for row in rows)
        want: list[Any] = sorted(v for _, v in encoded_orders(encoding, 0, CHECK_RECORDS))
    else:
        for row in rows:
            row["attributes"] = dict(row["attributes"])
        got = sorted(rows, key=lambda row: row["order_id"])
        want = expected_rows(encoding, CHECK_RECORDS)
    if got != want:
        wrong = next(
            (i for i, (one, other) in enumerate(zip(got, want, strict=False)) if one != other),
            min(len(got), len(want)),
        )
        shown = got[wrong] if wrong < len(got) else None
        expected = want[wrong] if wrong < len(want) else None
        msg = (
            f"{contender} decoded {len(got)} check records, expected {CHECK_RECORDS}; first "
            f"difference at record {wrong}: {shown!r} != {expected!r}"
        )
        raise RuntimeError(msg)


def _start_registry(stack: contextlib.ExitStack) -> str:
    """Start a :class:`LocalSchemaRegistry` on ``stack``; return its URL."""
    from kafka_rescalable.testing.schema_registry import LocalSchemaRegistry

    return stack.enter_context(LocalSchemaRegistry()).url


def _register(url: str, subject: str) -> int:
    """Register the order schema under ``subject``; return its id."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    client = SchemaRegistryClient({"url": url})
    return client.register_schema(subject, Schema(ORDER_SCHEMA_JSON, "AVRO"))
