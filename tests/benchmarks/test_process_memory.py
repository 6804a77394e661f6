"""Telling a query's processes apart, reading their memory, and the two new benchmarks' tables."""

from __future__ import annotations

import os
import subprocess
import sys

from benchmarks.diagnostics.memory import memory_table
from benchmarks.diagnostics.process_memory import (
    DRIVER_JVM,
    DRIVER_PYTHON,
    PLANNER_DAEMONS,
    PLANNERS,
    SOURCE_RUNNER,
    WORKER_DAEMON,
    WORKERS,
    ProcessKind,
    kind_of,
    memory_by_kind,
)
from benchmarks.diagnostics.trends import KeepUp, MemoryTrend, Verdict
from benchmarks.running_queries.sustained import SustainedRun, sustained_tables
from benchmarks.session import BUILTIN, OURS

DAEMON = "/venv/bin/python -m pyspark.daemon pyspark.worker"
PLANNER = "/venv/bin/python -m pyspark.daemon pyspark.sql.worker.plan_data_source_read"
RUNNER = "/venv/bin/python -m pyspark.sql.streaming.python_streaming_source_runner"


def test_processes_are_told_apart_by_command_and_parent() -> None:
    assert (
        kind_of(10, 10, "/venv/bin/python -m benchmarks.running_queries.memory_query", "bash")
        == DRIVER_PYTHON
    )
    jvm = "/usr/lib/jvm/bin/java -cp ... org.apache.spark.deploy.SparkSubmit pyspark-shell"
    assert kind_of(11, 10, jvm, "python") == DRIVER_JVM
    assert kind_of(12, 10, RUNNER, jvm) == SOURCE_RUNNER
    assert kind_of(13, 10, DAEMON, jvm) == WORKER_DAEMON
    assert kind_of(14, 10, DAEMON, DAEMON) == WORKERS
    assert kind_of(15, 10, "/venv/bin/python -m pyspark.worker", jvm) == WORKERS
    assert kind_of(17, 10, "/venv/bin/python -m pyspark.daemon", jvm) == WORKER_DAEMON
    assert kind_of(18, 10, PLANNER, jvm) == PLANNER_DAEMONS
    assert kind_of(19, 10, PLANNER, PLANNER) == PLANNERS
    assert kind_of(16, 10, "/bin/sh -c true", jvm) == "other"


def test_memory_is_summed_over_the_tree_by_parentage() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        start_new_session=True,  # another group, as the worker daemon's, still found
    )
    try:
        kinds = memory_by_kind(os.getpid())
    finally:
        child.communicate(b"")
    assert kinds[DRIVER_PYTHON].processes == 1
    assert kinds[DRIVER_PYTHON].mib > 1
    assert kinds["other"].processes >= 1


def test_the_memory_table_puts_the_kinds_in_order_and_says_what_grew() -> None:
    trends = {
        WORKERS: MemoryTrend(100, 150, 160, 110, 150, True),
        DRIVER_PYTHON: MemoryTrend(80, 81, 82, 80, 81, False),
    }
    last = {
        WORKERS: ProcessKind(300.0, 2),
        DRIVER_PYTHON: ProcessKind(81.0, 1),
        SOURCE_RUNNER: ProcessKind(90.0, 1),
    }
    table = memory_table(trends, last, minutes=10, every_s=15, warmup=100)
    assert "every 15 s for 10 min; warm-up: the first 100 s." in table
    rows = [line for line in table.splitlines() if line.startswith("| ") and "MiB" not in line]
    assert rows[1:] == [
        "| driver (Python) | 1 | 80 | 81 | 82 | no |",
        "| Python workers | 2 | 100 | 150 | 160 | yes (110 -> 150) |",
    ]
    assert f"Fewer than two samples after the warm-up: {SOURCE_RUNNER}." in table


def window(source: str, rate: int, verdict: Verdict) -> SustainedRun:
    result = KeepUp(verdict, rate, rate, rate, 1_000, 1_500, rate)
    return SustainedRun(source, rate, result, batches=30, last_age_ms=250.0)


def test_the_sustained_tables_give_each_climb_and_the_ratio() -> None:
    kept, fell = Verdict.KEPT_UP, Verdict.FELL_BEHIND
    runs = [
        window(OURS, 25_000, kept),
        window(BUILTIN, 25_000, kept),
        window(BUILTIN, 50_000, kept),
        window(OURS, 50_000, fell),
        window(BUILTIN, 100_000, fell),
    ]
    table = sustained_tables(runs)
    row = "| 50,000 | kafka-rescalable | 50,000 | 50,000 | 1,000 | 1,500 | 50,000 | 30 | 250 |"
    assert f"{row} fell behind |" in table
    assert f"| {OURS} | 25,000 (fell behind at 50,000) |" in table
    assert f"| {BUILTIN} | 50,000 (fell behind at 100,000) |" in table
    assert "Ours / built-in, highest rates kept up: 0.50." in table


def test_the_memory_run_reports_the_read_rate_of_its_second_half() -> None:
    from benchmarks.diagnostics.memory import _kept_up

    # Start-up: nothing for 20 s, then a catch-up batch, then 1,000 records a second.
    batches = [{"at": 0.0, "rows": 0, "oldest_ms": None}]
    batches += [
        {"at": 20.0 + t, "rows": 20_000 if t == 0 else 1_000, "oldest_ms": 300.0} for t in range(41)
    ]
    text = _kept_up(batches, 1_000, 990.0)
    assert "received 60,000 records in 42 batches, 1,000 records/s over the second half" in text
    assert "was 300 ms old" in text


def test_the_warm_up_is_a_sixth_or_lasts_until_30_s_after_the_first_rows() -> None:
    from benchmarks.diagnostics.memory import warmup_s

    assert warmup_s(600, 20.0) == 100  # a quick start: a sixth of 10 minutes
    assert warmup_s(600, 95.0) == 125  # a slow start: 30 s after the first rows
    assert warmup_s(600, None) == 100  # no rows at all: the report says so
