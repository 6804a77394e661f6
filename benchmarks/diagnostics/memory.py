"""Resident memory of our source's running query over minutes, by kind of process.

A steady producer (:mod:`benchmarks.running_queries.steady`, 100-byte records into 8 partitions)
writes ``rate`` records a second while our source's query runs in a process of its own
(:mod:`benchmarks.running_queries.memory_query`) for ``minutes``. Every ``every_s`` seconds the
resident memory (VmRSS) of that process's tree is summed per kind
(:mod:`benchmarks.diagnostics.process_memory`): the driver's Python process, the driver JVM, the
driver's Python source runner, the PySpark daemons that plan on the driver's side and their workers,
and the task daemon with its forked Python workers (RSS counts the pages a worker still shares with
its daemon in both). Reported per kind: the first sample after the warm-up (the first sixth of the
run, or until 30 s after the first batch with rows if that is later: start-up, the first batches,
the consumer pool filling), the last, the largest, and whether it grew
(:func:`benchmarks.diagnostics.trends.memory_trend`). The batches the sink saw say whether the query
kept up meanwhile: a query that fell behind would hold more records in flight, and its memory would
say little about a steady state.
"""

from __future__ import annotations

import json
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.data import create_topic
from benchmarks.diagnostics.process_memory import KINDS, MemorySampler, ProcessKind
from benchmarks.diagnostics.trends import MemoryTrend
from benchmarks.running_queries.memory_query import BATCHES_FILE
from benchmarks.running_queries.steady import PARTITIONS, SteadyProducer
from integration_tests.query_process import start_query_process, stop_query_process

__all__ = ["RATE", "measure_memory", "memory_table", "warmup_s"]

RATE = 10_000
WARM_AFTER_FIRST_ROWS_S = 30.0


def measure_memory(
    bootstrap: str,
    rate: int,
    minutes: float,
    every_s: float,
    say: Callable[[str], None] = print,
) -> str:
    """Run our source's query for ``minutes`` at ``rate``; return the Markdown table."""
    topic = f"memory-{rate}-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, PARTITIONS)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as scratch:
        work = Path(scratch)
        log_path = work / "query.log"
        with SteadyProducer(bootstrap, topic, rate) as producer, log_path.open("ab") as log:
            process = start_query_process(
                "benchmarks.running_queries.memory_query", [bootstrap, topic, str(work)], output=log
            )
            try:
                sampling_from = time.time()
                with MemorySampler(process.pid, every_s) as sampler:
                    deadline = time.monotonic() + minutes * 60
                    while time.monotonic() < deadline and process.poll() is None:
                        time.sleep(1.0)
            finally:
                exited = process.poll()
                stop_query_process(process, grace_s=60)
            produced = producer.achieved_rate()
        if exited is not None:
            tail = log_path.read_text(errors="replace")[-3000:]
            msg = f"the memory query exited early with {exited}:\n{tail}"
            raise RuntimeError(msg)
        batches_path = work / BATCHES_FILE
        lines = batches_path.read_text().splitlines() if batches_path.exists() else []
        batches = [json.loads(line) for line in lines if line]
    last = sampler.samples[-1][1] if sampler.samples else {}
    say(f"  producer: {produced:,.0f} records/s, asked {rate:,}")
    first_rows = next((float(b["at"]) - sampling_from for b in batches if b["rows"]), None)
    warmup = warmup_s(minutes * 60, first_rows)
    table = memory_table(sampler.trends(warmup), last, minutes, every_s, warmup)
    return table + "\n\n" + _kept_up(batches, rate, produced)


def warmup_s(run_s: float, first_rows_s: float | None) -> float:
    """Return the seconds of a run left out as warm-up: a sixth, or more if start-up was slow.

    Until the query has read for a while its processes are still loading code, filling the
    consumer pool and sizing buffers, so the warm-up lasts at least until 30 s after the
    first batch with rows (``first_rows_s``, seconds after sampling began; ``None`` if none).
    """
    if first_rows_s is None:
        return run_s / 6
    return max(run_s / 6, first_rows_s + WARM_AFTER_FIRST_ROWS_S)


def memory_table(
    trends: Mapping[str, MemoryTrend],
    last: Mapping[str, ProcessKind],
    minutes: float,
    every_s: float,
    warmup: float,
) -> str:
    """Return one row per kind of process: memory after warm-up, at the end, at most."""
    kinds = [k for k in KINDS if k in trends] + sorted(set(trends) - set(KINDS))
    lines = [
        f"Resident memory (VmRSS, MiB, summed over the processes of a kind), sampled every "
        f"{every_s:.0f} s for {minutes:g} min; warm-up: the first {warmup:.0f} s.",
        "",
        "| process | processes at the end | after warm-up | last | max | grew |",
        "|---|--:|--:|--:|--:|---|",
    ]
    for kind in kinds:
        trend = trends[kind]
        count = last[kind].processes if kind in last else 0
        grew = f"yes ({trend.start_level:,.0f} -> {trend.end_level:,.0f})" if trend.grew else "no"
        lines.append(
            f"| {kind} | {count} | {trend.warm_mib:,.0f} | {trend.last_mib:,.0f} | "
            f"{trend.peak_mib:,.0f} | {grew} |"
        )
    missing = [k for k in KINDS if k in last and k not in trends]
    missing += sorted(set(last) - set(trends) - set(KINDS))
    if missing:
        lines += ["", "Fewer than two samples after the warm-up: " + ", ".join(missing) + "."]
    return "\n".join(lines)


def _kept_up(batches: Sequence[Mapping[str, Any]], rate: int, produced: float) -> str:
    """Say what the sink received, so a reader can tell a steady query from a stalled one.

    The read rate is taken over the second half of the time between the first batch and the
    last, away from the start-up and the catching up after it.
    """
    rows = sum(int(b["rows"]) for b in batches)
    ages = [float(b["oldest_ms"]) for b in batches[-10:] if b["oldest_ms"] is not None]
    oldest = f"{max(ages):,.0f} ms" if ages else "n/a"
    steady = "n/a"
    if len(batches) >= 2:
        half = (float(batches[-1]["at"]) - float(batches[0]["at"])) / 2
        late = sum(int(b["rows"]) for b in batches if b["at"] > float(batches[-1]["at"]) - half)
        steady = f"{late / half:,.0f}" if half > 0 else "n/a"
    return (
        f"The sink received {rows:,} records in {len(batches):,} batches, {steady} records/s "
        f"over the second half of the run (asked {rate:,}/s, the producer reached "
        f"{produced:,.0f}/s); the oldest record of the last 10 batches was {oldest} old when "
        "the sink got it."
    )
