"""Avro orders in a schema registry topic -> per-minute totals -> an Avro topic, exactly once.

Usage::

    python examples/avro_orders.py                       # embedded broker and registry
    python examples/avro_orders.py --bootstrap host:9092 --registry http://registry:8081

With no ``--bootstrap`` it starts the embedded Apache Kafka broker, and with no ``--registry``
the local schema registry (``kafka_rescalable.testing.schema_registry``: Apicurio Registry with a
Confluent-compatible API; its first start on a machine builds it with Maven, ~2 min). It
produces sample orders, spread over ``--minutes`` minutes of event time, to ``orders`` as Avro
framed for the registry, with confluent-kafka's own ``AvroSerializer`` (subject
``orders-value``), as any producer of a registry topic does.

The streaming query reads them with ``valueFormat=avro``: each record is decoded with its
writer schema and resolved to the subject's latest version, so ``value`` is a struct. It
totals each customer's orders per one-minute window of ``created_at`` (a typed aggregation
with a one-minute watermark, in ``append`` mode: a window is written once, when the watermark
passes its end) and writes the totals to ``orders-per-minute`` with ``valueFormat=avro`` and
the output schema inline: the sink registers it under ``orders-per-minute-value`` and frames
each record with its id, under ``deliveryGuarantee=exactly-once``. The last minutes of orders
stay open (no later order moves the watermark past their end), as in any append-mode
aggregation; Spark writes the others in the no-data micro-batch that follows the data.
A ``read_committed`` read of the output with ``valueFormat=avro`` then checks that every
closed window's total per customer is there once and equals the input's.

Expected output (numbers depend on ``--orders``, ``--customers`` and ``--minutes``)::

    Produced 2000 Avro orders of 20 customers over 5 minutes to orders on 127.0.0.1:PORT
    Wrote 60 totals of 3 closed minutes to orders-per-minute (exactly-once, Avro)
    Read back 60 totals, each window and customer once; all equal the input's: True
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

from etl_pipeline import example_session, kafka_for
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

ORDER_SCHEMA = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "item", "type": "string"},
        {"name": "quantity", "type": "int"},
        {"name": "price", "type": "double"},
        {"name": "coupon", "type": ["null", "string"], "default": None},
        {"name": "created_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}
"""The input's writer schema, as the producing service registers it."""

TOTALS_SCHEMA = {
    "type": "record",
    "name": "CustomerMinute",
    "namespace": "shop",
    "fields": [
        {"name": "minute", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "customer", "type": "string"},
        {"name": "orders", "type": "long"},
        {"name": "quantity", "type": "long"},
        {"name": "revenue", "type": "double"},
    ],
}
"""The output's schema: the contract with the topic's readers, given to the sink inline."""

PARTITIONS = 4
ITEMS = (("pen", 1.5), ("notebook", 4.25), ("lamp", 23.0), ("mug", 7.75), ("chair", 89.0))
START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
"""When the sample orders begin, in event time."""
WINDOW = timedelta(minutes=1)
WATERMARK_DELAY = "1 minute"


def sample_orders(count: int, customers: int, minutes: int, seed: int = 11) -> list[dict]:
    """Return ``count`` orders of ``customers`` customers over ``minutes`` minutes, in order.

    They are the values ``AvroSerializer`` takes (a ``datetime`` for ``timestamp-millis``).
    """
    rng = random.Random(seed)
    step_ms = minutes * 60_000 // count
    orders = []
    for order_id in range(count):
        item, price = rng.choice(ITEMS)
        orders.append(
            {
                "order_id": order_id,
                "customer": f"customer-{rng.randrange(customers):03d}",
                "item": item,
                "quantity": rng.randint(1, 5),
                "price": price,
                "coupon": "SPRING" if order_id % 9 == 0 else None,
                "created_at": START + timedelta(milliseconds=order_id * step_ms),
            }
        )
    return orders


def produce_orders(bootstrap: str, registry: str, topic: str, orders: list[dict]) -> None:
    """Produce ``orders`` to ``topic`` keyed by customer, framed for the registry."""
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    serialize = AvroSerializer(SchemaRegistryClient({"url": registry}), json.dumps(ORDER_SCHEMA))
    context = SerializationContext(topic, MessageField.VALUE)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for order in orders:
        producer.produce(topic, serialize(order, context), order["customer"].encode())
        producer.poll(0)
    if producer.flush(60):
        raise RuntimeError(f"the orders were not all delivered to {topic}")


def create_topics(bootstrap: str, *topics: str) -> None:
    """Create the topics that do not exist yet, with :data:`PARTITIONS` partitions."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    existing = admin.list_topics(timeout=30).topics
    for name in topics:
        if name not in existing:
            new = NewTopic(name, num_partitions=PARTITIONS, replication_factor=1)
            admin.create_topics([new])[name].result(timeout=30)


def minute_totals(orders: DataFrame) -> DataFrame:
    """Total each customer's orders per minute; shaped as the sink's columns (key, value).

    The totals are non-null by construction (a count, sums made 0 when empty), as the
    output schema's fields are.
    """
    totals = (
        orders.select("value.*")
        .withWatermark("created_at", WATERMARK_DELAY)
        .groupBy(F.window("created_at", "1 minute"), "customer")
        .agg(
            F.count(F.lit(1)).alias("orders"),
            F.coalesce(F.sum("quantity"), F.lit(0)).cast("long").alias("quantity"),
            F.coalesce(F.sum(F.col("quantity") * F.col("price")), F.lit(0.0)).alias("revenue"),
        )
    )
    return totals.select(
        F.col("customer").alias("key"),
        F.struct(
            F.col("window.start").alias("minute"), "customer", "orders", "quantity", "revenue"
        ).alias("value"),
    )


def run_pipeline(
    spark: SparkSession, bootstrap: str, registry: str, source: str, target: str, checkpoint: Path
) -> None:
    """Run the query to the end of ``source`` (``Trigger.AvailableNow``)."""
    orders = (
        spark.readStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("valueFormat", "avro")
        .option("schema.registry.url", registry)
        .load()
    )
    query = (
        minute_totals(orders)
        .writeStream.format("kafka-rescalable")
        .outputMode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", target)
        .option("deliveryGuarantee", "exactly-once")
        .option("keyFormat", "string")
        .option("valueFormat", "avro")
        .option("valueSchema", json.dumps(TOTALS_SCHEMA))
        .option("schema.registry.url", registry)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(f"the query failed: {query.exception()}")


def read_totals(spark: SparkSession, bootstrap: str, registry: str, topic: str) -> list:
    """Read the output topic back, typed, as a ``read_committed`` consumer sees it."""
    return (
        spark.read.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("kafka.isolation.level", "read_committed")
        .option("keyFormat", "string")
        .option("valueFormat", "avro")
        .option("schema.registry.url", registry)
        .load()
        .collect()
    )


def expected_totals(orders: list[dict]) -> dict[tuple[datetime, str], tuple[int, int, float]]:
    """Each closed minute's totals per customer, computed from the orders in plain Python.

    A minute is closed when the watermark (the latest order's time less the delay) has passed
    its end; the later ones are still open and not written.
    """
    watermark = max(order["created_at"] for order in orders) - timedelta(minutes=1)
    totals: dict[tuple[datetime, str], tuple[int, int, float]] = {}
    for order in orders:
        created = order["created_at"]
        minute = created - timedelta(seconds=created.second, microseconds=created.microsecond)
        if minute + WINDOW > watermark:
            continue
        key = (minute, order["customer"])
        count, quantity, revenue = totals.get(key, (0, 0, 0.0))
        totals[key] = (
            count + 1,
            quantity + order["quantity"],
            revenue + order["quantity"] * order["price"],
        )
    return totals


def check_totals(rows: list, orders: list[dict]) -> tuple[bool, bool]:
    """Say whether every (minute, customer) came once, and whether all totals are right."""
    written = [
        ((row.value.minute.astimezone(timezone.utc), row.value.customer), row) for row in rows
    ]
    once = len({key for key, _ in written}) == len(written) and all(
        row.key == row.value.customer for _, row in written
    )
    got = {key: (row.value.orders, row.value.quantity, row.value.revenue) for key, row in written}
    expected = expected_totals(orders)
    equal = got.keys() == expected.keys() and all(
        got[k][:2] == expected[k][:2] and abs(got[k][2] - expected[k][2]) < 1e-6 for k in expected
    )
    return once, equal


@contextlib.contextmanager
def registry_for(url: str | None) -> Iterator[str]:
    """Yield the given registry's URL, or a local registry's for the length of the run."""
    if url:
        yield url
        return
    from kafka_rescalable.testing.schema_registry import LocalSchemaRegistry

    with LocalSchemaRegistry() as registry:
        yield registry.url


def main(argv: list[str] | None = None) -> int:
    """Produce Avro orders, run the pipeline once and check its output."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="Kafka brokers; default: start an embedded broker")
    parser.add_argument("--registry", help="schema registry URL; default: start a local one")
    parser.add_argument("--master", default=os.environ.get("SPARK_MASTER", "local[2]"))
    parser.add_argument("--output", type=Path, default=Path("output/avro_orders"))
    parser.add_argument("--orders", type=int, default=2000)
    parser.add_argument("--customers", type=int, default=20)
    parser.add_argument("--minutes", type=int, default=5)
    parser.add_argument("--topic", default="orders")
    args = parser.parse_args(argv)
    target = f"{args.topic}-per-minute"

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.bootstrap is None and args.output.exists():
        shutil.rmtree(args.output)  # a new embedded broker: the old checkpoint means nothing
    with kafka_for(args.bootstrap) as bootstrap, registry_for(args.registry) as registry:
        orders = sample_orders(args.orders, args.customers, args.minutes)
        create_topics(bootstrap, args.topic, target)
        produce_orders(bootstrap, registry, args.topic, orders)
        customers = len({order["customer"] for order in orders})
        print(
            f"Produced {len(orders)} Avro orders of {customers} customers over {args.minutes} "
            f"minutes to {args.topic} on {bootstrap}"
        )
        spark = example_session(args.master, "kafka-rescalable-avro-orders", PARTITIONS)
        try:
            checkpoint = args.output / "checkpoint"
            run_pipeline(spark, bootstrap, registry, args.topic, target, checkpoint)
            rows = read_totals(spark, bootstrap, registry, target)
        finally:
            spark.stop()
        minutes = len({row.value.minute for row in rows})
        print(
            f"Wrote {len(rows)} totals of {minutes} closed minutes to {target} (exactly-once, Avro)"
        )
        once, equal = check_totals(rows, orders)
        print(
            f"Read back {len(rows)} totals, "
            f"{'each window and customer once' if once else 'SOME TWICE'}; "
            f"all equal the input's: {equal}"
        )
    return 0 if once and equal else 1


if __name__ == "__main__":
    sys.exit(main())
