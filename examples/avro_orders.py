"""Avro orders in a schema registry topic -> totals per customer -> an Avro topic, exactly once.

Usage::

    python examples/avro_orders.py                       # embedded broker and registry
    python examples/avro_orders.py --bootstrap host:9092 --registry http://registry:8081

With no ``--bootstrap`` it starts the embedded Apache Kafka broker, and with no ``--registry``
the local schema registry (``connector.testing.schema_registry``: Apicurio Registry with a
Confluent-compatible API; its first start on a machine builds it with Maven, ~2 min). It
produces sample orders to ``orders`` as Avro framed for the registry, with confluent-kafka's
own ``AvroSerializer`` (subject ``orders-value``), as any producer of a registry topic does.

The streaming query reads them with ``valueFormat=avro``: each record is decoded with its
writer schema and resolved to the subject's latest version, so ``value`` is a struct. It
totals each customer's orders (a typed aggregation, in ``update`` mode) and writes every
changed total to ``orders-by-customer`` with ``valueFormat=avro`` and the output schema
inline: the sink registers it under ``orders-by-customer-value`` and frames each record with
its id, under ``deliveryGuarantee=exactly-once``. ``maxOffsetsPerTrigger`` splits the input
into a few micro-batches, so a customer's total is updated several times. A ``read_committed``
read of the output with ``valueFormat=avro`` then checks that every update was written once
(each customer's order count only grows, no update repeats) and that the last total of every
customer equals the input's.

Expected output (numbers depend on ``--orders``)::

    Produced 2000 Avro orders of 40 customers to orders on 127.0.0.1:PORT (subject orders-value)
    Wrote 160 total updates to orders-by-customer in 4 micro-batches (exactly-once, Avro)
    Read back 160 updates, each once; the last totals of 40 customers match the input: True
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
    ],
}
"""The input's writer schema, as the producing service registers it."""

TOTALS_SCHEMA = {
    "type": "record",
    "name": "CustomerTotals",
    "namespace": "shop",
    "fields": [
        {"name": "customer", "type": "string"},
        {"name": "orders", "type": "long"},
        {"name": "quantity", "type": "long"},
        {"name": "revenue", "type": "double"},
    ],
}
"""The output's schema: the contract with the topic's readers, given to the sink inline."""

PARTITIONS = 4
ITEMS = (("pen", 1.5), ("notebook", 4.25), ("lamp", 23.0), ("mug", 7.75), ("chair", 89.0))


def sample_orders(count: int, customers: int, seed: int = 11) -> Iterator[dict]:
    """Yield ``count`` orders of ``customers`` customers, as the Avro serializer takes them."""
    rng = random.Random(seed)
    for order_id in range(count):
        item, price = rng.choice(ITEMS)
        yield {
            "order_id": order_id,
            "customer": f"customer-{rng.randrange(customers):03d}",
            "item": item,
            "quantity": rng.randint(1, 5),
            "price": price,
            "coupon": "SPRING" if order_id % 9 == 0 else None,
        }


def produce_orders(bootstrap: str, registry: str, topic: str, orders: list[dict]) -> None:
    """Produce ``orders`` to ``topic`` keyed by customer, framed for the registry."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for name in (topic, f"{topic}-by-customer"):
        if name not in admin.list_topics(timeout=30).topics:
            new = NewTopic(name, num_partitions=PARTITIONS, replication_factor=1)
            admin.create_topics([new])[name].result(timeout=30)
    serialize = AvroSerializer(SchemaRegistryClient({"url": registry}), json.dumps(ORDER_SCHEMA))
    context = SerializationContext(topic, MessageField.VALUE)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for order in orders:
        producer.produce(topic, serialize(order, context), order["customer"].encode())
        producer.poll(0)
    if producer.flush(60):
        raise RuntimeError(f"the orders were not all delivered to {topic}")


def customer_totals(orders: DataFrame) -> DataFrame:
    """Total each customer's orders; shaped as the sink's columns (``key``, ``value``).

    The totals are non-null by construction (a count, sums made 0 when empty), as the
    output schema's fields are.
    """
    totals = orders.groupBy(F.col("value.customer").alias("customer")).agg(
        F.count(F.lit(1)).alias("orders"),
        F.coalesce(F.sum("value.quantity"), F.lit(0)).cast("long").alias("quantity"),
        F.coalesce(F.sum(F.col("value.quantity") * F.col("value.price")), F.lit(0.0)).alias(
            "revenue"
        ),
    )
    return totals.select(
        F.col("customer").alias("key"),
        F.struct("customer", "orders", "quantity", "revenue").alias("value"),
    )


def run_pipeline(
    spark: SparkSession,
    bootstrap: str,
    registry: str,
    source: str,
    target: str,
    checkpoint: Path,
    per_batch: int,
) -> int:
    """Run the query to the end of ``source`` (``Trigger.AvailableNow``); return its batches."""
    orders = (
        spark.readStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(per_batch))
        .option("valueFormat", "avro")
        .option("schema.registry.url", registry)
        .load()
    )
    query = (
        customer_totals(orders)
        .writeStream.format("kafka-rescalable")
        .outputMode("update")
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
    return sum(1 for progress in query.recentProgress if progress.numInputRows > 0)


def read_updates(spark: SparkSession, bootstrap: str, registry: str, topic: str) -> list:
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
        .orderBy("partition", "offset")
        .collect()
    )


def check_updates(updates: list, orders: list[dict]) -> tuple[bool, bool]:
    """Say whether every update was written once, and whether the last totals are right.

    A customer's updates come in the order they were written (one key, one partition), and
    each counts more orders than the one before: a repeated update is a batch written twice.
    """
    expected: dict[str, tuple[int, int, float]] = {}
    for order in orders:
        count, quantity, revenue = expected.get(order["customer"], (0, 0, 0.0))
        expected[order["customer"]] = (
            count + 1,
            quantity + order["quantity"],
            revenue + order["quantity"] * order["price"],
        )
    last: dict[str, tuple[int, int, float]] = {}
    once = True
    for row in updates:
        total = (row.value.orders, row.value.quantity, row.value.revenue)
        previous = last.get(row.key)
        once = (
            once and row.key == row.value.customer and (previous is None or previous[0] < total[0])
        )
        last[row.key] = total
    match = last.keys() == expected.keys() and all(
        last[c][:2] == expected[c][:2] and abs(last[c][2] - expected[c][2]) < 1e-6 for c in expected
    )
    return once, match


@contextlib.contextmanager
def registry_for(url: str | None) -> Iterator[str]:
    """Yield the given registry's URL, or a local registry's for the length of the run."""
    if url:
        yield url
        return
    from connector.testing.schema_registry import LocalSchemaRegistry

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
    parser.add_argument("--customers", type=int, default=40)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--topic", default="orders")
    args = parser.parse_args(argv)
    target = f"{args.topic}-by-customer"

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.bootstrap is None and args.output.exists():
        shutil.rmtree(args.output)  # a new embedded broker: the old checkpoint means nothing
    with kafka_for(args.bootstrap) as bootstrap, registry_for(args.registry) as registry:
        orders = list(sample_orders(args.orders, args.customers))
        produce_orders(bootstrap, registry, args.topic, orders)
        customers = len({order["customer"] for order in orders})
        print(
            f"Produced {len(orders)} Avro orders of {customers} customers to {args.topic} on "
            f"{bootstrap} (subject {args.topic}-value)"
        )
        spark = example_session(args.master, "kafka-rescalable-avro-orders", PARTITIONS)
        try:
            per_batch = -(-len(orders) // args.batches)
            batches = run_pipeline(
                spark,
                bootstrap,
                registry,
                args.topic,
                target,
                args.output / "checkpoint",
                per_batch,
            )
            updates = read_updates(spark, bootstrap, registry, target)
        finally:
            spark.stop()
        print(
            f"Wrote {len(updates)} total updates to {target} in {batches} micro-batches "
            "(exactly-once, Avro)"
        )
        once, match = check_updates(updates, orders)
        print(
            f"Read back {len(updates)} updates, {'each once' if once else 'SOME TWICE'}; the "
            f"last totals of {customers} customers match the input: {match}"
        )
    return 0 if once and match else 1


if __name__ == "__main__":
    sys.exit(main())
