"""End-to-end latency of a running query: a steady producer, our source and the built-in one.

A producer process writes a steady rate of 100-byte records to an 8-partition topic (each
record's CreateTime is its send time). For each rate, the two Spark sources read the topic in
turn, in one session, each from ``startingOffsets=latest`` with
``trigger(processingTime="0 seconds")`` into ``foreachBatch``, which collects the batch's
``timestamp`` column (as Arrow) and records ``now - timestamp`` for every row. Rows of batches
that end within the measured window (after a warm-up) count.

Per run: p50, p90, p99 and max latency, micro-batches per minute, the mean of Spark's
per-batch durations (``latestOffset``, ``queryPlanning``, which includes our ``partitions``,
``addBatch``, which includes reading, ``walCommit``, ``commitOffsets``), and for our source the
tasks' own timings (:mod:`kafka_rescalable.executor.task_timing`): getting a consumer, waiting for
the first record, waiting at the end of a range, and how many tasks borrowed a pooled consumer.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

from benchmarks.data import create_topic
from benchmarks.report import markdown_table
from benchmarks.running_queries.steady import (
    PARTITIONS,
    BatchLatencies,
    SteadyProducer,
    steady_query,
    watch,
)
from benchmarks.session import BUILTIN, OURS

__all__ = [
    "LatencyRun",
    "LatencySummary",
    "TaskSummary",
    "latency_tables",
    "percentile",
    "ratio",
    "run_latency",
    "summarize",
    "summarize_tasks",
]

RATES = (1_000, 10_000, 50_000)
PROGRESS_KEYS = ("latestOffset", "queryPlanning", "addBatch", "walCommit", "commitOffsets")
"""Spark's per-batch durations shown in the breakdown (``triggerExecution`` is their whole)."""


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Return the nearest-rank ``q``-th percentile (0 < q <= 100) of ascending values.

    The smallest value with at least ``q`` percent of the values at or below it.
    """
    if not sorted_values:
        msg = "percentile of no values"
        raise ValueError(msg)
    if not 0 < q <= 100:
        msg = f"q must be in (0, 100], got {q}"
        raise ValueError(msg)
    rank = math.ceil(q / 100 * len(sorted_values))
    return sorted_values[max(rank, 1) - 1]


def ratio(ours: float, builtin: float) -> float:
    """Return ours over the built-in's; infinite when the built-in's is 0 and ours is not."""
    if builtin == 0:
        return 1.0 if ours == 0 else math.inf
    return ours / builtin


@dataclass(frozen=True)
class LatencySummary:
    """Latency percentiles in milliseconds over ``rows`` rows."""

    rows: int
    p50: float
    p90: float
    p99: float
    max: float


def summarize(latencies_ms: Sequence[float]) -> LatencySummary:
    """Summarize latencies (any order); all zero for no rows."""
    if not latencies_ms:
        return LatencySummary(0, 0.0, 0.0, 0.0, 0.0)
    ordered = sorted(latencies_ms)
    return LatencySummary(
        len(ordered),
        percentile(ordered, 50),
        percentile(ordered, 90),
        percentile(ordered, 99),
        ordered[-1],
    )


@dataclass(frozen=True)
class TaskSummary:
    """Our tasks' timings in a run: their count, borrowed consumers, means in milliseconds."""

    tasks: int
    reused: int
    setup_ms: float
    first_record_ms: float
    end_wait_ms: float
    empty_polls: float
    release_ms: float
    total_ms: float


def summarize_tasks(records: Sequence[Mapping[str, Any]]) -> TaskSummary | None:
    """Average the task timing records (see :mod:`kafka_rescalable.executor.task_timing`)."""
    if not records:
        return None

    def mean_ms(key: str) -> float:
        values = [r[key] for r in records if r.get(key) is not None]
        return 1000 * sum(values) / len(values) if values else 0.0

    return TaskSummary(
        tasks=len(records),
        reused=sum(1 for r in records if r.get("reused")),
        setup_ms=mean_ms("setup_s"),
        first_record_ms=mean_ms("first_record_s"),
        end_wait_ms=mean_ms("end_wait_s"),
        empty_polls=sum(r.get("empty_polls", 0) for r in records) / len(records),
        release_ms=mean_ms("release_s"),
        total_ms=mean_ms("total_s"),
    )


def mean_durations(progress: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Mean of each of Spark's per-batch durations (ms) over batches that read rows."""
    batches = [p for p in progress if p.get("numInputRows")]
    if not batches:
        return {}
    keys = (*PROGRESS_KEYS, "triggerExecution")
    return {
        key: sum(p.get("durationMs", {}).get(key, 0) for p in batches) / len(batches)
        for key in keys
    }


@dataclass(frozen=True)
class LatencyRun:
    """One source's measured window at one rate."""

    source: str
    rate: int
    round: int
    window_s: float
    latency: LatencySummary
    batches: int
    durations: Mapping[str, float]
    tasks: TaskSummary | None
    first_rows_s: float | None = None
    """Seconds from ``start()`` to the end of the first batch with rows: the query's start-up."""

    @property
    def batches_per_minute(self) -> float:
        """Micro-batches with rows that ended in the window, per minute."""
        return self.batches * 60 / self.window_s


def run_latency(
    spark: Any,
    bootstrap: str,
    rates: Sequence[int],
    warmup_s: float,
    measure_s: float,
    rounds: int,
    timings_path: Path | None,
    say: Any = print,
    ours_options: Mapping[str, str] | None = None,
) -> list[LatencyRun]:
    """Measure every rate: a topic and a producer each, both sources ``rounds`` times in turn.

    ``ours_options`` are added to our source's options (defaults otherwise, as for the
    built-in source).
    """
    runs = []
    for rate in rates:
        topic = f"latency-{rate}-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, PARTITIONS)
        with SteadyProducer(bootstrap, topic, rate) as producer:
            time.sleep(2.0)  # let the producer reach its pace before anyone reads
            if rate == rates[0]:
                # The session's first query of each source pays for the JIT, Python workers
                # and imports (10-20 s here); run each once, unmeasured, so no round does.
                for source in (OURS, BUILTIN):
                    _measure(
                        spark,
                        source,
                        bootstrap,
                        topic,
                        rate,
                        -1,
                        warmup_s,
                        1.0,
                        None,
                        ours_options or {},
                    )
                say("  (each source ran once unmeasured, to warm the session)")
            for round_number in range(rounds):
                order = (OURS, BUILTIN) if round_number % 2 == 0 else (BUILTIN, OURS)
                for source in order:
                    run = _measure(
                        spark,
                        source,
                        bootstrap,
                        topic,
                        rate,
                        round_number,
                        warmup_s,
                        measure_s,
                        timings_path,
                        ours_options or {},
                    )
                    runs.append(run)
                    say(describe(run))
            say(f"  producer: {producer.achieved_rate():,.0f} records/s over the rate's runs")
    return runs


def describe(run: LatencyRun) -> str:
    """One line for the console."""
    text = (
        f"  {run.rate:>6,}/s {run.source:16} round {run.round + 1}: "
        f"p50 {run.latency.p50:,.0f} p90 {run.latency.p90:,.0f} p99 {run.latency.p99:,.0f} "
        f"max {run.latency.max:,.0f} ms, {run.batches_per_minute:,.0f} batches/min, "
        f"{run.latency.rows:,} rows"
    )
    if run.first_rows_s is not None:
        text += f", first rows {run.first_rows_s:.1f} s after start()"
    if run.tasks is not None:
        t = run.tasks
        text += (
            f"; tasks {t.tasks} ({t.reused} reused) setup {t.setup_ms:.1f} first record "
            f"{t.first_record_ms:.1f} end wait {t.end_wait_ms:.1f} release {t.release_ms:.1f} "
            f"total {t.total_ms:.1f} ms"
        )
    return text


def _measure(
    spark: Any,
    source: str,
    bootstrap: str,
    topic: str,
    rate: int,
    round_number: int,
    warmup_s: float,
    measure_s: float,
    timings_path: Path | None,
    ours_options: Mapping[str, str],
) -> LatencyRun:
    collected = BatchLatencies()
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "startingOffsets": "latest",
        **(ours_options if source == OURS else {}),
    }
    started = time.time()
    with steady_query(spark, source, options, collected) as handle:
        window_start = started + warmup_s
        window_end = window_start + measure_s
        watch(handle, window_end - time.time(), f"{source} at {rate}/s")
        progress = [json.loads(p.json) for p in handle.recentProgress]
    batches = collected.batches()
    kept = [(at, lat) for at, lat in batches if window_start <= at < window_end]
    latencies = [value for _at, lat in kept for value in lat.to_pylist()]
    in_window = [p for p in progress if window_start <= _progress_time(p) < window_end]
    tasks = None
    if source == OURS and timings_path is not None and timings_path.exists():
        records = [json.loads(line) for line in timings_path.read_text().splitlines() if line]
        tasks = summarize_tasks([r for r in records if window_start <= r["at"] < window_end])
    return LatencyRun(
        source=source,
        rate=rate,
        round=round_number,
        window_s=measure_s,
        latency=summarize(latencies),
        batches=sum(1 for _at, lat in kept if len(lat)),
        first_rows_s=next((at - started for at, lat in batches if len(lat)), None),
        durations=mean_durations(in_window),
        tasks=tasks,
    )


def _progress_time(progress: Mapping[str, Any]) -> float:
    """Return a progress report's batch start (its ``timestamp``) in seconds since the epoch."""
    from datetime import datetime

    stamp = progress["timestamp"].replace("Z", "+00:00")
    return datetime.fromisoformat(stamp).timestamp()


def latency_tables(runs: Sequence[LatencyRun]) -> str:
    """Return the runs, ratios ours / built-in per rate (medians of rounds), the breakdown."""
    rows = (
        f"{run.rate:,} | {run.source} | {run.round + 1} | {run.latency.p50:,.0f} | "
        f"{run.latency.p90:,.0f} | {run.latency.p99:,.0f} | {run.latency.max:,.0f} | "
        f"{run.batches_per_minute:,.0f} | {run.latency.rows:,}"
        for run in runs
    )
    header = "rate (records/s) | source | round | p50 ms | p90 ms | p99 ms | max ms | batches/min"
    lines = [markdown_table(f"{header} | rows", "rlrrrrrrr", rows)]
    lines += [
        "",
        "Ours / built-in (each the median over rounds):",
        "",
        "| rate (records/s) | p50 | p90 | p99 | max | batches/min |",
        "|--:|--:|--:|--:|--:|--:|",
    ]
    for rate in sorted({run.rate for run in runs}):
        ours = [r for r in runs if r.rate == rate and r.source == OURS]
        theirs = [r for r in runs if r.rate == rate and r.source == BUILTIN]
        if not ours or not theirs:
            continue
        cells = [
            ratio(
                median([getattr(r.latency, key) for r in ours]),
                median([getattr(r.latency, key) for r in theirs]),
            )
            for key in ("p50", "p90", "p99", "max")
        ]
        cells.append(
            ratio(
                median([r.batches_per_minute for r in ours]),
                median([r.batches_per_minute for r in theirs]),
            )
        )
        lines.append(f"| {rate:,} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    lines += [
        "",
        "Per micro-batch, mean ms (Spark's durations; `queryPlanning` includes our "
        "`partitions`, `addBatch` the read and the sink) and our tasks' means:",
        "",
        "| rate | source | round | " + " | ".join(PROGRESS_KEYS) + " | trigger | tasks "
        "(reused) | consumer set-up | to first record | end-of-range wait | release | task |",
        "|--:|---|--:|" + "--:|" * (len(PROGRESS_KEYS) + 1) + "--:|--:|--:|--:|--:|--:|",
    ]
    for run in runs:
        d = run.durations
        cells = [f"{d.get(key, 0):,.0f}" for key in (*PROGRESS_KEYS, "triggerExecution")]
        t = run.tasks
        if t is None:
            cells += ["", "", "", "", "", ""]
        else:
            cells += [
                f"{t.tasks} ({t.reused})",
                f"{t.setup_ms:.1f}",
                f"{t.first_record_ms:.1f}",
                f"{t.end_wait_ms:.1f}",
                f"{t.release_ms:.1f}",
                f"{t.total_ms:.1f}",
            ]
        head = f"| {run.rate:,} | {run.source} | {run.round + 1} | "
        lines.append(head + " | ".join(cells) + " |")
    return "\n".join(lines)
