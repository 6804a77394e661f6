"""Spark's own cost per micro-batch for a Python streaming source that reads nothing.

Usage::

    .venv/bin/python -m benchmarks.running_queries.task_floor 8 2
    .venv/bin/python -m benchmarks.running_queries.task_floor 8 \
        --spark-conf spark.python.unix.domain.socket.enabled=true
    .venv/bin/python -m benchmarks.running_queries.task_floor --quick   # 8 and 2, 20 s each

``format("python-task-floor")`` plans every micro-batch as ``tasks`` tasks, each yielding one
prebuilt Arrow batch of 150 rows of our schema; a query with ``processingTime="0 seconds"`` into
``foreachBatch`` (:func:`benchmarks.running_queries.steady.steady_query`, which collects the
timestamps as Arrow, as the latency benchmark does) runs 10 s unmeasured, then 30 s. Printed per
task count: micro-batches per minute and the mean of Spark's per-batch durations. Whatever a Kafka
source adds comes on top of this floor.

Expected output (2-core VM, default settings): about 75 batches/min with 8 tasks and 275 with
2; with ``spark.python.unix.domain.socket.enabled=true``, about 280 with 8.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from benchmarks.running_queries.latency import PROGRESS_KEYS
from benchmarks.running_queries.steady import steady_query, watch
from benchmarks.session import spark_session
from kafka_rescalable.schema import arrow_schema, spark_schema

__all__ = ["FloorSource", "main"]

ROWS = 150
"""Rows per task: what a task of ours reads at 10,000 records/s and 8 tasks per batch."""


class _Task(InputPartition):
    def __init__(self, index: int) -> None:
        self.index = index


class _FloorReader(DataSourceStreamReader):
    def __init__(self, tasks: int) -> None:
        self._tasks = tasks
        self._next = 0

    def initialOffset(self) -> dict:  # noqa: N802, D102 - the DataSource API's names
        return {"n": 0}

    def latestOffset(self) -> dict:  # noqa: N802, D102
        self._next += 1
        return {"n": self._next}

    def partitions(self, start: dict, end: dict) -> list[_Task]:  # noqa: D102
        return [_Task(index) for index in range(self._tasks)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # noqa: D102
        micros = int(time.time() * 1_000_000)
        columns = [
            pa.nulls(ROWS, pa.binary()),
            pa.array([b"x" * 100] * ROWS, pa.binary()),
            pa.array(["floor"] * ROWS, pa.string()),
            pa.array([partition.index] * ROWS, pa.int32()),  # type: ignore[attr-defined]
            pa.array(range(ROWS), pa.int64()),
            pa.array([micros] * ROWS, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            pa.array([0] * ROWS, pa.int32()),
        ]
        yield pa.RecordBatch.from_arrays(columns, schema=arrow_schema(False))

    def commit(self, end: dict) -> None:  # noqa: D102
        pass


class FloorSource(DataSource):
    """``format("python-task-floor")``, option ``tasks``: see the module's doc."""

    @classmethod
    def name(cls) -> str:  # noqa: D102
        return "python-task-floor"

    def schema(self) -> StructType:  # noqa: D102
        return spark_schema(False)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802, D102
        return _FloorReader(int(self.options.get("tasks", "8")))


def main(argv: Sequence[str] | None = None) -> None:
    """Measure each task count given on the command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.running_queries.task_floor")
    parser.add_argument("tasks", type=int, nargs="*", help="task counts (default: 8 2)")
    parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--warmup", type=float, help="seconds unmeasured (10; quick 5)")
    parser.add_argument("--seconds", type=float, help="seconds measured (30; quick 15)")
    parser.add_argument("--quick", action="store_true", help="a shorter run, to check it runs")
    args = parser.parse_args(argv)
    args.tasks = args.tasks or [8, 2]
    if args.warmup is None:
        args.warmup = 5.0 if args.quick else 10.0
    if args.seconds is None:
        args.seconds = 15.0 if args.quick else 30.0
    settings = dict(setting.split("=", 1) for setting in args.spark_conf)
    with tempfile.TemporaryDirectory(prefix="task-floor-") as scratch:
        spark = spark_session(Path(scratch) / "warehouse", settings)
        spark.dataSource.register(FloorSource)
        try:
            for tasks in args.tasks:
                ends: list[float] = []

                def on_batch(_stamps, _batch_id, now, ends=ends) -> None:
                    ends.append(now)

                options = {"tasks": str(tasks)}
                label = f"the floor at {tasks} tasks"
                with steady_query(spark, "python-task-floor", options, on_batch) as handle:
                    watch(handle, args.warmup, label)
                    window_start = time.time()
                    watch(handle, args.seconds, label)
                    window_end = time.time()
                    progress = [json.loads(p.json) for p in handle.recentProgress]
                batches = sum(1 for at in ends if window_start <= at < window_end)
                recent = progress[-20:]
                means = {
                    key: sum(p["durationMs"].get(key, 0) for p in recent) / max(1, len(recent))
                    for key in (*PROGRESS_KEYS, "triggerExecution")
                }
                shown = ", ".join(f"{key} {value:.0f}" for key, value in means.items())
                per_minute = batches * 60 / (window_end - window_start)
                print(f"{tasks} tasks: {per_minute:.0f} batches/min; mean ms: {shown}", flush=True)
        finally:
            spark.stop()


if __name__ == "__main__":
    main()
