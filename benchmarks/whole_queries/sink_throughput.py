"""Sink throughput: our Kafka sink (both guarantees) against Spark's built-in Kafka sink.

Usage::

    python -m benchmarks.whole_queries.sink_throughput          # embedded broker, 1,000,000 x 100 B
    python -m benchmarks.whole_queries.sink_throughput --quick  # 100,000 x 100 B, 1 round
    python -m benchmarks.whole_queries.sink_throughput --rows 200000 --value-bytes 1000 \
        --bootstrap host:9092
    python -m benchmarks.whole_queries.sink_throughput --value avro   # typed order records

Every contender writes the same cached DataFrame (string ``key``, string ``value``, 4 Spark
partitions) with ``df.write`` into a fresh topic of 8 partitions on the same broker, in one
``local[2]`` session (:func:`benchmarks.session.spark_session`). Each first writes a
small warm-up DataFrame (Python workers, JIT, producer connections). Then every contender
writes the timed DataFrame once per round, the order rotating from round to round (the
machine and the broker warm up as a run goes on); a contender's time is its fastest round's
wall time of ``save()``. The ratios are ours over the built-in sink's; the exactly-once line
shows what transactions cost.

``--value avro`` writes typed records instead: a ``value`` struct of the benchmark's 16-field
order (:data:`benchmarks.whole_queries.avro_records.ORDER_SCHEMA`, built by Spark SQL, so
every contender starts from the same cached rows), encoded as schemaless Avro by our sink
(``valueFormat=avro``, ``valueSchema``; in bulk by the native core where it is installed) and
by Spark's ``to_avro`` before the built-in sink (spark-avro from Maven Central).
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
from benchmarks.whole_queries.avro_records import ORDER_SCHEMA_JSON

CONTENDERS = (
    ("built-in kafka", "kafka", {}),
    ("ours, at-least-once", "kafka-rescalable", {"deliveryGuarantee": "at-least-once"}),
    ("ours, exactly-once", "kafka-rescalable", {"deliveryGuarantee": "exactly-once"}),
)
TOPIC_PARTITIONS = 8

_ORDER_SQL = """named_struct(
    'order_id', id,
    'customer_id', id % 50000,
    'created_at', timestamp_millis(1700000000000 + id * 1000),
    'status', element_at(array('PENDING', 'PAID', 'SHIPPED', 'DELIVERED', 'CANCELLED'),
                         CAST(id % 5 AS INT) + 1),
    'currency', element_at(array('EUR', 'USD', 'GBP', 'CHF', 'JPY'), CAST(id % 5 AS INT) + 1),
    'amount', CAST((id % 100000) / 100.0 AS DECIMAL(12, 2)),
    'unit_price', (id % 1000) / 10.0D,
    'quantity', CAST(id % 20 AS INT) + 1,
    'sku', concat('SKU-', lpad(CAST(id % 100000 AS STRING), 6, '0')),
    'product_name', concat('Product number ', CAST(id % 977 AS STRING)),
    'customer_email', concat('customer', CAST(id % 50000 AS STRING), '@example.com'),
    'shipping_city', element_at(array('Amsterdam', 'Berlin', 'Lisbon', 'Osaka', 'Zurich'),
                                CAST(id % 5 AS INT) + 1),
    'shipping_country', element_at(array('NL', 'DE', 'PT', 'JP', 'CH'), CAST(id % 5 AS INT) + 1),
    'coupon', CASE WHEN id % 3 = 0 THEN concat('C', CAST(id % 100 AS STRING)) END,
    'tags', array('new', concat('t', CAST(id % 7 AS STRING))),
    'attributes', map('channel', 'web', 'gift', CAST(id % 2 = 0 AS STRING))
) AS value"""
"""A typed order per row, the Avro order schema's fields in its order and types."""


def _typed(fmt: str, options: dict[str, str]) -> tuple[dict[str, str], object]:
    """Our sink encodes the struct itself; the built-in sink takes ``to_avro``'s bytes."""
    if fmt == "kafka":
        from pyspark.sql.avro.functions import to_avro
        from pyspark.sql.functions import col

        return options, lambda frame: frame.select(
            "key", to_avro(col("value"), ORDER_SCHEMA_JSON).alias("value")
        )
    typed = {**options, "valueFormat": "avro", "valueSchema": ORDER_SCHEMA_JSON}
    return typed, lambda frame: frame


@contextlib.contextmanager
def _broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    from kafka_rescalable.testing.local_kafka import LocalKafka

    with LocalKafka(jvm_options=BROKER_JVM_OPTIONS) as kafka:
        yield kafka.bootstrap_servers


def _write(frame, fmt: str, bootstrap: str, options: dict[str, str], typed: bool) -> float:
    topic = f"sink-bench-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, TOPIC_PARTITIONS)
    if typed:
        options, shape = _typed(fmt, options)
        frame = shape(frame)  # type: ignore[operator]
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
    parser.add_argument(
        "--value", choices=("bytes", "avro"), default="bytes", help="avro: typed order records"
    )
    parser.add_argument("--rounds", type=int, help="timed rounds (3; quick 1)")
    parser.add_argument("--quick", action="store_true", help="a short run, to check it runs")
    args = parser.parse_args(argv)
    if args.rows is None:
        args.rows = 100_000 if args.quick else 1_000_000
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with _broker(args.bootstrap) as bootstrap, tempfile.TemporaryDirectory() as warehouse:
        typed = args.value == "avro"
        jars = _avro_jars() if typed else []
        spark = spark_session(Path(warehouse), extra_jars=jars)
        try:
            value = (
                _ORDER_SQL
                if typed
                else f"concat(CAST(id AS STRING), repeat('x', {args.value_bytes})) AS value"
            )

            def rows(n: int):
                return spark.range(n, numPartitions=4).selectExpr(
                    "CAST(id % 10007 AS STRING) AS key", value
                )

            frame = rows(args.rows).cache()
            frame.count()
            warm = rows(10_000).cache()
            warm.count()
            for _, fmt, options in CONTENDERS:
                _write(warm, fmt, bootstrap, options, typed)
            times: dict[str, list[float]] = {name: [] for name, _, _ in CONTENDERS}
            for round_ in range(args.rounds):
                shift = round_ % len(CONTENDERS)
                for name, fmt, options in CONTENDERS[shift:] + CONTENDERS[:shift]:
                    times[name].append(_write(frame, fmt, bootstrap, options, typed))
            results = {name: min(seconds) for name, seconds in times.items()}
        finally:
            spark.stop()
    base = args.rows / results[CONTENDERS[0][0]]
    what = "typed Avro orders" if typed else f"rows of ~{args.value_bytes} B"
    print(f"{args.rows:,} {what}, {TOPIC_PARTITIONS} partitions, best of {args.rounds} rounds")
    print(f"{'sink':24} {'seconds':>8} {'rows/s':>10} {'ratio':>6}")
    for name, seconds in results.items():
        rate = args.rows / seconds
        print(f"{name:24} {seconds:8.2f} {rate:10,.0f} {rate / base:6.2f}")
    return 0


def _avro_jars() -> list[Path]:
    from integration_tests.reference_source import spark_avro_jars

    return spark_avro_jars()


if __name__ == "__main__":
    sys.exit(main())
