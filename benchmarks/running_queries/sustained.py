"""The highest rate each source keeps up with: a ladder of steady rates, one window each.

For each rate of the ladder (by default 25,000 to 400,000 records a second, doubling), our source
and the built-in one take turns in one Spark session on one broker, the order alternating from rate
to rate. Each turn has a topic of its own (8 partitions, deleted afterwards, so the broker's disk
holds one window's records at most) and a fresh steady producer
(:mod:`benchmarks.running_queries.steady`, 100-byte records). The query starts at the topic's end
offsets, read just before ``start()``, with ``trigger(processingTime="0 seconds")`` into
``foreachBatch``, which collects the batch's ``timestamp`` column as Arrow, as the latency benchmark
does, and counts its rows.

Every second the benchmark samples the records in the topic since the starting offsets (the broker's
high watermarks) and the records the sink has received; their difference is the lag. After
``warmup_s`` a window of ``window_s`` seconds of those samples goes to
:func:`benchmarks.diagnostics.trends.keep_up`: kept up if the lag did not grow, producer-bound if
the topic grew slower than asked. A source's climb ends at its first rate not kept up; the ladder
ends when both climbs have.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.data import create_topic
from benchmarks.diagnostics.trends import KeepUp, LagSample, Verdict, climb, keep_up, limit_ratio
from benchmarks.report import markdown_table
from benchmarks.running_queries.steady import PARTITIONS, SteadyProducer, steady_query, watch
from benchmarks.session import BUILTIN, OURS, spark_session

__all__ = ["LADDER", "SustainedRun", "measure_sustained", "sustained_tables"]

LADDER = (25_000, 50_000, 100_000, 200_000, 400_000)
SAMPLE_EVERY_S = 1.0
_PRODUCER_LEAD_S = 2.0
"""The producer's head start, so that it runs at its pace before the query starts."""


@dataclass(frozen=True)
class SustainedRun:
    """One source's window at one rate: the verdict and what the sink saw in the window."""

    source: str
    rate: int
    result: KeepUp
    batches: int
    last_age_ms: float | None
    """How old the oldest record of the window's last batch was when the sink got it."""


def measure_sustained(
    bootstrap: str,
    ladder: Sequence[int],
    warmup_s: float,
    window_s: float,
    say: Callable[[str], None] = print,
) -> str:
    """Climb the ladder in a session of its own; return the Markdown tables."""
    with tempfile.TemporaryDirectory(prefix="bench-sustained-") as scratch:
        spark = spark_session(Path(scratch) / "warehouse")
        try:
            runs = run_sustained(spark, bootstrap, ladder, warmup_s, window_s, say)
        finally:
            spark.stop()
    return sustained_tables(runs)


def run_sustained(
    spark: Any,
    bootstrap: str,
    ladder: Sequence[int],
    warmup_s: float,
    window_s: float,
    say: Callable[[str], None] = print,
) -> list[SustainedRun]:
    """Run both sources up the ladder until each has met a rate it did not keep up with."""
    climbing = {OURS: True, BUILTIN: True}
    runs: list[SustainedRun] = []
    for step, rate in enumerate(sorted(ladder)):
        if step == 0:
            # The session's first query of each source pays for the JIT, Python workers and
            # imports; run each once, unjudged, so that no window does.
            for source in (OURS, BUILTIN):
                _window(spark, source, bootstrap, rate, warmup_s, 5.0)
            say("  (each source ran once unjudged, to warm the session)")
        order = (OURS, BUILTIN) if step % 2 == 0 else (BUILTIN, OURS)
        for source in order:
            if not climbing[source]:
                continue
            run = _window(spark, source, bootstrap, rate, warmup_s, window_s)
            runs.append(run)
            say(describe(run))
            climbing[source] = run.result.verdict is Verdict.KEPT_UP
        if not any(climbing.values()):
            break
    return runs


def describe(run: SustainedRun) -> str:
    """One line for the console."""
    r = run.result
    age = "n/a" if run.last_age_ms is None else f"{run.last_age_ms:,.0f} ms"
    return (
        f"  {run.rate:>7,}/s {run.source:16}: {r.verdict.value}; produced "
        f"{r.produced_rate:,.0f}/s, read {r.read_rate:,.0f}/s, lag {r.start_lag:,.0f} -> "
        f"{r.end_lag:,.0f} records (allowed growth {r.allowed_growth:,.0f}), "
        f"{run.batches} batches, last batch's oldest record {age} old"
    )


def _window(
    spark: Any, source: str, bootstrap: str, rate: int, warmup_s: float, window_s: float
) -> SustainedRun:
    """Run ``source`` on a fresh topic and producer; judge the samples of the window."""
    from confluent_kafka.admin import AdminClient

    topic = f"sustained-{rate}-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, PARTITIONS)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        with SteadyProducer(bootstrap, topic, rate):
            time.sleep(_PRODUCER_LEAD_S)
            starting = _end_offsets(admin, topic)
            return _judge(
                spark, source, bootstrap, topic, admin, starting, rate, warmup_s, window_s
            )
    finally:
        admin.delete_topics([topic], operation_timeout=60)[topic].result(timeout=60)


def _judge(
    spark: Any,
    source: str,
    bootstrap: str,
    topic: str,
    admin: Any,
    starting: dict[int, int],
    rate: int,
    warmup_s: float,
    window_s: float,
) -> SustainedRun:
    """Start ``source`` at ``starting``, sample its lag every second, judge the window."""
    import pyarrow.compute as pc

    lock = threading.Lock()
    read = 0
    batches: list[tuple[float, int, float | None]] = []  # monotonic end, rows, oldest's age

    def on_batch(stamps: Any, _batch_id: int, now: float) -> None:
        nonlocal read
        rows = len(stamps)
        age = now * 1000 - pc.min(stamps).as_py() if rows else None
        with lock:
            read += rows
            batches.append((time.monotonic(), rows, age))

    offsets = {topic: {str(p): o for p, o in starting.items()}}
    base = sum(starting.values())
    samples: list[LagSample] = []

    def sample(elapsed: float) -> None:
        produced = sum(_end_offsets(admin, topic).values()) - base
        with lock:
            seen = read
        if elapsed >= warmup_s:
            samples.append(LagSample(elapsed - warmup_s, produced, seen))

    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "startingOffsets": json.dumps(offsets),
    }
    with steady_query(spark, source, options, on_batch) as handle:
        started = time.monotonic()
        label = f"{source} at {rate}/s"
        watch(handle, warmup_s + window_s, label, SAMPLE_EVERY_S, tick=sample)
    window_start = started + warmup_s
    with lock:
        kept = [(at, age) for at, rows, age in batches if at >= window_start and rows]
    return SustainedRun(
        source=source,
        rate=rate,
        result=keep_up(samples, rate),
        batches=len(kept),
        last_age_ms=kept[-1][1] if kept else None,
    )


def _end_offsets(admin: Any, topic: str) -> dict[int, int]:
    """Return the high watermark of every partition of ``topic`` through one admin client."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    request = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(PARTITIONS)}
    futures = admin.list_offsets(request, request_timeout=30)
    return {tp.partition: future.result().offset for tp, future in futures.items()}


def _row(run: SustainedRun) -> str:
    r = run.result
    counts = (r.produced_rate, r.read_rate, r.start_lag, r.end_lag, r.allowed_growth)
    age = "" if run.last_age_ms is None else f"{run.last_age_ms:,.0f}"
    cells = [f"{run.rate:,}", run.source, *(f"{n:,.0f}" for n in counts), str(run.batches)]
    return " | ".join([*cells, age, r.verdict.value])


def sustained_tables(runs: Sequence[SustainedRun]) -> str:
    """Return every window, then each source's highest rate kept up and the ratio."""
    header = (
        "rate asked (records/s) | source | produced/s | read/s | lag at start | lag at end "
        "| allowed growth | batches | last batch's oldest record, ms | verdict"
    )
    lines = [markdown_table(header, "rlrrrrrrrl", map(_row, runs))]
    climbs = {
        source: climb({run.rate: run.result.verdict for run in runs if run.source == source})
        for source in (OURS, BUILTIN)
    }
    lines += [
        "",
        "| source | highest rate kept up (records/s) |",
        "|---|---|",
        *(f"| {source} | {c.describe()} |" for source, c in climbs.items()),
        "",
        f"Ours / built-in, highest rates kept up: {limit_ratio(climbs[OURS], climbs[BUILTIN])}.",
    ]
    return "\n".join(lines)
