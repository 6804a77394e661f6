"""Spark contenders: our source, Spark's built-in Kafka source and the Python-source ceiling.

All three run in the same session with the same queries (the ceiling is described in
:mod:`benchmarks.whole_queries.ceiling_source`).

Both queries run with ``Trigger.AvailableNow`` from the earliest offsets with a fresh
checkpoint, so each reads the whole topic; the ``noop`` sink discards what it gets:

- ``noop``: the source's rows straight into the sink;
- ``json-agg``: ``from_json`` on the value, then count and sum of ``amount`` per ``user``
  (output mode ``update``, a state store, one shuffle).

Rows per second are the topic's records over the wall time from ``start()`` to the query's
end, so per-query start-up (checkpoint, first planning) is included for every contender alike.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.session import BUILTIN, OURS
from benchmarks.whole_queries.ceiling_source import CEILING, ceiling_options
from benchmarks.workloads import VALUE_DDL, Workload

__all__ = [
    "CONTENDERS",
    "QUERIES",
    "QueryRun",
    "rotating_rounds",
    "run_query",
    "source_options",
    "time_available_now",
]

CONTENDERS = (OURS, BUILTIN, CEILING)
"""Spark contenders, in the order of the first round (later rounds rotate it)."""
QUERIES = ("noop", "json-agg")


@dataclass(frozen=True)
class QueryRun:
    """One timed query: rows the sink saw, wall seconds, micro-batches and their seconds.

    ``batch_seconds`` adds up the micro-batches' ``triggerExecution`` times; the rest of the
    wall time is the query's start and stop.
    """

    rows: int
    seconds: float
    batches: int
    batch_seconds: float

    @property
    def rows_per_second(self) -> float:
        """Rows over wall seconds."""
        return self.rows / self.seconds

    @property
    def batch_rows_per_second(self) -> float:
        """Rows over the micro-batches' seconds."""
        return self.rows / self.batch_seconds

    @property
    def outside_seconds(self) -> float:
        """Wall seconds outside micro-batches: starting and stopping the query."""
        return self.seconds - self.batch_seconds

    def __str__(self) -> str:
        """``12,345 rows/s (8.1 s, of which 6.0 s in 2 batch(es))``: one progress line's end."""
        return (
            f"{self.rows_per_second:>12,.0f} rows/s ({self.seconds:.1f} s, of which "
            f"{self.batch_seconds:.1f} s in {self.batches} batch(es))"
        )


def rotating_rounds(
    contenders: Sequence[str],
    runs: int,
    run_one: Callable[[str], QueryRun],
    say: Callable[[str], None],
    label: Callable[[str], str] = str,
) -> tuple[dict[str, QueryRun], dict[str, QueryRun]]:
    """Run every contender ``1 + runs`` times; return its first run and its best timed run.

    The first round warms Python workers and the JIT and is reported apart. Each round
    rotates who goes first, so no contender always runs right after the same other's garbage
    or with its pages freshly cached. ``label`` names a contender in the progress lines.
    """
    first: dict[str, QueryRun] = {}
    best: dict[str, QueryRun] = {}
    for round_number in range(1 + runs):
        shift = round_number % len(contenders)
        for contender in [*contenders[shift:], *contenders[:shift]]:
            result = run_one(contender)
            if round_number == 0:
                first[contender] = result
            elif contender not in best or result.rows_per_second > best[contender].rows_per_second:
                best[contender] = result
            when = "first" if round_number == 0 else f"run {round_number}"
            say(f"  {label(contender)} {when:6}: {result}")
    return first, best


def source_options(source: str, bootstrap: str, topic: str, workload: Workload) -> dict[str, str]:
    """Return the read options, identical for both Kafka sources except ours' ``parallelism``.

    The ceiling gets the workload's shape instead: as many tasks as the Kafka sources plan.
    """
    if source == CEILING:
        tasks = max(workload.partitions, workload.min_partitions or 0, workload.parallelism or 0)
        return ceiling_options(workload.records, tasks, workload.value_bytes)
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "startingOffsets": "earliest",
    }
    if workload.min_partitions is not None:
        options["minPartitions"] = str(workload.min_partitions)
    if source == OURS and workload.parallelism is not None:
        options["parallelism"] = str(workload.parallelism)
    return options


def run_query(
    spark: object, source: str, query: str, bootstrap: str, topic: str, workload: Workload
) -> QueryRun:
    """Run one AvailableNow query to its end; fail unless it read every record once."""
    from pyspark.sql import functions as F

    reader = spark.readStream.format(source)  # type: ignore[attr-defined]
    for key, value in source_options(source, bootstrap, topic, workload).items():
        reader = reader.option(key, value)
    frame = reader.load()
    if query == "noop":
        output = frame
        mode = "append"
    elif query == "json-agg":
        parsed = frame.select(F.from_json(F.col("value").cast("string"), VALUE_DDL).alias("v"))
        output = parsed.groupBy("v.user").agg(F.count("*").alias("n"), F.sum("v.amount"))
        mode = "update"
    else:
        msg = f"query must be one of {QUERIES}, got {query!r}"
        raise ValueError(msg)
    return time_available_now(output, mode, workload.records, f"{source} {query} on {topic}")


def time_available_now(output: object, mode: str, records: int, label: str) -> QueryRun:
    """Run ``output`` as an AvailableNow query into ``noop``; fail unless it read ``records``.

    ``label`` names the query in errors. The wall time runs from ``start()`` to the end.
    """
    with tempfile.TemporaryDirectory(prefix="bench-checkpoint-") as checkpoint:
        started = time.perf_counter()
        handle = (
            output.writeStream.format("noop")  # type: ignore[attr-defined]
            .outputMode(mode)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        finished = handle.awaitTermination(1800)
        seconds = time.perf_counter() - started
        if not finished:
            handle.stop()
            raise RuntimeError(f"{label} did not finish within 1800 s")
        if handle.exception() is not None:
            raise RuntimeError(f"{label} failed: {handle.exception()}")
        progress = handle.recentProgress
    rows = sum(p.numInputRows for p in progress)
    if rows != records:
        msg = f"{label} read {rows} rows, expected {records}"
        raise RuntimeError(msg)
    batch_seconds = sum(p.durationMs.get("triggerExecution", 0) for p in progress) / 1000
    batches = sum(1 for p in progress if p.numInputRows)
    return QueryRun(rows, seconds, batches, batch_seconds)
