"""Run every benchmark and print the results as Markdown.

Usage::

    .venv/bin/python -m benchmarks.run            # full run, about 20-30 minutes on 2 cores
    .venv/bin/python -m benchmarks.run --quick    # small sizes, a smoke test of 3-5 minutes
    .venv/bin/python -m benchmarks.run --only sustained   # highest rate kept up, ~15 minutes
    .venv/bin/python -m benchmarks.run --only memory      # our query's memory, ~12 minutes
    .venv/bin/python -m benchmarks.run --only partitions  # 100 to 10,000 partitions, ~31 min

One embedded broker, one ``local[2]`` Spark session and one topic per workload serve every
contender. Per workload and query each Spark source runs once first (reported, but not used
for the ratios: it warms Python workers and the JIT), then ``--runs`` times; the best timed
run counts. The raw client limit runs ``--runs`` times as well, the best counts. Rows per
second are the topic's records over the wall time of the whole query (or read), start-up
included. ``sustained`` and ``memory`` run for many minutes and only when named with ``--only``,
as do ``avro`` (decoding Avro records, :mod:`benchmarks.avro_decode`) and ``partitions``
(100 to 10,000 partitions against the built-in source, :mod:`benchmarks.many_partitions`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report
from benchmarks.client_limit import client_limit
from benchmarks.data import create_topic, produce
from benchmarks.planning_cost import PlanningCost, measure_planning, profile_planning
from benchmarks.rebalancer_bench import (
    RebalanceResult,
    cases,
    measure_rebalance,
    profile_rebalance,
)
from benchmarks.spark_throughput import (
    BUILTIN,
    CEILING,
    CONTENDERS,
    OURS,
    QUERIES,
    rotating_rounds,
    run_query,
    spark_session,
)
from benchmarks.startup_profile import runner_import_profile
from benchmarks.workloads import Workload, workloads

__all__ = ["BROKER_JVM_OPTIONS", "main"]

PLANNING_PARTITIONS = (8, 256, 2_048)
CONSUME_BATCH = 10_000
"""Records per ``consume()`` for the client limit: our executors' default batch size."""


def _broker_jvm_options() -> tuple[str, ...]:
    """Return the test broker's JVM options with the JIT's optimizing tier and a 1 GiB heap."""
    from connector.testing.local_kafka import DEFAULT_JVM_OPTIONS

    options = [o for o in DEFAULT_JVM_OPTIONS if o != "-XX:TieredStopAtLevel=1"]
    return tuple("-Xmx1g" if o.startswith("-Xmx") else o for o in options)


BROKER_JVM_OPTIONS = _broker_jvm_options()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks; return the exit code (0 even when a target is missed)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument(
        "--runs", type=int, default=None, help="timed runs after the first (default: 3, quick: 1)"
    )
    parser.add_argument(
        "--only",
        choices=(
            "throughput",
            "planning",
            "rebalancer",
            "latency",
            "sustained",
            "memory",
            "avro",
            "partitions",
        ),
        action="append",
    )
    parser.add_argument(
        "--rates",
        type=lambda text: tuple(int(r) for r in text.split(",")),
        default=None,
        help="latency: records per second, comma-separated (default: 1000,10000,50000; "
        "quick: 1000,10000)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="latency, sustained: seconds from start() before measuring (15; quick 5)",
    )
    parser.add_argument(
        "--ladder",
        type=lambda text: tuple(int(r) for r in text.split(",")),
        default=None,
        help="sustained: records per second to climb, comma-separated (default: "
        "25000,50000,100000,200000,400000; quick: the first two)",
    )
    parser.add_argument(
        "--window",
        type=float,
        default=None,
        help="sustained: seconds judged per rate (60; quick 15)",
    )
    parser.add_argument(
        "--minutes", type=float, default=None, help="memory: minutes the query runs (10; quick 1)"
    )
    parser.add_argument(
        "--memory-rate", type=int, default=10_000, help="memory: records per second (10000)"
    )
    parser.add_argument(
        "--sample-every", type=float, default=15.0, help="memory: seconds between samples (15)"
    )
    parser.add_argument(
        "--measure", type=float, default=None, help="latency: seconds measured (40; quick 10)"
    )
    parser.add_argument(
        "--rounds", type=int, default=None, help="latency: runs per source and rate (2; quick 1)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="add cProfile listings of planning and rebalancer, and the start-up import times",
    )
    parser.add_argument(
        "--ours-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="latency: an option for our source only, e.g. parallelism=2 (repeatable)",
    )
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="latency: a Spark setting for the latency session (repeatable), e.g. "
        "spark.python.unix.domain.socket.enabled=true",
    )
    parser.add_argument(
        "--task-timings", type=Path, help="latency: keep our tasks' timing lines in this file"
    )
    parser.add_argument(
        "--avro-records",
        type=int,
        default=None,
        help="avro: records in the topic (400000; quick 20000)",
    )
    parser.add_argument(
        "--avro-no-registry",
        action="store_true",
        help="avro: leave out our framed contender and its schema registry",
    )
    parser.add_argument(
        "--partitions-rate", type=int, default=5_000, help="partitions: stream records/s (5000)"
    )
    parser.add_argument(
        "--partitions-bound",
        type=float,
        default=None,
        help="partitions: seconds a whole query may run before it is stopped (300; quick 60)",
    )
    parser.add_argument("--markdown", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)
    runs = args.runs if args.runs is not None else (1 if args.quick else 3)
    parts = set(args.only or ("throughput", "planning", "rebalancer", "latency"))
    given = list(argv) if argv is not None else sys.argv[1:]
    command = " ".join([".venv/bin/python -m benchmarks.run", *map(shlex.quote, given)])

    sections = ["## Environment", report.environment(command)]
    _say("\n\n".join(sections))
    started = time.monotonic()

    rebalances: list[RebalanceResult] = []
    if "rebalancer" in parts:
        _say("\nRebalancer ...")
        rebalances = [measure_rebalance(case, 1 if args.quick else 7) for case in cases(args.quick)]
        sections += [
            "## Rebalancer (`state.rebalance`, no weights)",
            report.rebalancer_table(rebalances),
        ]
        _say(sections[-1])

    planning: list[PlanningCost] = []
    rows: list[report.ThroughputRow] = []
    profiles: list[str] = []
    if parts & {"throughput", "planning", "latency", "sustained", "memory", "avro", "partitions"}:
        from connector.testing.local_kafka import LocalKafka

        with LocalKafka(jvm_options=BROKER_JVM_OPTIONS) as kafka:
            bootstrap = kafka.bootstrap_servers
            run_id = uuid.uuid4().hex[:8]
            if "planning" in parts:
                _say("\nPlanning ...")
                for count in PLANNING_PARTITIONS:
                    topic = f"plan-{count}-{run_id}"
                    calls = 5 if args.quick else 20
                    planning.append(measure_planning(bootstrap, topic, count, calls))
                    if args.profile and count == max(PLANNING_PARTITIONS):
                        profiles.append(
                            f"### One micro-batch's planning at {count:,} partitions "
                            f"(cProfile)\n\n```text\n{profile_planning(bootstrap, topic)}\n```"
                        )
                sections += [
                    "## Driver planning per micro-batch (`latestOffset` + `partitions`)",
                    report.planning_table(planning),
                ]
                _say(sections[-1])
            if "throughput" in parts:
                rows = _throughput(bootstrap, run_id, workloads(args.quick), runs)
                sections += [
                    "## Throughput (rows per second; ratios of the best timed runs)",
                    report.throughput_table(rows),
                    "### The same best runs: inside micro-batches, and outside them",
                    report.split_table(rows),
                ]
                _say("\n\n".join(sections[-3:]))
                if args.profile:
                    profiles.append(
                        "### A Python data source's start-up: the streaming query's new Python "
                        f"process\n\n{runner_import_profile().markdown()}"
                    )
            if "latency" in parts:
                sections += [
                    "## Latency of a running query (`processingTime=0`, `foreachBatch`)",
                    _latency(bootstrap, args),
                ]
                _say("\n\n".join(sections[-2:]))
            if "sustained" in parts:
                sections += _sustained(bootstrap, args)
                _say("\n\n".join(sections[-2:]))
            if "memory" in parts:
                sections += _memory(bootstrap, args)
                _say("\n\n".join(sections[-2:]))
            if "avro" in parts:
                sections += _avro(bootstrap, args, runs)
                _say("\n\n".join(sections[-2:]))
            if "partitions" in parts:
                from benchmarks.many_partitions import run_partitions

                sections += run_partitions(
                    bootstrap, args.quick, args.partitions_rate, args.partitions_bound, _say
                )
                _say("\n\n".join(sections[-2:]))

    if args.profile and "rebalancer" in parts:
        case = cases(args.quick)[1]
        profiles.append(
            f"### `rebalance`, {case.description} (cProfile)\n\n```text\n"
            f"{profile_rebalance(case)}\n```"
        )
    sections += ["## Targets", report.targets(rows, planning, rebalances).markdown()]
    sections.append(
        f"Finished in {(time.monotonic() - started) / 60:.1f} min; load average at the end "
        f"(1/5/15 min): {report.load_average()}."
    )
    _say("\n" + "\n\n".join(sections[-3:]))
    if profiles:
        sections += ["## Profiles", *profiles]
        _say("\n" + "\n\n".join(sections[-1 - len(profiles) :]))
    if args.markdown is not None:
        args.markdown.write_text("\n\n".join(sections) + "\n")
    return 0


def _throughput(
    bootstrap: str, run_id: str, chosen: Sequence[Workload], runs: int
) -> list[report.ThroughputRow]:
    """Produce each workload once, then read it with every contender."""
    from connector.executor.range_reader import FETCH_DEFAULTS

    # What our executors' consumers get by default (see connector.executor.tasks.read_settings).
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


def _latency(bootstrap: str, args: argparse.Namespace) -> str:
    """Run the latency benchmark in a session of its own, with our tasks' timings on."""
    import os

    from benchmarks.latency import RATES, latency_tables, run_latency
    from connector.executor.task_timing import TIMINGS_ENV

    quick = args.quick
    rates = args.rates or (RATES[:2] if quick else RATES)
    warmup = args.warmup if args.warmup is not None else (5.0 if quick else 15.0)
    measure = args.measure if args.measure is not None else (10.0 if quick else 40.0)
    rounds = args.rounds if args.rounds is not None else (1 if quick else 2)
    _say(f"\nLatency: {rates} records/s, {warmup:.0f} s warm-up, {measure:.0f} s measured ...")
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as scratch:
        timings = args.task_timings or Path(scratch) / "task-timings.jsonl"
        # The Python workers inherit the environment of the JVM the session starts.
        os.environ[TIMINGS_ENV] = str(timings)
        settings = dict(setting.split("=", 1) for setting in args.spark_conf)
        if settings:
            _say(f"  extra Spark settings: {settings}")
        spark = spark_session(Path(scratch) / "warehouse", settings)
        try:
            ours = dict(option.split("=", 1) for option in args.ours_option)
            runs = run_latency(
                spark, bootstrap, rates, warmup, measure, rounds, timings, _say, ours
            )
        finally:
            spark.stop()
            del os.environ[TIMINGS_ENV]
    return latency_tables(runs)


def _sustained(bootstrap: str, args: argparse.Namespace) -> list[str]:
    """Climb the ladder of rates with both sources; return the section's heading and tables."""
    from benchmarks.sustained import LADDER, measure_sustained

    ladder = args.ladder or (LADDER[:2] if args.quick else LADDER)
    warmup = args.warmup if args.warmup is not None else (5.0 if args.quick else 15.0)
    window = args.window if args.window is not None else (15.0 if args.quick else 60.0)
    _say(f"\nSustained: {ladder} records/s, {warmup:.0f} s warm-up, {window:.0f} s judged ...")
    return [
        f"## Highest rate kept up for {window:.0f} s (lag not growing)",
        measure_sustained(bootstrap, ladder, warmup, window, _say),
    ]


def _memory(bootstrap: str, args: argparse.Namespace) -> list[str]:
    """Run our source's query for minutes; return the section's heading and table."""
    from benchmarks.memory import measure_memory

    minutes = args.minutes if args.minutes is not None else (1.0 if args.quick else 10.0)
    rate = args.memory_rate
    _say(f"\nMemory: our query at {rate:,} records/s for {minutes:g} min ...")
    return [
        f"## Resident memory of our running query ({rate:,} records/s, {minutes:g} min)",
        measure_memory(bootstrap, rate, minutes, args.sample_every, _say),
    ]


def _avro(bootstrap: str, args: argparse.Namespace, runs: int) -> list[str]:
    """Time the Avro decoders; return the section's heading and table."""
    from benchmarks.avro_decode import RECORDS, avro_table, measure_avro

    records = args.avro_records or (20_000 if args.quick else RECORDS)
    results = measure_avro(bootstrap, runs, _say, records, registry=not args.avro_no_registry)
    return [
        f"## Avro decoding ({records:,} records of ~205 B, best of {runs} timed runs)",
        avro_table(results),
    ]


def _say(text: str) -> None:
    print(text, flush=True)


if __name__ == "__main__":
    sys.exit(main())
