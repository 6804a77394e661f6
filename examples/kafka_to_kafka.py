"""Kafka -> Spark -> Kafka: raw JSON events in, parsed and enriched events out, exactly once.

Usage::

    python examples/kafka_to_kafka.py                    # embedded broker, local[2]
    python examples/kafka_to_kafka.py --bootstrap host:9092 --master spark://host:7077

With no ``--bootstrap`` it starts the embedded Apache Kafka broker and produces the sample
events of ``etl_pipeline.py`` (some malformed) into ``shop-events``. The streaming query reads
them with ``kafka-rescalable``, parses the JSON, drops malformed events, enriches each event
with its user's tier (a join with a small static table) and writes the result as JSON to
``shop-events-enriched``, keyed by user, with ``deliveryGuarantee=exactly-once``. A
``read_committed`` consumer then reads the output topic back.

Expected output (numbers depend on ``--events``)::

    Produced 2040 events (20 malformed, 40 duplicates) to shop-events on 127.0.0.1:PORT
    Wrote 2020 enriched events to shop-events-enriched (exactly-once, 4 partitions)
    Read back 2020 events with read_committed; tiers: {'gold': ..., 'silver': ..., ...}
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

from etl_pipeline import (
    ACTIONS,
    EVENT_SCHEMA,
    example_session,
    kafka_for,
    produce_sample_events,
)
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

OUTPUT_PARTITIONS = 4


def enrich(raw: DataFrame, users: DataFrame) -> DataFrame:
    """Parse, drop malformed events, add the user's tier; shape as Kafka sink columns."""
    events = raw.select(F.from_json(F.col("value").cast("string"), EVENT_SCHEMA).alias("e"))
    valid = events.where(F.col("e.event_id").isNotNull() & F.col("e.action").isin(*ACTIONS))
    enriched = valid.select("e.*").join(F.broadcast(users), "user", "left").fillna(
        "standard", ["tier"]
    )
    return enriched.select(
        F.col("user").alias("key"),
        F.to_json(F.struct("event_id", "user", "tier", "action", "amount", "event_time")).alias(
            "value"
        ),
    )


def run_pipeline(
    spark: SparkSession, bootstrap: str, source: str, target: str, checkpoint: Path
) -> None:
    """Run the query to the end of what is in ``source`` (``Trigger.AvailableNow``)."""
    users = spark.createDataFrame(
        [(f"user-{n}", "gold" if n % 10 == 0 else "silver") for n in range(0, 50, 2)],
        "user STRING, tier STRING",
    )
    raw = (
        spark.readStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
    )
    query = (
        enrich(raw, users)
        .writeStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", target)
        .option("deliveryGuarantee", "exactly-once")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(f"the query failed: {query.exception()}")


def read_committed(bootstrap: str, topic: str) -> list[dict]:
    """Read every committed record of ``topic`` as a ``read_committed`` consumer would."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "kafka-to-kafka-example",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(OUTPUT_PARTITIONS)])
    records, ended = [], set()
    while len(ended) < OUTPUT_PARTITIONS:
        message = consumer.poll(1.0)
        if message is None:
            continue
        if message.error() is not None:
            if message.error().code() != KafkaError._PARTITION_EOF:
                raise RuntimeError(str(message.error()))
            ended.add(message.partition())
            continue
        records.append(json.loads(message.value()))
    consumer.close()
    return records


def main(argv: list[str] | None = None) -> int:
    """Produce sample events, run the pipeline once and read its output back."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="Kafka brokers; default: start an embedded broker")
    parser.add_argument("--master", default=os.environ.get("SPARK_MASTER", "local[2]"))
    parser.add_argument("--output", type=Path, default=Path("output/kafka_to_kafka"))
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--topic", default="shop-events")
    args = parser.parse_args(argv)
    target = f"{args.topic}-enriched"

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.bootstrap is None and args.output.exists():
        shutil.rmtree(args.output)  # a new embedded broker: the old checkpoint means nothing
    with kafka_for(args.bootstrap) as bootstrap:
        from confluent_kafka.admin import AdminClient, NewTopic

        sent = produce_sample_events(bootstrap, args.topic, args.events)
        print(
            f"Produced {sent} events ({args.events // 100} malformed, "
            f"{sent - args.events} duplicates) to {args.topic} on {bootstrap}"
        )
        admin = AdminClient({"bootstrap.servers": bootstrap})
        if target not in admin.list_topics(timeout=30).topics:
            new = NewTopic(target, num_partitions=OUTPUT_PARTITIONS, replication_factor=1)
            admin.create_topics([new])[target].result(timeout=30)
        spark = example_session(args.master, "kafka-rescalable-kafka-to-kafka", 4)
        try:
            run_pipeline(spark, bootstrap, args.topic, target, args.output / "checkpoint")
        finally:
            spark.stop()
        records = read_committed(bootstrap, target)
        print(
            f"Wrote {len(records)} enriched events to {target} "
            f"(exactly-once, {OUTPUT_PARTITIONS} partitions)"
        )
        tiers = dict(sorted(Counter(r["tier"] for r in records).items()))
        print(f"Read back {len(records)} events with read_committed; tiers: {tiers}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
