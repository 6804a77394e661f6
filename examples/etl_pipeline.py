"""ETL pipeline: raw JSON events in Kafka -> parsed, cleaned rows in Parquet.

Usage::

    python examples/etl_pipeline.py                      # embedded broker, local[2]
    python examples/etl_pipeline.py --bootstrap host:9092 --master spark://host:7077

With no ``--bootstrap`` it starts the embedded Apache Kafka broker
(``kafka_rescalable.testing.local_kafka``), creates the topic ``shop-events`` with 4 partitions and
produces sample events into it, a few of them malformed or duplicated on purpose. The streaming
query then reads the topic with ``kafka-rescalable`` (``Trigger.AvailableNow``), parses the
JSON, drops malformed events and duplicates, and appends the clean rows to Parquet with a
checkpoint, so a second run with the same ``--output`` and ``--bootstrap`` only processes new
events. With the embedded broker, which is new on every run, an old ``--output`` folder is
deleted first.

Expected output (numbers depend on ``--events``)::

    Produced 2040 events (20 malformed, 40 duplicates) to shop-events on 127.0.0.1:PORT
    Wrote 1980 clean events to output/etl/events (checkpoint: output/etl/checkpoint)
    Source offsets (slots document): {"version": 4, "slots": 4, "topics": {"shop-events": {"id": ...
    +--------+-----+------------+
    |action  |count|total_amount|
    ...
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

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StringType, StructField, StructType, TimestampType

from kafka_rescalable.testing.local_kafka import LocalKafka

DEFAULT_TOPIC = "shop-events"
ACTIONS = ("view", "add_to_cart", "purchase", "refund")

EVENT_SCHEMA = StructType(
    [
        StructField("event_id", StringType()),
        StructField("user", StringType()),
        StructField("action", StringType()),
        StructField("amount", DoubleType()),
        StructField("event_time", TimestampType()),
    ]
)


def sample_events(count: int, seed: int = 7) -> Iterator[tuple[bytes, bytes]]:
    """Yield ``(key, value)`` pairs: JSON events keyed by user, some broken on purpose."""
    rng = random.Random(seed)
    for number in range(count):
        user = f"user-{rng.randrange(50)}"
        if number % 100 == 99:
            yield user.encode(), b"{not json"
            continue
        event = {
            "event_id": f"e-{number:07d}",
            "user": user,
            "action": rng.choice(ACTIONS),
            "amount": round(rng.uniform(1, 200), 2),
            "event_time": f"2026-11-21T10:{number // 60 % 60:02d}:{number % 60:02d}Z",
        }
        payload = json.dumps(event).encode()
        yield user.encode(), payload
        if number % 50 == 0:
            yield user.encode(), payload  # an at-least-once producer's retry


def produce_sample_events(bootstrap: str, topic: str, count: int, partitions: int = 4) -> int:
    """Create the topic if needed and produce the sample events; returns the records sent."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    if topic not in admin.list_topics(timeout=30).topics:
        new_topic = NewTopic(topic, num_partitions=partitions, replication_factor=1)
        admin.create_topics([new_topic])[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    sent = 0
    for key, value in sample_events(count):
        producer.produce(topic, key=key, value=value)
        producer.poll(0)
        sent += 1
    producer.flush(30)
    return sent


def clean_events(raw: DataFrame) -> DataFrame:
    """Parse, validate and deduplicate: the transformation under test."""
    parsed = raw.select(
        F.from_json(F.col("value").cast("string"), EVENT_SCHEMA).alias("event"),
        F.col("partition"),
        F.col("offset"),
        F.col("timestamp").alias("kafka_timestamp"),
    )
    valid = parsed.where(
        F.col("event.event_id").isNotNull()
        & F.col("event.action").isin(*ACTIONS)
        & (F.col("event.amount") >= 0)
    )
    return (
        valid.select("event.*", "partition", "offset", "kafka_timestamp")
        .withWatermark("kafka_timestamp", "10 minutes")
        .dropDuplicatesWithinWatermark(["event_id"])
    )


def run_pipeline(spark: SparkSession, bootstrap: str, topic: str, output: Path) -> int:
    """Run the query to the end of what is in the topic; returns the clean rows on disk."""
    raw = (
        spark.readStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    query = (
        clean_events(raw)
        .writeStream.format("parquet")
        .option("path", str(output / "events"))
        .option("checkpointLocation", str(output / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(f"the query failed: {query.exception()}")
    return spark.read.parquet(str(output / "events")).count()


def last_offsets(checkpoint: Path) -> str:
    """Return the source's last-batch offset document, as Spark wrote it in the checkpoint."""
    batches = [p for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()]
    latest = max(batches, key=lambda p: int(p.name))
    return latest.read_text().splitlines()[-1]


def example_session(master: str, name: str, shuffle_partitions: int) -> SparkSession:
    """Return the session every example runs in, quiet, in UTC.

    Python tasks reach the JVM by a Unix socket rather than loopback TCP, so a running
    query's micro-batches take about 40 ms less each (see the README on latency).
    """
    spark = (
        SparkSession.builder.master(master)
        .appName(name)
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.python.unix.domain.socket.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    return spark


@contextlib.contextmanager
def kafka_for(bootstrap: str | None) -> Iterator[str]:
    """Yield the given brokers, or an embedded broker for the length of the run."""
    if bootstrap:
        yield bootstrap
        return
    with LocalKafka() as kafka:
        yield kafka.bootstrap_servers


def main(argv: list[str] | None = None) -> int:
    """Produce sample events, run the pipeline once and print what it wrote."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="Kafka brokers; default: start an embedded broker")
    parser.add_argument("--master", default=os.environ.get("SPARK_MASTER", "local[2]"))
    parser.add_argument("--output", type=Path, default=Path("output/etl"))
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--topic", default=DEFAULT_TOPIC)
    args = parser.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.bootstrap is None and args.output.exists():
        # A new embedded broker holds a new topic: the old checkpoint's offsets mean nothing.
        shutil.rmtree(args.output)
    with kafka_for(args.bootstrap) as bootstrap:
        sent = produce_sample_events(bootstrap, args.topic, args.events)
        malformed = args.events // 100
        duplicates = sent - args.events
        print(f"Produced {sent} events ({malformed} malformed, {duplicates} duplicates) "
              f"to {args.topic} on {bootstrap}")
        spark = example_session(args.master, "kafka-rescalable-etl", 4)
        try:
            written = run_pipeline(spark, bootstrap, args.topic, args.output)
            print(f"Wrote {written} clean events to {args.output / 'events'} "
                  f"(checkpoint: {args.output / 'checkpoint'})")
            print(f"Source offsets (slots document): {last_offsets(args.output / 'checkpoint')}")
            events = spark.read.parquet(str(args.output / "events"))
            events.groupBy("action").agg(
                F.count("*").alias("count"), F.round(F.sum("amount"), 2).alias("total_amount")
            ).orderBy("action").show(truncate=False)
        finally:
            spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
