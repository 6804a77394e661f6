"""Sink throughput: our Kafka sink (both guarantees) against Spark's built-in Kafka sink.

Usage::

    python -m benchmarks.whole_queries.sink_throughput          # embedded broker, 1,000,000 x 100 B
    python -m benchmarks.whole_queries.sink_throughput --quick  # 100,000 x 100 B, 1 round
    python -m benchmarks.whole_queries.sink_throughput --rows 200000 --value-bytes 1000 \
        --bootstrap host:9092

Every contender writes the same cached DataFrame (string ``key``, string ``value``, 4 Spark
partitions) with ``df.write`` into a fresh topic of 8 partitions on the same broker, in one
``local[2]`` session (:func:`benchmarks.session.spark_session`). Each first writes a
small warm-up DataFrame (Python workers, JIT, producer connections). Then every contender
writes the timed DataFrame once per round, the order rotating from round to round (the
machine and the broker warm up as a run goes on); a contender's time is its fastest round's
wall time of ``save()``. The ratios are ours over the built-in sink's; the exactly-once line
shows what transactions cost.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from benchmarks.broker import BROKER_JVM_OPTIONS
from benchmarks.data import create_topic
from benchmarks.session import spark_session

CONTENDERS = (
    ("built-in kafka", "kafka", {}),
    ("ours, at-least-once", "kafka-rescalable", {"deliveryGuarantee": "at-least-once"}),
    ("ours, exactly-once", "kafka-rescalable", {"deliveryGuarantee": "exactly-once"}),
)
TOPIC_PARTITIONS = 8


@contextlib.contextmanager
def _broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    from kafka_rescalable.testing.local_kafka import LocalKafka

    with LocalKafka(jvm_options=BROKER_JVM_OPTIONS) as kafka:
        yield kafka.bootstrap_servers


def _write(frame, fmt: str, bootstrap: str, options: dict[str, str]) -> float:
    topic = f"sink-bench-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, TOPIC_PARTITIONS)
    writer = frame.write.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    if fmt == "kafka":
        # Spark caches its producer by settings; a cached one reused for the next write got
        # stuck re-sending old sequence numbers on a loaded machine (records expiring after
        # 120 s): a client id per write gives each write a fresh producer, as ours has.
        writer = writer.option("kafka.client.id", f"sink-bench-{uuid.uuid4().hex[:8]}")
    for key, value in {"topic": topic, **options}.items():
        writer = writer.option(key, value)
    started = time.perf_counter()
    writer.mode("append").save()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Run every contender once and print rows per second and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="Kafka brokers; default: start an embedded broker")
    parser.add_argument("--rows", type=int, help="rows written (1,000,000; quick 100,000)")
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, help="timed rounds (3; quick 1)")
    parser.add_argument("--quick", action="store_true", help="a short run, to check it runs")
    args = parser.parse_args(argv)
    if args.rows is None:
        args.rows = 100_000 if args.quick else 1_000_000
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with _broker(args.bootstrap) as bootstrap, tempfile.TemporaryDirectory() as warehouse:
        spark = spark_session(Path(warehouse))
        try:

            def rows(n: int):
                return spark.range(n, numPartitions=4).selectExpr(
                    "CAST(id % 10007 AS STRING) AS key",
                    f"concat(CAST(id AS STRING), repeat('x', {args.value_bytes})) AS value",
                )

            frame = rows(args.rows).cache()
            frame.count()
            warm = rows(10_000).cache()
            warm.count()
            for _, fmt, options in CONTENDERS:
                _write(warm, fmt, bootstrap, options)
            times: dict[str, list[float]] = {name: [] for name, _, _ in CONTENDERS}
            for round_ in range(args.rounds):
                shift = round_ % len(CONTENDERS)
                for name, fmt, options in CONTENDERS[shift:] + CONTENDERS[:shift]:
                    times[name].append(_write(frame, fmt, bootstrap, options))
            results = {name: min(seconds) for name, seconds in times.items()}
        finally:
            spark.stop()
    base = args.rows / results[CONTENDERS[0][0]]
    print(
        f"{args.rows:,} rows of ~{args.value_bytes} B, {TOPIC_PARTITIONS} partitions, "
        f"best of {args.rounds} rounds"
    )
    print(f"{'sink':24} {'seconds':>8} {'rows/s':>10} {'ratio':>6}")
    for name, seconds in results.items():
        rate = args.rows / seconds
        print(f"{name:24} {seconds:8.2f} {rate:10,.0f} {rate / base:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
