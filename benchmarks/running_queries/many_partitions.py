"""Many partitions: our source against Spark's built-in one at 100 to 10,000 partitions.

``python -m benchmarks.run --only partitions`` (``--quick``: 100 and 1,000 partitions, short
streams). For each case (one topic of 100, 1,000 or 10,000 partitions, and 100 topics of 10
partitions), on the run's one broker and in one ``local[2]`` session:

- **Whole query**: the topic's records (100 bytes each, spread evenly over the partitions),
  read from ``earliest`` by a ``Trigger.AvailableNow`` query into ``noop``; wall time from
  ``start()`` to the end and Spark tasks run. A query still running after the bound is
  stopped and reported as "did not finish in N s".
- **Running stream**: :class:`~benchmarks.running_queries.steady.SteadyProducer` writes a
  steady rate round-robin over every partition; each source reads it from ``latest`` in
  :func:`~benchmarks.running_queries.steady.steady_query`, which takes ``now - timestamp``
  per row. After a warm-up, a window is
  measured: rows read per second against the rate (kept up when at least 90 % of it and the
  median batch is shorter than the window), the latency p50 / p99, the median batch
  duration, the driver's planning per batch (Spark's ``latestOffset`` and ``queryPlanning``
  durations: the source's own planning and the engine's), the bytes of each offset-log file
  (``<checkpoint>/offsets/<batch>``), and the resident memory of the Python process Spark
  runs on the driver for our source's reader (the built-in source's driver side is in the
  JVM).

Both sources run with their default options: for ours, one reader slot per partition, and
small batches read by few tasks (``minRecordsPerPartition``).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.data import delete_topics
from benchmarks.running_queries.latency import percentile, ratio
from benchmarks.running_queries.steady import (
    BatchLatencies,
    SteadyProducer,
    steady_query,
    watch,
)
from benchmarks.session import BUILTIN, OURS, spark_session

__all__ = [
    "CREATE_STEP",
    "Case",
    "StreamRun",
    "WholeRun",
    "cases",
    "create_wide_topic",
    "describe_stream",
    "measure_many_partitions",
    "measure_stream",
    "partitions_tables",
]

CREATE_STEP = 5_000
"""Partitions created per request: a KRaft controller refuses one operation of more than
10,000 records ("excessively large batch operation"), and each new partition is a record."""
VALUE = b"x" * 100
KEPT_UP_SHARE = 0.9


@dataclass(frozen=True)
class Case:
    """Topics of one case: ``topics`` topics of ``partitions`` partitions each."""

    key: str
    topics: int
    partitions: int
    records: int

    @property
    def total_partitions(self) -> int:
        """Partitions over all the case's topics."""
        return self.topics * self.partitions

    @property
    def description(self) -> str:
        """``1,000 partitions`` or ``100 topics x 10 partitions``."""
        if self.topics == 1:
            return f"{self.partitions:,} partitions"
        return f"{self.topics} topics x {self.partitions} partitions"


def cases(quick: bool, keys: Sequence[str] = ()) -> tuple[Case, ...]:
    """Return the cases of a run; ``quick`` keeps 100 and 1,000 partitions, fewer records.

    ``keys`` (``--partitions-cases``) keeps only the cases named, in the run's order, to
    measure one of them again without the others' half hour.
    """
    if quick:
        chosen = (Case("p100", 1, 100, 50_000), Case("p1000", 1, 1_000, 100_000))
    else:
        chosen = (
            Case("p100", 1, 100, 200_000),
            Case("p1000", 1, 1_000, 200_000),
            Case("p10000", 1, 10_000, 200_000),
            Case("t100x10", 100, 10, 200_000),
        )
    unknown = sorted(set(keys) - {case.key for case in chosen})
    if unknown:
        known = ", ".join(case.key for case in chosen)
        msg = f"--partitions-cases: no case {', '.join(unknown)} in this run; choose from {known}"
        raise SystemExit(msg)
    return tuple(case for case in chosen if not keys or case.key in keys)


@dataclass(frozen=True)
class WholeRun:
    """One AvailableNow query: seconds to its end (or to the bound) and tasks run."""

    source: str
    seconds: float
    tasks: int
    rows: int
    finished: bool


@dataclass(frozen=True)
class StreamRun:
    """One source's measured window of a running stream."""

    source: str
    rate: int
    window_s: float
    rows: int
    batches: int
    p50_ms: float | None
    p99_ms: float | None
    batch_ms: float | None
    latest_offset_ms: float | None
    query_planning_ms: float | None
    offset_log_bytes: int | None
    driver_python_mib: float

    @property
    def read_rate(self) -> float:
        """Rows read per second in the window."""
        return self.rows / self.window_s

    @property
    def kept_up(self) -> bool:
        """Read at least 90 % of the rate, with a median batch shorter than the window."""
        return (
            self.read_rate >= KEPT_UP_SHARE * self.rate
            and self.batch_ms is not None
            and self.batch_ms < self.window_s * 1000
        )


def create_wide_topic(
    bootstrap: str, topic: str, partitions: int, timeout_s: float = 300.0
) -> None:
    """Create ``topic`` with ``partitions`` partitions; return once each answers a lookup.

    Partitions are added ``CREATE_STEP`` at a time. A new partition has a leader in the
    metadata some seconds before its broker serves it (23 s for 10,000 here): the end offsets
    of every partition are asked until they all come back.
    """
    from confluent_kafka import Consumer, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    count = min(partitions, CREATE_STEP)
    futures = admin.create_topics(
        [NewTopic(topic, num_partitions=count, replication_factor=1)], operation_timeout=timeout_s
    )
    futures[topic].result(timeout=timeout_s)
    while count < partitions:
        count = min(partitions, count + CREATE_STEP)
        futures = admin.create_partitions(
            [NewPartitions(topic, count)], operation_timeout=timeout_s
        )
        futures[topic].result(timeout=timeout_s)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "log_level": 3})
    request = [TopicPartition(topic, p, -1) for p in range(partitions)]
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                for first in range(0, partitions, 500):
                    consumer.offsets_for_times(request[first : first + 500], timeout=30)
                return
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1.0)
                consumer.list_topics(timeout=30)
    finally:
        consumer.close()


def _fill(bootstrap: str, partitions: Sequence[tuple[str, int]], records: int) -> None:
    """Write ``records`` records round-robin over ``partitions``; fail unless all arrive."""
    from confluent_kafka import Producer

    from benchmarks.data import PRODUCER_CONFIG, produce_one

    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_CONFIG, "log_level": 3})
    for index in range(records):
        topic, partition = partitions[index % len(partitions)]
        produce_one(producer, topic, VALUE, partition)
    remaining = producer.flush(120)
    if remaining:
        msg = f"{remaining} of {records} records were not delivered within 120 s"
        raise RuntimeError(msg)


def measure_many_partitions(
    spark: Any,
    bootstrap: str,
    chosen: Sequence[Case],
    *,
    rate: int,
    whole_bound_s: float,
    warmup_s: float,
    window_s: float,
    say: Callable[[str], None] = print,
) -> list[tuple[Case, list[WholeRun], list[StreamRun]]]:
    """Run every case: topics made and filled, then both sources' whole query and stream."""
    results = []
    run_id = uuid.uuid4().hex[:8]
    for case in chosen:
        names = [f"many-{case.key}-{run_id}-{index}" for index in range(case.topics)]
        started = time.monotonic()
        for name in names:
            create_wide_topic(bootstrap, name, case.partitions)
        partitions = [(name, p) for p in range(case.partitions) for name in names]
        _fill(bootstrap, partitions, case.records)
        say(
            f"\n{case.description}: {case.records:,} records, topics made and filled in "
            f"{time.monotonic() - started:.0f} s"
        )
        wholes = []
        for source in (OURS, BUILTIN):
            run = _whole_query(spark, source, bootstrap, names, case.records, whole_bound_s)
            wholes.append(run)
            state = "" if run.finished else f" (did not finish in {whole_bound_s:.0f} s)"
            say(f"  whole query {source:16}: {run.seconds:.1f} s, {run.tasks:,} tasks{state}")
        streams = []
        with SteadyProducer(bootstrap, partitions, rate):
            time.sleep(2.0)  # the producer's metadata for every partition, before anyone reads
            for source in (OURS, BUILTIN):
                run = measure_stream(spark, source, bootstrap, names, rate, warmup_s, window_s)
                streams.append(run)
                say(f"  stream {source:16}: {describe_stream(run)}")
        # The next case's partitions then do not share the broker.
        delete_topics(bootstrap, names)
        results.append((case, wholes, streams))
    return results


def _reader(spark: Any, source: str, bootstrap: str, topics: Sequence[str], start: str) -> Any:
    """Return ``source``'s stream reader of ``topics`` with default options from ``start``."""
    return (
        spark.readStream.format(source)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", ",".join(topics))
        .option("startingOffsets", start)
    )


def _whole_query(
    spark: Any, source: str, bootstrap: str, topics: Sequence[str], records: int, bound_s: float
) -> WholeRun:
    """Run an AvailableNow query into ``noop``; stop it at ``bound_s`` and say so."""
    reader = _reader(spark, source, bootstrap, topics, "earliest")
    with tempfile.TemporaryDirectory(prefix="many-checkpoint-") as checkpoint:
        started = time.perf_counter()
        handle = (
            reader.load()
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        finished = handle.awaitTermination(bound_s)
        seconds = time.perf_counter() - started
        tasks = _tasks_of(spark, str(handle.runId))
        if not finished:
            handle.stop()
        elif handle.exception() is not None:
            msg = f"{source} whole query failed: {handle.exception()}"
            raise RuntimeError(msg)
        rows = sum(p.numInputRows for p in handle.recentProgress)
    if finished and rows != records:
        msg = f"{source} whole query read {rows} rows, expected {records}"
        raise RuntimeError(msg)
    return WholeRun(source, seconds, tasks, rows, finished)


def _tasks_of(spark: Any, run_id: str) -> int:
    """Tasks of the jobs a query ran (Spark names a query's job group after its run id)."""
    tracker = spark.sparkContext.statusTracker()
    total = 0
    for job in tracker.getJobIdsForGroup(run_id):
        info = tracker.getJobInfo(job)
        for stage in info.stageIds if info is not None else ():
            stage_info = tracker.getStageInfo(stage)
            total += stage_info.numTasks if stage_info is not None else 0
    return total


def measure_stream(
    spark: Any,
    source: str,
    bootstrap: str,
    topics: Sequence[str],
    rate: int,
    warmup_s: float,
    window_s: float,
) -> StreamRun:
    """Read the steady producer's partitions for ``warmup_s + window_s``; measure the window."""
    collected = BatchLatencies()
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": ",".join(topics),
        "startingOffsets": "latest",
    }
    with tempfile.TemporaryDirectory(prefix="many-stream-") as checkpoint:
        with steady_query(spark, source, options, collected, Path(checkpoint)) as handle:
            window_start = time.time() + warmup_s
            window_end = window_start + window_s
            watch(handle, warmup_s + window_s, f"{source} stream")
            runner = _newest_source_runner_mib()
            progress = [json.loads(p.json) for p in handle.recentProgress]
        # Batch files only: Hadoop's checksum files (.0.crc) sit beside them.
        sizes = [
            f.stat().st_size for f in Path(checkpoint, "offsets").iterdir() if f.name.isdigit()
        ]
    kept = [lat for at, lat in collected.batches() if window_start <= at < window_end]
    latencies = sorted(value for lat in kept for value in lat.to_pylist())
    in_window = [
        p for p in progress if p.get("numInputRows") and window_start <= _at(p) < window_end
    ]

    def median_of(key: str) -> float | None:
        values = [p["durationMs"].get(key, 0) for p in in_window]
        return statistics.median(values) if values else None

    return StreamRun(
        source=source,
        rate=rate,
        window_s=window_s,
        rows=len(latencies),
        batches=sum(1 for lat in kept if len(lat)),
        p50_ms=percentile(latencies, 50) if latencies else None,
        p99_ms=percentile(latencies, 99) if latencies else None,
        batch_ms=median_of("triggerExecution"),
        latest_offset_ms=median_of("latestOffset"),
        query_planning_ms=median_of("queryPlanning"),
        offset_log_bytes=int(statistics.median(sizes)) if sizes else None,
        driver_python_mib=runner if source == OURS else 0.0,
    )


def _newest_source_runner_mib() -> float:
    """Resident MiB of the newest Python process serving a streaming source on the driver.

    Spark starts one ``python_streaming_source_runner`` per query of a Python data source; it
    holds the reader (``latestOffset``, ``partitions``, ``commit``). The newest one is the
    running query's: those of stopped queries may not have exited yet.
    """
    newest: tuple[int, float] = (-1, 0.0)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"python_streaming_source_runner" not in (proc / "cmdline").read_bytes():
                continue
            started = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[19])
            status = (proc / "status").read_text()
        except (OSError, ValueError, IndexError):
            continue  # gone while we looked
        rss = next(
            (line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")), 0
        )
        if started > newest[0]:
            newest = (started, int(rss) / 1024)
    return newest[1]


def _at(progress: Mapping[str, Any]) -> float:
    """Return a progress report's batch start, in seconds since the epoch."""
    from datetime import datetime

    return datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp()


def describe_stream(run: StreamRun) -> str:
    """One line of a stream's window: rate read, whether it kept up, latency, medians."""
    if not run.batches:
        return f"no batch with rows ended in the {run.window_s:.0f} s window"
    return (
        f"{run.read_rate:,.0f} rows/s of {run.rate:,} ({'kept up' if run.kept_up else 'behind'}), "
        f"p50 {_cell(run.p50_ms)} p99 {_cell(run.p99_ms)} ms, {run.batches} batches, median "
        f"batch {_cell(run.batch_ms)} ms, latestOffset {_cell(run.latest_offset_ms)} ms, "
        f"queryPlanning {_cell(run.query_planning_ms)} ms, offset log "
        f"{_cell(run.offset_log_bytes)} B, driver Python {_cell(run.driver_python_mib)} MiB"
    )


def _cell(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:,.0f}{unit}"


def partitions_tables(
    results: Sequence[tuple[Case, Sequence[WholeRun], Sequence[StreamRun]]],
    whole_bound_s: float,
) -> str:
    """Whole queries, running streams, and the ratios ours / built-in, as Markdown."""
    lines = [
        f"Whole query (AvailableNow into `noop`, from `earliest`; bound {whole_bound_s:.0f} s):",
        "",
        "| case | records | ours s (tasks) | built-in s (tasks) | built-in / ours time |",
        "|---|--:|--:|--:|--:|",
    ]
    for case, wholes, _ in results:
        by = {run.source: run for run in wholes}
        ours, theirs = by[OURS], by[BUILTIN]
        cells = []
        for run in (ours, theirs):
            text = f"{run.seconds:.1f} ({run.tasks:,})"
            cells.append(text if run.finished else f"did not finish in {whole_bound_s:.0f} s")
        if ours.finished and theirs.finished:
            times = f"{theirs.seconds / ours.seconds:.1f}"
        else:
            times = f"> {theirs.seconds / ours.seconds:.0f}" if ours.finished else "-"
        lines.append(
            f"| {case.description} | {case.records:,} | {cells[0]} | {cells[1]} | {times} |"
        )
    lines += [
        "",
        "Running stream (steady producer over every partition, `processingTime=0` into "
        "`foreachBatch`; medians over the batches with rows in the window):",
        "",
        "| case | source | rows/s read (rate) | kept up | batches | latency p50 / p99 ms | "
        "batch ms | latestOffset ms | queryPlanning ms | offset-log bytes per batch | "
        "driver Python MiB |",
        "|---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for case, _, streams in results:
        for run in streams:
            latency = "-" if run.p50_ms is None else f"{run.p50_ms:,.0f} / {run.p99_ms:,.0f}"
            kept = "yes" if run.kept_up else ("no batch in window" if not run.batches else "no")
            lines.append(
                f"| {case.description} | {run.source} | {run.read_rate:,.0f} ({run.rate:,}) | "
                f"{kept} | {run.batches} | {latency} | {_cell(run.batch_ms)} | "
                f"{_cell(run.latest_offset_ms)} | {_cell(run.query_planning_ms)} | "
                f"{_cell(run.offset_log_bytes)} | "
                f"{_cell(run.driver_python_mib) if run.driver_python_mib else '- (JVM)'} |"
            )
    lines += [
        "",
        "Ours / built-in (below 1 is better for ours, except rows/s read):",
        "",
        "| case | whole query time | rows/s read | latency p50 | latency p99 | batch ms | "
        "latestOffset ms | offset-log bytes |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for case, wholes, streams in results:
        by_whole = {run.source: run for run in wholes}
        ours, theirs = by_whole[OURS], by_whole[BUILTIN]
        if ours.finished and theirs.finished:
            whole = f"{ours.seconds / theirs.seconds:.3f}"
        else:
            whole = f"< {ours.seconds / theirs.seconds:.3f}" if ours.finished else "-"
        by = {run.source: run for run in streams}
        a, b = by[OURS], by[BUILTIN]

        def r(x: float | None, y: float | None) -> str:
            return "-" if x is None or y is None else f"{ratio(x, y):.2f}"

        lines.append(
            f"| {case.description} | {whole} | {r(a.read_rate, b.read_rate)} | "
            f"{r(a.p50_ms, b.p50_ms)} | {r(a.p99_ms, b.p99_ms)} | {r(a.batch_ms, b.batch_ms)} | "
            f"{r(a.latest_offset_ms, b.latest_offset_ms)} | "
            f"{r(a.offset_log_bytes, b.offset_log_bytes)} |"
        )
    return "\n".join(lines)


def run_partitions(
    bootstrap: str,
    quick: bool,
    rate: int,
    whole_bound_s: float | None,
    say: Callable[[str], None] = print,
    keys: Sequence[str] = (),
) -> list[str]:
    """Run the ``--only partitions`` section in its own session; return heading and tables."""
    bound = whole_bound_s if whole_bound_s is not None else (60.0 if quick else 300.0)
    warmup, window = (10.0, 30.0) if quick else (20.0, 60.0)
    chosen = cases(quick, keys)
    say(
        f"\nMany partitions: {', '.join(c.description for c in chosen)}; streams at {rate:,} "
        f"records/s, {warmup:.0f} s warm-up, {window:.0f} s measured; whole queries bounded "
        f"at {bound:.0f} s ..."
    )
    with tempfile.TemporaryDirectory(prefix="bench-partitions-") as scratch:
        spark = spark_session(Path(scratch))
        try:
            results = measure_many_partitions(
                spark,
                bootstrap,
                chosen,
                rate=rate,
                whole_bound_s=bound,
                warmup_s=warmup,
                window_s=window,
                say=say,
            )
        finally:
            spark.stop()
    return [
        f"## Many partitions (streams at {rate:,} records/s, {window:.0f} s measured)",
        partitions_tables(results, bound),
    ]
