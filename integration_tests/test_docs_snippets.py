"""The documentation's code runs: each docs/snippets file against the real broker and Spark.

Each test fills a topic, runs one snippet file in this process (the suite's one Spark session,
no new one per snippet) and checks what the page says the code does. The snippets that need a
secured broker, a broker of their own or a Spark Connect session run in the modules that have
them: test_security.py, test_local_kafka.py, test_connect.py.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pyarrow.parquet as pq
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    message_factory,
    text_format,
    timestamp_pb2,
)
from pyspark.sql import SparkSession

from integration_tests.docs_snippets import run_snippet
from integration_tests.kafka_helpers import Record, create_topic, produce, read_all
from integration_tests.spark_helpers import offset_log, slot_count

_PROTO = Path(__file__).resolve().parent / "protobuf_order.textproto"


def _events(count: int, partitions: int = 2) -> list[Record]:
    return [
        Record(
            value=json.dumps({"user": f"u{i % 5}", "action": "view", "n": i}).encode(),
            partition=i % partitions,
        )
        for i in range(count)
    ]


def _env(bootstrap: str, topic: str, workdir: Path, **more: str) -> dict[str, str]:
    return {
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "DOCS_TOPIC": topic,
        "DOCS_WORKDIR": str(workdir),
        **more,
    }


def test_quickstart_reads_queries_and_writes(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    out_topic = f"{topic_name}-out"
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    create_topic(kafka_bootstrap, out_topic, partitions=1)
    produce(kafka_bootstrap, topic_name, _events(40))

    found = run_snippet(
        "quickstart.py", _env(kafka_bootstrap, topic_name, tmp_path, DOCS_OUT_TOPIC=out_topic)
    )

    assert found["query"].exception() is None
    assert pq.read_table(tmp_path / "events").num_rows == 40
    assert [tuple(row) for row in found["per_partition"]] == [(0, 20), (1, 20)]
    assert sorted(tuple(row) for row in found["sql_rows"]) == [(0, 20), (1, 20)]
    written = read_all(kafka_bootstrap, out_topic)
    assert sorted((r.key, json.loads(r.value)["item"]) for r in written) == [
        (b"alice", "book"),
        (b"bob", "pen"),
    ]


def test_typed_json_decodes_and_explains_what_does_not(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    good = {"id": 7, "tags": ["a"], "at": "2024-01-02T03:04:05Z",
            "customer": {"email": "a@example.com", "zip": 12345}, "amount": 12.5}
    produce(kafka_bootstrap, topic_name, [Record(json.dumps(good).encode()), Record(b"{not json")])

    rows = run_snippet("typed_json.py", _env(kafka_bootstrap, topic_name, tmp_path))["rows"]

    assert [(r.id, r.email, str(r.amount), r.decodeError) for r in rows[:1]] == [
        (7, "a@example.com", "12.50", None)
    ]
    assert rows[1].id is None and rows[1].decodeError


def test_dead_letters_leave_the_output_for_their_topic(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    dead_topic = f"{topic_name}-dead"
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    create_topic(kafka_bootstrap, dead_topic, partitions=1)
    values = [b'{"id": 1, "amount": 2.5}', b"{not json", b'{"id": 3, "amount": 1}', b"[]"]
    positions = produce(
        kafka_bootstrap,
        topic_name,
        [
            Record(value, headers=(("trace", b"t%d" % i),), partition=i % 2)
            for i, value in enumerate(values)
        ],
    )

    found = run_snippet(
        "dead_letters.py", _env(kafka_bootstrap, topic_name, tmp_path, DOCS_DEAD_TOPIC=dead_topic)
    )

    assert sorted(tuple(row) for row in found["decoded"]) == [(1, 2.5), (3, 1.0)]
    letters = sorted((row.raw, int(row.source_offset), row.reason) for row in found["rows"])
    assert [(raw, offset) for raw, offset, _ in letters] == [
        ("[]", positions[3][1]),
        ("{not json", positions[1][1]),
    ]
    assert all(reason.startswith("value: ") for _, _, reason in letters)


def test_typed_avro_reads_registry_framed_orders_and_writes_avro(
    spark: SparkSession,
    kafka_bootstrap: str,
    schema_registry_url: str,
    topic_name: str,
    tmp_path: Path,
) -> None:
    out_topic = f"{topic_name}-totals"
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    create_topic(kafka_bootstrap, out_topic, partitions=1)
    schema = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "amount", "type": "double"},
    ]}
    serializer = AvroSerializer(SchemaRegistryClient({"url": schema_registry_url}),
                                json.dumps(schema))
    context = SerializationContext(topic_name, MessageField.VALUE)
    orders = [{"id": i, "customer": f"c{i % 3}", "amount": float(i)} for i in range(12)]
    produce(kafka_bootstrap, topic_name, [Record(serializer(o, context)) for o in orders])

    found = run_snippet(
        "typed_avro.py",
        _env(kafka_bootstrap, topic_name, tmp_path, DOCS_OUT_TOPIC=out_topic,
             SCHEMA_REGISTRY_URL=schema_registry_url),
    )

    assert sorted(tuple(row) for row in found["rows"]) == sorted(
        (o["id"], o["customer"], o["amount"]) for o in orders
    )
    totals = (
        spark.read.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", out_topic)
        .option("keyFormat", "string")
        .option("valueFormat", "avro")
        .option("schema.registry.url", schema_registry_url)
        .load()
        .selectExpr("key", "value.orders", "value.amount")
        .collect()
    )
    assert sorted(tuple(row) for row in totals) == [
        ("c0", 4, 18.0), ("c1", 4, 22.0), ("c2", 4, 26.0)
    ]


def test_typed_protobuf_reads_with_a_descriptor_set(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    files = (
        descriptor_pb2.FileDescriptorProto.FromString(timestamp_pb2.DESCRIPTOR.serialized_pb),
        text_format.Parse(_PROTO.read_text(encoding="utf-8"), descriptor_pb2.FileDescriptorProto()),
    )
    pool = descriptor_pool.DescriptorPool()
    for file in files:
        pool.Add(file)
    order_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))
    descriptor_set = tmp_path / "order.desc"
    descriptor_set.write_bytes(descriptor_pb2.FileDescriptorSet(file=files).SerializeToString())
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    orders = [order_class(id=i, customer=f"c{i}", status=i % 2) for i in range(3)]
    orders[2].lines.add(sku="sku-1", qty=2)
    produce(kafka_bootstrap, topic_name, [Record(o.SerializeToString()) for o in orders])

    found = run_snippet(
        "typed_protobuf.py",
        _env(kafka_bootstrap, topic_name, tmp_path, DOCS_DESCRIPTOR_SET=str(descriptor_set)),
    )

    assert [(r.id, r.customer, r.status, len(r.lines)) for r in found["rows"]] == [
        (0, "c0", "NEW", 0), (1, "c1", "PAID", 0), (2, "c2", "NEW", 1)
    ]
    # docs/reference/types.md: ours declares arrays and maps able to hold nulls (DDL).
    order = found["orders"].schema["value"].dataType
    assert order["lines"].dataType.containsNull
    assert order["tags"].dataType.valueContainsNull


def test_exactly_once_writes_every_record_once(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    out_topic = f"{topic_name}-out"
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    create_topic(kafka_bootstrap, out_topic, partitions=2)
    produce(kafka_bootstrap, topic_name, _events(30))

    found = run_snippet(
        "exactly_once.py",
        _env(kafka_bootstrap, topic_name, tmp_path, DOCS_OUT_TOPIC=out_topic),
    )

    assert found["written_count"] == 30
    written = read_all(kafka_bootstrap, out_topic, isolation_level="read_committed")
    assert sorted(json.loads(r.value.lower())["n"] for r in written) == list(range(30))
    assert {r.key for r in written} == {f"u{i}".encode() for i in range(5)}


def test_rescaling_restarts_the_checkpoint_at_another_parallelism(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=6)
    positions = produce(kafka_bootstrap, topic_name, _events(60, partitions=6))

    found = run_snippet("rescaling.py", _env(kafka_bootstrap, topic_name, tmp_path))

    documents = offset_log(Path(found["checkpoint"]))
    slots = [slot_count(documents[batch]) for batch in sorted(documents)]
    assert slots[0] == 2 and slots[-1] == 5, slots
    read = pq.read_table(tmp_path / "rescaled").select(["partition", "offset"]).to_pylist()
    assert Counter((r["partition"], r["offset"]) for r in read) == Counter(
        [*positions, *((p, 10 + n) for p in range(6) for n in range(5))]
    )
    assert "slot 4" in found["shown"], found["shown"]


def test_event_time_alignment_reads_every_reading(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    start = int(datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp() * 1000)
    # Partition 0: two minutes of readings; partition 1: the first minute only.
    readings = [Record(b"r", partition=0, timestamp_ms=start + s * 1000) for s in range(0, 120, 4)]
    readings += [Record(b"r", partition=1, timestamp_ms=start + s * 1000) for s in range(0, 60, 4)]
    produce(kafka_bootstrap, topic_name, readings)

    query = run_snippet("event_time.py", _env(kafka_bootstrap, topic_name, tmp_path))["query"]

    assert query.exception() is None
    assert sum(progress["numInputRows"] for progress in query.recentProgress) == len(readings)
    # Every minute the watermark closed is written whole: none of partition 1's readings
    # was dropped as late, though partition 0 ran a minute ahead of it.
    expected = {0: 30, 1: 15}
    windows = pq.read_table(tmp_path / "per-minute").to_pylist()
    counts = {(w["window"]["start"].minute): w["count"] for w in windows}
    assert counts and counts == {minute: expected[minute] for minute in counts}, counts


def test_metrics_publishes_the_lag_of_the_query(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(kafka_bootstrap, topic_name, _events(10))

    scraped = run_snippet("metrics.py", _env(kafka_bootstrap, topic_name, tmp_path))["scraped"]

    assert "kafka_rescalable_topic_backlog_records{" in scraped
    assert f'topic="{topic_name}"' in scraped


def test_moving_continues_the_builtin_query_and_starts_from_a_group(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    group = f"{topic_name}-group"
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(kafka_bootstrap, topic_name, _events(20))
    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": group})
    try:
        committed = [KafkaTopicPartition(topic_name, p, 8) for p in (0, 1)]
        consumer.commit(offsets=committed, asynchronous=False)
    finally:
        consumer.close()

    found = run_snippet("moving.py", _env(kafka_bootstrap, topic_name, tmp_path, DOCS_GROUP=group))

    assert json.loads(found["continued"]) == {topic_name: {"0": 10, "1": 10}}
    continued = pq.read_table(tmp_path / "events-rescalable").to_pylist()
    assert sorted(row["value"] for row in continued) == sorted(b"new-%d" % n for n in range(10))
    from_group = pq.read_table(tmp_path / "from-group").select(["partition", "offset"])
    assert sorted((r["partition"], r["offset"]) for r in from_group.to_pylist()) == [
        (p, o) for p in (0, 1) for o in range(8, 15)
    ]


def test_errors_are_caught_inside_spark_and_in_process(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)

    found = run_snippet("errors.py", _env(kafka_bootstrap, topic_name, tmp_path))

    assert "Did you mean 'startingOffsets'?" in found["message"]
    assert str(found["port"]) in str(found["endpoint_error"])
