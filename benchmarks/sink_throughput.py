"""Sink throughput: our Kafka sink (both guarantees) against Spark's built-in Kafka sink.

Usage::

    python -m benchmarks.sink_throughput                 # embedded broker, 1,000,000 x 100 B
    python -m benchmarks.sink_throughput --rows 200000 --value-bytes 1000 --bootstrap host:9092

Every contender writes the same cached DataFrame (string ``key``, string ``value``, 4 Spark
partitions) with ``df.write`` into a fresh topic of 8 partitions on the same broker, in one
``local[2]`` session (:func:`benchmarks.spark_throughput.spark_session`). Each first writes a
small warm-up DataFrame (Python workers, JIT, producer connections), then the timed one; rows
per second are the rows over the wall time of ``save()``. The ratios are ours over the
built-in sink's; the exactly-once line shows what transactions cost.
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

from benchmarks.data import create_topic
from benchmarks.spark_throughput import spark_session

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
    from connector.testing.local_kafka import LocalKafka

    with LocalKafka() as kafka:
        yield kafka.bootstrap_servers


def _write(frame, fmt: str, bootstrap: str, options: dict[str, str]) -> float:
    topic = f"sink-bench-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, TOPIC_PARTITIONS)
    writer = frame.write.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    for key, value in {"topic": topic, **options}.items():
        writer = writer.option(key, value)
    started = time.perf_counter()
    writer.mode("append").save()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Run every contender once and print rows per second and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="Kafka brokers; default: start an embedded broker")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    args = parser.parse_args(argv)
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
            results = {}
            for name, fmt, options in CONTENDERS:
                _write(warm, fmt, bootstrap, options)
                results[name] = _write(frame, fmt, bootstrap, options)
        finally:
            spark.stop()
    base = args.rows / results[CONTENDERS[0][0]]
    print(f"{args.rows:,} rows of ~{args.value_bytes} B, {TOPIC_PARTITIONS} partitions")
    print(f"{'sink':24} {'seconds':>8} {'rows/s':>10} {'ratio':>6}")
    for name, seconds in results.items():
        rate = args.rows / seconds
        print(f"{name:24} {seconds:8.2f} {rate:10,.0f} {rate / base:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
