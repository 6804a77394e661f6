"""Protobuf records through the source: registry-framed and plain, against a real registry.

Records are written by confluent-kafka's own ``ProtobufSerializer`` (which registers the
message's file under ``<topic>-value`` and frames each record with the schema id and the
message's index path); each row must equal what a plain confluent-kafka consumer with
``ProtobufDeserializer`` decodes from the same record. The descriptor set the source reads is
the one ``protoc --include_imports --descriptor_set_out`` would write, made here from the same
file descriptors, so no ``protoc`` is needed.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    message_factory,
    text_format,
    timestamp_pb2,
)
from pyspark.sql import DataFrame, SparkSession

from integration_tests.kafka_helpers import Record, create_topic, produce, read_all
from integration_tests.spark_helpers import OUR_FORMAT, batch_read
from kafka_rescalable.formats.codec import WriterColumn
from kafka_rescalable.formats.options import (
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
)
from kafka_rescalable.formats.protobuf_codec import CODEC
from kafka_rescalable.formats.registry import registry_client

pytestmark = pytest.mark.integration

_FILES = (
    descriptor_pb2.FileDescriptorProto.FromString(timestamp_pb2.DESCRIPTOR.serialized_pb),
    text_format.Parse(
        (Path(__file__).parent / "protobuf_order.textproto").read_text(encoding="utf-8"),
        descriptor_pb2.FileDescriptorProto(),
    ),
)
_POOL = descriptor_pool.DescriptorPool()
for _file in _FILES:
    _POOL.Add(_file)
Order = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("shop.Order"))
Line = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("shop.Line"))
MESSAGE = "shop.Order"


@pytest.fixture
def descriptor_set(tmp_path: Path) -> str:
    path = tmp_path / "order.desc"
    path.write_bytes(descriptor_pb2.FileDescriptorSet(file=_FILES).SerializeToString())
    return str(path)


def _orders(count: int) -> list[Any]:
    """Orders that use every kind of field, and leave each unset in some records."""
    orders = []
    for i in range(count):
        order = Order(id=i, customer=f"cüstomer {i}", status=i % 3, tags={f"t{i % 4}": i})
        for n in range(i % 3):
            order.lines.append(Line(sku=f"sku-{i}-{n}", qty=n, options=["gift"] * n))
        if i % 4:
            order.ship_to.city, order.ship_to.zip = f"city {i}", f"{10000 + i}"
        if i % 3 == 1:
            order.card = f"4111-{i}"
        elif i % 3 == 2:
            order.voucher.code, order.voucher.percent = f"V{i}", i
        if i % 5 == 0:
            order.placed_at.seconds, order.placed_at.nanos = 1_700_000_000 + i, i * 1000
        if i % 2:
            order.note = "" if i % 4 == 1 else f"note {i}"
        orders.append(order)
    return orders


def _local(timestamp: Any) -> datetime:
    """Give a Timestamp as PySpark's ``collect`` gives a TIMESTAMP: naive, in local time."""
    return timestamp.ToDatetime(tzinfo=timezone.utc).astimezone().replace(tzinfo=None)


def _expected_row(order: Any) -> dict[str, Any]:
    """Give the row the source must read for ``order``, from the deserialized message."""
    payment = order.WhichOneof("payment")
    return {
        "id": order.id,
        "customer": order.customer,
        "lines": [
            {"sku": line.sku, "qty": line.qty, "options": list(line.options)}
            for line in order.lines
        ],
        "ship_to": (
            {"city": order.ship_to.city, "zip": order.ship_to.zip}
            if order.HasField("ship_to")
            else None
        ),
        "card": order.card if payment == "card" else None,
        "voucher": (
            {"code": order.voucher.code, "percent": order.voucher.percent}
            if payment == "voucher"
            else None
        ),
        "tags": dict(order.tags),
        "status": Order.Status.Name(order.status),
        "placed_at": _local(order.placed_at) if order.HasField("placed_at") else None,
        "note": order.note if order.HasField("note") else None,
    }


def _read_orders(
    spark: SparkSession, bootstrap: str, topic: str, descriptor_set: str, **options: str
) -> DataFrame:
    """Read ``topic`` in batch through our source, values decoded as ``shop.Order``."""
    return batch_read(
        spark,
        OUR_FORMAT,
        bootstrap,
        topic,
        valueFormat="protobuf",
        valueSchema=descriptor_set,
        valueMessage=MESSAGE,
        **options,
    )


def test_registry_framed_orders_read_as_the_librarys_deserializer_decodes_them(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_name: str,
    schema_registry_url: str,
    descriptor_set: str,
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    client = SchemaRegistryClient({"url": schema_registry_url})
    context = SerializationContext(topic_name, MessageField.VALUE)
    serialize = ProtobufSerializer(Order, client, {"use.deprecated.format": False})
    records = [
        Record(key=str(order.id).encode(), value=serialize(order, context)) for order in _orders(24)
    ]
    produce(kafka_bootstrap, topic_name, records)

    frame = _read_orders(
        spark,
        kafka_bootstrap,
        topic_name,
        descriptor_set,
        **{"schema.registry.url": schema_registry_url},
    )
    assert dict(frame.dtypes)["value"].startswith("struct<id:bigint,customer:string,lines:array<")
    rows = {
        (row.partition, row.offset): row.value.asDict(recursive=True) for row in frame.collect()
    }

    deserialize = ProtobufDeserializer(Order, {"use.deprecated.format": False}, client)
    expected = {
        (record.partition, record.offset): _expected_row(deserialize(record.value, context))
        for record in read_all(kafka_bootstrap, topic_name)
    }
    assert len(expected) == 24
    assert rows == expected


def test_plain_orders_read_and_a_malformed_one_is_kept_with_its_reason(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, descriptor_set: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    orders = _orders(6)
    payloads = [order.SerializeToString() for order in orders]
    payloads.insert(3, b"\x0a\xff\x01 cut short")  # a length beyond the payload's end
    produce(kafka_bootstrap, topic_name, [Record(value=payload) for payload in payloads])

    rows = _read_orders(
        spark, kafka_bootstrap, topic_name, descriptor_set, mode="PERMISSIVE"
    ).collect()

    by_offset = {row.offset: row for row in rows}
    assert sorted(by_offset) == list(range(7))
    bad = by_offset.pop(3)
    assert bad.value is None
    assert bad.decodeError.startswith("value: not a valid shop.Order message")
    assert all(row.decodeError is None for row in by_offset.values())
    decoded = {offset: row.value.asDict(recursive=True) for offset, row in by_offset.items()}
    assert decoded == {
        offset: _expected_row(order)
        for offset, order in zip([0, 1, 2, 4, 5, 6], orders, strict=True)
    }


def test_the_sink_encoder_registers_the_file_and_frames_what_the_deserializer_reads(
    kafka_bootstrap: str, topic_name: str, schema_registry_url: str, descriptor_set: str
) -> None:
    payload = PayloadOptions(
        "value", PayloadFormat.PROTOBUF, descriptor_set, MESSAGE, framing=Framing.CONFLUENT
    )
    registry = RegistrySettings((("url", schema_registry_url),))
    reader = CODEC.resolve(payload, registry, [topic_name])
    encode = CODEC.encoder(WriterColumn(payload, reader.spark_type, registry, topic_name))
    rows = [
        {"id": 1, "customer": "ann", "lines": [{"sku": "a", "qty": 2, "options": ["x"]}]},
        {"id": 2, "voucher": {"code": "V", "percent": 5}, "tags": [("k", 3)], "status": "PAID"},
        {
            "id": 3,
            "card": "4111",
            "note": "",
            "placed_at": datetime(2025, 1, 2, tzinfo=timezone.utc),
        },
    ]
    framed = [encode(row) for row in rows]

    latest = registry_client(registry).get_latest_version(f"{topic_name}-value")
    assert {int.from_bytes(data[1:5], "big") for data in framed} == {latest.schema_id}
    client = SchemaRegistryClient({"url": schema_registry_url})
    context = SerializationContext(topic_name, MessageField.VALUE)
    deserialize = ProtobufDeserializer(Order, {"use.deprecated.format": False}, client)
    decoded = [_expected_row(deserialize(data, context)) for data in framed]
    assert [(d["id"], d["lines"], d["voucher"], d["tags"], d["status"]) for d in decoded] == [
        (1, [{"sku": "a", "qty": 2, "options": ["x"]}], None, {}, "NEW"),
        (2, [], {"code": "V", "percent": 5}, {"k": 3}, "PAID"),
        (3, [], None, {}, "NEW"),
    ]
    assert (decoded[2]["card"], decoded[2]["note"]) == ("4111", "")
    assert decoded[2]["placed_at"] == _local(
        timestamp_pb2.Timestamp(seconds=int(datetime(2025, 1, 2, tzinfo=timezone.utc).timestamp()))
    )
    decode = CODEC.decoder(reader, reader.spark_type, registry)
    assert [decode(data)["id"] for data in framed] == [1, 2, 3]
