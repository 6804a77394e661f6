"""Run every benchmark and print the results as Markdown.

Usage::

    .venv/bin/python -m benchmarks.run            # full run, about 20-30 minutes on 2 cores
    .venv/bin/python -m benchmarks.run --quick    # small sizes, a smoke test of 3-5 minutes
    .venv/bin/python -m benchmarks.run --only sustained   # highest rate kept up, ~15 minutes
    .venv/bin/python -m benchmarks.run --only memory      # our query's memory, ~12 minutes
    .venv/bin/python -m benchmarks.run --only partitions  # 100 to 10,000 partitions, ~31 min
    .venv/bin/python -m benchmarks.run --only sizeprobe   # maxBytesPerTrigger's probe, ~1 min

One embedded broker, one ``local[2]`` Spark session and one topic per workload serve every
contender. Per workload and query each Spark source runs once first (reported, but not used
for the ratios: it warms Python workers and the JIT), then ``--runs`` times; the best timed
run counts. The raw client limit runs ``--runs`` times as well, the best counts. Rows per
second are the topic's records over the wall time of the whole query (or read), start-up
included. ``sustained`` and ``memory`` run for many minutes and only when named with ``--only``,
as do ``typed`` (our typed decoders against Spark's JVM ones,
:mod:`benchmarks.whole_queries.typed_decode`; ``avro`` is its Avro part), and
``partitions`` (100 to 10,000 partitions against the built-in source,
:mod:`benchmarks.running_queries.many_partitions`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import shlex
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from benchmarks import report
from benchmarks.broker import benchmark_broker
from benchmarks.compiled_spark_home import compiled_spark_home
from benchmarks.data import create_topic, produce
from benchmarks.diagnostics.startup_profile import runner_import_profile
from benchmarks.micro.planning_cost import PlanningCost, measure_planning, profile_planning
from benchmarks.micro.rebalancer_bench import (
    RebalanceResult,
    cases,
    measure_rebalance,
    profile_rebalance,
)
from benchmarks.micro.size_probe import PROBE_CASES, measure_size_probe
from benchmarks.session import BUILTIN, OURS, spark_session
from benchmarks.whole_queries.client_limit import client_limit
from benchmarks.whole_queries.spark_throughput import (
    CEILING,
    CONTENDERS,
    QUERIES,
    rotating_rounds,
    run_query,
)
from benchmarks.workloads import Workload, workloads

__all__ = ["MODES", "Mode", "Run", "main"]

PLANNING_PARTITIONS = (8, 256, 2_048)
CONSUME_BATCH = 10_000
"""Records per ``consume()`` for the client limit: our executors' default batch size."""

T = TypeVar("T")


@dataclass
class Run:
    """What every mode gets: the arguments, the broker, and the results the targets read."""

    args: argparse.Namespace
    bootstrap: str = ""
    """The broker, started before the first mode that needs one (see :attr:`Mode.broker`)."""
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    throughput: list[report.ThroughputRow] = field(default_factory=list)
    planning: list[PlanningCost] = field(default_factory=list)
    rebalances: list[RebalanceResult] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)

    @property
    def runs(self) -> int:
        """Timed runs per contender after the first (``--runs``; 3, quick 1)."""
        return self.pick(self.args.runs, 1, 3)

    def add_profile(self, title: str, listing: str) -> None:
        """Keep a cProfile listing for the run's closing "Profiles" section."""
        self.profiles.append(f"### {title} (cProfile)\n\n```text\n{listing}\n```")

    def pick(self, given: T | None, quick: T, full: T) -> T:
        """Return the value given on the command line, else the quick or the full default."""
        if given is not None:
            return given
        return quick if self.args.quick else full


@dataclass(frozen=True)
class Mode:
    """One ``--only`` choice: what it runs, whether a plain run includes it, its needs."""

    measure: Callable[[Run], list[str]]
    """Runs the benchmark; returns its sections (a Markdown heading, then tables)."""
    default: bool
    """Part of a run without ``--only`` (the long ones run only when named)."""
    broker: bool = True
    """Needs the embedded broker (:attr:`Run.bootstrap`)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks; return the exit code (0 even when a target is missed)."""
    args = _parser().parse_args(argv)
    chosen = args.only or [name for name, mode in MODES.items() if mode.default]
    given = list(argv) if argv is not None else sys.argv[1:]
    command = " ".join([".venv/bin/python -m benchmarks.run", *map(shlex.quote, given)])
    with contextlib.ExitStack() as stack:
        if args.compiled_pyspark_zip:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            os.environ["SPARK_HOME"] = str(compiled_spark_home(scratch))
        sections = ["## Environment", report.environment(command)]
        _say("\n\n".join(sections))
        started = time.monotonic()
        run = Run(args)
        for name, mode in MODES.items():
            if name not in chosen:
                continue
            if mode.broker and not run.bootstrap:
                run.bootstrap = _start_broker(stack, run.args.broker_data_on_disk)
            done = mode.measure(run)
            sections += done
            _say("\n" + "\n\n".join(done))
    closing = [
        "## Targets",
        report.targets(run.throughput, run.planning, run.rebalances).markdown(),
        f"Finished in {(time.monotonic() - started) / 60:.1f} min; load average at the end "
        f"(1/5/15 min): {report.load_average()}.",
    ]
    if run.profiles:
        closing += ["## Profiles", *run.profiles]
    sections += closing
    _say("\n" + "\n\n".join(closing))
    if args.markdown is not None:
        args.markdown.write_text("\n\n".join(sections) + "\n")
    return 0


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(","))


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


_VALUED_OPTIONS: tuple[tuple[str, Callable[[str], object], str], ...] = (
    ("--runs", int, "timed runs after the first (default: 3, quick: 1)"),
    ("--rates", _ints, "latency: records/s, comma-separated (1000,10000,50000; quick: 2)"),
    ("--warmup", float, "latency, sustained: seconds before measuring (15; quick 5)"),
    ("--measure", float, "latency: seconds measured (40; quick 10)"),
    ("--rounds", int, "latency: runs per source and rate (2; quick 1)"),
    ("--task-timings", Path, "latency: keep our tasks' timing lines in this file"),
    ("--ladder", _ints, "sustained: records/s to climb (25000,...,400000; quick: 2)"),
    ("--window", float, "sustained: seconds judged per rate (60; quick 15)"),
    ("--minutes", float, "memory: minutes the query runs (10; quick 1)"),
    ("--memory-rate", int, "memory: records per second (10000)"),
    ("--sample-every", float, "memory: seconds between samples (15; quick 5)"),
    ("--typed-records", _ints, "typed, avro: records per topic (400000,2000000; quick 20000)"),
    ("--typed-formats", _names, "typed, avro: formats, comma-separated (typed: all but avro-udf)"),
    ("--spark-protobuf-jar", Path, "typed: a spark-protobuf jar for from_protobuf (none on Maven)"),
    ("--partitions-rate", int, "partitions: stream records/s (5000)"),
    ("--partitions-bound", float, "partitions: seconds a whole query may run (300; quick 60)"),
    ("--partitions-cases", str, "partitions: only these cases, comma-separated (p10000,t100x10)"),
    ("--markdown", Path, "also write the results to this file"),
)
"""Options with a value: flag, type, help; each defaults to ``None`` (the mode's default)."""

_FLAGS = (
    ("--quick", "small sizes, for a smoke test"),
    ("--profile", "add cProfiles of planning and rebalancer, and start-up import times"),
    ("--broker-data-on-disk", "keep the broker's topic data on disk, not in memory (tmpfs)"),
    (
        "--compiled-pyspark-zip",
        "Spark's Python processes import a byte-compiled pyspark.zip, as after "
        "kafka-rescalable-compile-pyspark (the virtualenv is not changed)",
    ),
)
_REPEATED = (
    ("--ours-option", "latency: an option for our source only, e.g. parallelism=2"),
    ("--spark-conf", "latency: a Spark setting for the latency session (repeatable)"),
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument(
        "--only",
        choices=tuple(MODES),
        action="append",
        help="run only this mode (repeatable); without it: "
        + ", ".join(name for name, mode in MODES.items() if mode.default),
    )
    for flag, kind, text in _VALUED_OPTIONS:
        parser.add_argument(flag, type=kind, help=text)
    for flag, text in _FLAGS:
        parser.add_argument(flag, action="store_true", help=text)
    for flag, text in _REPEATED:
        parser.add_argument(flag, action="append", default=[], metavar="KEY=VALUE", help=text)
    return parser


def _start_broker(stack: contextlib.ExitStack, on_disk: bool) -> str:
    """Start the embedded broker for the rest of the run; return its bootstrap servers.

    Its topic data is in memory unless ``on_disk``: see :mod:`benchmarks.broker` why.
    """
    return stack.enter_context(benchmark_broker(data_on_disk=on_disk)).bootstrap_servers


def _rebalancer(run: Run) -> list[str]:
    """Time ``state.rebalance`` on the issue's cases."""
    _say("\nRebalancer ...")
    quick = run.args.quick
    run.rebalances = [measure_rebalance(case, 1 if quick else 7) for case in cases(quick)]
    if run.args.profile:
        case = cases(quick)[1]
        run.add_profile(f"`rebalance`, {case.description}", profile_rebalance(case))
    return [
        "## Rebalancer (`state.rebalance`, no weights)",
        report.rebalancer_table(run.rebalances),
    ]


def _planning(run: Run) -> list[str]:
    """Time one micro-batch's planning on the driver's side for each topic size."""
    _say("\nPlanning ...")
    for count in PLANNING_PARTITIONS:
        topic = f"plan-{count}-{run.run_id}"
        calls = run.pick(None, 5, 20)
        run.planning.append(measure_planning(run.bootstrap, topic, count, calls))
        if run.args.profile and count == max(PLANNING_PARTITIONS):
            title = f"One micro-batch's planning at {count:,} partitions"
            run.add_profile(title, profile_planning(run.bootstrap, topic))
    return [
        "## Driver planning per micro-batch (`latestOffset` + `partitions`)",
        report.planning_table(run.planning),
    ]


def _size_probe(run: Run) -> list[str]:
    """Drain a backlog of large and one of small records with the byte cap's size probe."""
    _say("\nSize probe ...")
    results = [
        measure_size_probe(run.bootstrap, f"sizes-{case.name}-{run.run_id}", case, run.args.quick)
        for case in PROBE_CASES
    ]
    return [
        "## The byte cap's size probe (`maxBytesPerTrigger`), per batch, on the driver",
        report.size_probe_table(results),
    ]


def _throughput_mode(run: Run) -> list[str]:
    """Read every workload with every contender; the tables of rates and of their split."""
    run.throughput = _throughput(run.bootstrap, run.run_id, workloads(run.args.quick), run.runs)
    if run.args.profile:
        run.profiles.append(
            "### A Python data source's start-up: the streaming query's new Python "
            f"process\n\n{runner_import_profile().markdown()}"
        )
    return [
        "## Throughput (rows per second; ratios of the best timed runs)",
        report.throughput_table(run.throughput),
        "### The same best runs: inside micro-batches, and outside them",
        report.split_table(run.throughput),
    ]


def _throughput(
    bootstrap: str, run_id: str, chosen: Sequence[Workload], runs: int
) -> list[report.ThroughputRow]:
    """Produce each workload once, then read it with every contender."""
    from kafka_rescalable.executor.range_reader import FETCH_DEFAULTS

    # What our executors' consumers get by default (see
    # kafka_rescalable.executor.tasks.read_settings).
    client_config = {**FETCH_DEFAULTS, "isolation.level": "read_uncommitted"}
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-warehouse-") as warehouse:
        spark = spark_session(Path(warehouse))
        try:
            for workload in chosen:
                topic = f"bench-{workload.key}-{run_id}"
                create_topic(bootstrap, topic, workload.partitions)
                seconds = produce(bootstrap, topic, workload)
                _say(
                    f"\n{workload.description}: produced in {seconds:.1f} s "
                    f"({workload.records / seconds:,.0f} records/s)"
                )
                client = 0.0
                for attempt in range(runs):
                    records, elapsed = client_limit(
                        bootstrap, topic, workload, client_config, CONSUME_BATCH
                    )
                    client = max(client, records / elapsed)
                    _say(f"  client limit run {attempt + 1}: {records / elapsed:,.0f} rows/s")
                for query in QUERIES:
                    first, best = rotating_rounds(
                        CONTENDERS,
                        runs,
                        lambda source, query=query, topic=topic, workload=workload: run_query(
                            spark, source, query, bootstrap, topic, workload
                        ),
                        _say,
                        lambda source, query=query: f"{query:8} {source:16}",
                    )
                    rows.append(
                        report.ThroughputRow(
                            workload=workload,
                            query=query,
                            ours=best[OURS].rows_per_second,
                            builtin=best[BUILTIN].rows_per_second,
                            ceiling=best[CEILING].rows_per_second,
                            client=client,
                            ours_first=first[OURS].rows_per_second,
                            builtin_first=first[BUILTIN].rows_per_second,
                            ours_in_batches=best[OURS].batch_rows_per_second,
                            builtin_in_batches=best[BUILTIN].batch_rows_per_second,
                            ceiling_in_batches=best[CEILING].batch_rows_per_second,
                            ours_outside_s=best[OURS].outside_seconds,
                            builtin_outside_s=best[BUILTIN].outside_seconds,
                            ceiling_outside_s=best[CEILING].outside_seconds,
                        )
                    )
        finally:
            spark.stop()
    return rows


def _latency(run: Run) -> list[str]:
    """Run the latency benchmark in a session of its own, with our tasks' timings on."""
    import os

    from benchmarks.running_queries.latency import RATES, latency_tables, run_latency
    from kafka_rescalable.executor.task_timing import TIMINGS_ENV

    args = run.args
    rates = run.pick(args.rates, RATES[:2], RATES)
    warmup = run.pick(args.warmup, 5.0, 15.0)
    measure = run.pick(args.measure, 10.0, 40.0)
    rounds = run.pick(args.rounds, 1, 2)
    _say(f"\nLatency: {rates} records/s, {warmup:.0f} s warm-up, {measure:.0f} s measured ...")
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as scratch:
        # The Python workers inherit the environment of the JVM the first session starts, and
        # the JVM keeps it for later modes' sessions: the file must outlive this mode.
        default = Path(tempfile.gettempdir()) / f"bench-task-timings-{run.run_id}.jsonl"
        timings = args.task_timings or default
        os.environ[TIMINGS_ENV] = str(timings)
        settings = dict(setting.split("=", 1) for setting in args.spark_conf)
        if settings:
            _say(f"  extra Spark settings: {settings}")
        spark = spark_session(Path(scratch) / "warehouse", settings)
        try:
            ours = dict(option.split("=", 1) for option in args.ours_option)
            runs = run_latency(
                spark, run.bootstrap, rates, warmup, measure, rounds, timings, _say, ours
            )
        finally:
            spark.stop()
            del os.environ[TIMINGS_ENV]
    return [
        "## Latency of a running query (`processingTime=0`, `foreachBatch`)",
        latency_tables(runs),
    ]


def _sustained(run: Run) -> list[str]:
    """Climb the ladder of rates with both sources; return the section's heading and tables."""
    from benchmarks.running_queries.sustained import LADDER, measure_sustained

    ladder = run.pick(run.args.ladder, LADDER[:2], LADDER)
    warmup = run.pick(run.args.warmup, 5.0, 15.0)
    window = run.pick(run.args.window, 15.0, 60.0)
    _say(f"\nSustained: {ladder} records/s, {warmup:.0f} s warm-up, {window:.0f} s judged ...")
    return [
        f"## Highest rate kept up for {window:.0f} s (lag not growing)",
        measure_sustained(run.bootstrap, ladder, warmup, window, _say),
    ]


def _memory(run: Run) -> list[str]:
    """Run our source's query for minutes; return the section's heading and table."""
    from benchmarks.diagnostics.memory import RATE, measure_memory

    minutes = run.pick(run.args.minutes, 1.0, 10.0)
    rate = run.args.memory_rate or RATE
    every = run.pick(run.args.sample_every, 5.0, 15.0)
    _say(f"\nMemory: our query at {rate:,} records/s for {minutes:g} min ...")
    return [
        f"## Resident memory of our running query ({rate:,} records/s, {minutes:g} min)",
        measure_memory(run.bootstrap, rate, minutes, every, _say),
    ]


def _typed(run: Run, avro_only: bool = False) -> list[str]:
    """Time our typed decoders against Spark's JVM ones (``avro_only``: Avro's, 400,000)."""
    from benchmarks.whole_queries import typed_decode as typed

    formats = typed.AVRO_FORMATS if avro_only else typed.DEFAULT_FORMATS
    sizes = run.pick(run.args.typed_records, (20_000,), typed.RECORDS[: 1 if avro_only else 2])
    runs = run.pick(run.args.runs, 1, 2)
    formats = run.args.typed_formats or formats
    jar = run.args.spark_protobuf_jar
    results = typed.measure_typed(run.bootstrap, runs, _say, sizes, formats, jar)
    return typed.typed_section(results, runs)


def _partitions(run: Run) -> list[str]:
    """Our source and the built-in one at 100 to 10,000 partitions; heading and tables."""
    from benchmarks.running_queries.many_partitions import run_partitions

    rate = run.args.partitions_rate or 5_000
    keys = [key.strip() for key in (run.args.partitions_cases or "").split(",") if key.strip()]
    return run_partitions(
        run.bootstrap, run.args.quick, rate, run.args.partitions_bound, _say, keys
    )


MODES: dict[str, Mode] = {
    "rebalancer": Mode(_rebalancer, default=True, broker=False),
    "planning": Mode(_planning, default=True),
    "throughput": Mode(_throughput_mode, default=True),
    "latency": Mode(_latency, default=True),
    "sustained": Mode(_sustained, default=False),
    "memory": Mode(_memory, default=False),
    "typed": Mode(_typed, default=False),
    "avro": Mode(functools.partial(_typed, avro_only=True), default=False),
    "partitions": Mode(_partitions, default=False),
    "sizeprobe": Mode(_size_probe, default=False),
}
"""Every ``--only`` choice, in the order a run takes them; a new benchmark is one line."""


def _say(text: str) -> None:
    print(text, flush=True)


if __name__ == "__main__":
    sys.exit(main())
