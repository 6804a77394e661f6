"""Our running stream over one wide topic, with where its tasks' time goes; no built-in source.

``--only partitions`` runs both sources over four cases and takes some 40 minutes, the built-in
source's bounds most of it. This runs only ours, on one topic, in about three minutes, for
checking a change to the driver's planning or the executors' reading at many partitions:
Spark's own ``latestOffset`` and batch medians from the query progress, and the per-task
timings of :mod:`kafka_rescalable.executor.task_timing` (a third of the tasks, the first ones, are
left out as warm-up)::

    python -m benchmarks.diagnostics.wide_stream --partitions 10000 --rate 5000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks.broker import BROKER_JVM_OPTIONS, benchmark_broker
from benchmarks.running_queries.many_partitions import (
    create_wide_topic,
    describe_stream,
    measure_stream,
)
from benchmarks.running_queries.steady import SteadyProducer
from benchmarks.session import OURS, spark_session
from kafka_rescalable.executor.task_timing import TIMINGS_ENV

__all__ = ["main"]

_TIMED = (
    "ranges",
    "rows",
    "first_record_s",
    "consume_s",
    "empty_polls",
    "empty_s",
    "release_s",
    "total_s",
)


def main(argv: list[str] | None = None) -> None:
    """Run the stream against a local broker and print its line and the task timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=5_000, help="records per second")
    parser.add_argument("--warmup", type=float, default=20.0, help="seconds not measured")
    parser.add_argument("--window", type=float, default=40.0, help="seconds measured")
    parser.add_argument(
        "--benchmark-broker",
        action="store_true",
        help="start the benchmark suite's broker (optimizing JIT, 1 GiB heap) instead of the "
        "tests' one; in a run this short it made the batches two to four times longer (see "
        "benchmarks/broker.py)",
    )
    parser.add_argument(
        "--broker-data-on-disk",
        action="store_true",
        help="keep the broker's topic data on disk, not in memory (see benchmarks/broker.py)",
    )
    args = parser.parse_args(argv)
    from kafka_rescalable.testing.local_kafka import DEFAULT_JVM_OPTIONS

    jvm_options = BROKER_JVM_OPTIONS if args.benchmark_broker else DEFAULT_JVM_OPTIONS

    with tempfile.TemporaryDirectory(prefix="wide-stream-") as scratch:
        timings = Path(scratch, "timings.jsonl")
        # Read by each Python worker when its task starts; the workers inherit it from Spark.
        os.environ[TIMINGS_ENV] = str(timings)
        with benchmark_broker(jvm_options, data_on_disk=args.broker_data_on_disk) as kafka:
            bootstrap = kafka.bootstrap_servers
            topic = f"wide-{uuid.uuid4().hex[:8]}"
            create_wide_topic(bootstrap, topic, args.partitions)
            spark = spark_session(Path(scratch))
            try:
                partitions = [(topic, p) for p in range(args.partitions)]
                with SteadyProducer(bootstrap, partitions, args.rate):
                    time.sleep(2.0)  # the producer's metadata, before the query starts
                    run = measure_stream(
                        spark, OURS, bootstrap, [topic], args.rate, args.warmup, args.window
                    )
            finally:
                spark.stop()
        print(f"{args.partitions:,} partitions at {args.rate:,}/s: {describe_stream(run)}")
        lines = timings.read_text().splitlines() if timings.exists() else []
        tasks = [json.loads(line) for line in lines][len(lines) // 3 :]
        print(f"task timings, median and max over {len(tasks)} tasks:")
        for key in _TIMED:
            values = [task[key] for task in tasks if task.get(key) is not None]
            if values:
                print(f"  {key:15} {statistics.median(values):10.3f} {max(values):10.3f}")


if __name__ == "__main__":
    main()
