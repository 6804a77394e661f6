"""The local schema registry: confluent-kafka's own serializers work against it, end to end.

Typed records are Confluent-framed: a zero byte, the schema's 4-byte id, then the payload. These
tests register schemas through confluent-kafka's ``SchemaRegistryClient`` and serializers,
check the framing, decode by the id alone, and ask for a subject's latest version, against the
registry of the ``schema_registry_url`` fixture: the protocol the source's decoding will rely
on. The tests of schema references (an Avro subject using another's record, a Protobuf file
importing another) run that protocol through our source and sink. The last tests check the
tool itself: a cached build needs no Maven, and a taken port fails clearly.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_type

from integration_tests.kafka_helpers import Record, create_topic, produce, read_all
from integration_tests.spark_helpers import OUR_FORMAT, batch_read
from kafka_rescalable import SchemaReferenceError
from kafka_rescalable.formats.avro_codec import CODEC as AVRO
from kafka_rescalable.formats.options import (
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
)
from kafka_rescalable.testing._registry.build import registry_app
from kafka_rescalable.testing.jars import find_java
from kafka_rescalable.testing.schema_registry import (
    LocalSchemaRegistry,
    SchemaRegistryStartError,
)

_ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "test.registry",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
}
# A backward-compatible change: a new field with a default, so old records still decode.
_ORDER_V2 = {
    **_ORDER_V1,
    "fields": [*_ORDER_V1["fields"], {"name": "note", "type": "string", "default": "none"}],
}
_CLICK_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Click",
    "type": "object",
    "properties": {"user": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["user", "count"],
}


def _frame_id(data: bytes) -> int:
    """Return the schema id of a Confluent-framed value, after checking its magic byte."""
    assert data[0] == 0, f"magic byte is {data[0]}, not 0"
    return int.from_bytes(data[1:5], "big")


def _payment_class(topic: str) -> type:
    """Build a protobuf message class at run time, as protoc would, without protoc."""
    file_proto = descriptor_pb2.FileDescriptorProto(
        name=f"{topic}.proto", package="test.registry", syntax="proto3"
    )
    message = file_proto.message_type.add(name="Payment")
    for number, (name, kind) in enumerate(
        [
            ("id", descriptor_pb2.FieldDescriptorProto.TYPE_INT64),
            ("amount", descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE),
        ],
        start=1,
    ):
        message.field.add(
            name=name,
            number=number,
            type=kind,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("test.registry.Payment"))


def test_avro_records_round_trip_and_old_ones_decode_after_a_new_version(
    schema_registry_url: str, topic_name: str
) -> None:
    client = SchemaRegistryClient({"url": schema_registry_url})
    context = SerializationContext(topic_name, MessageField.VALUE)
    subject = f"{topic_name}-value"

    old = AvroSerializer(client, json.dumps(_ORDER_V1))({"id": 7, "item": "tea"}, context)
    old_id = _frame_id(old)
    registered = client.get_schema(old_id)
    assert registered.schema_type == "AVRO"
    assert json.loads(registered.schema_str) == _ORDER_V1
    latest = client.get_latest_version(subject)
    assert (latest.schema_id, latest.version) == (old_id, 1)
    assert AvroDeserializer(client)(old, context) == {"id": 7, "item": "tea"}

    new = AvroSerializer(client, json.dumps(_ORDER_V2))(
        {"id": 8, "item": "jam", "note": "gift"}, context
    )
    new_id = _frame_id(new)
    assert new_id != old_id
    # A client keeps the first latest version it saw (no TTL by default): ask with a new one.
    latest = SchemaRegistryClient({"url": schema_registry_url}).get_latest_version(subject)
    assert (latest.schema_id, latest.version) == (new_id, 2)
    # The writer's schema comes from the registry by the id in the frame; the reader's fills in.
    reader = AvroDeserializer(client, json.dumps(_ORDER_V2))
    assert reader(old, context) == {"id": 7, "item": "tea", "note": "none"}
    assert reader(new, context) == {"id": 8, "item": "jam", "note": "gift"}


def test_protobuf_record_round_trips(schema_registry_url: str, topic_name: str) -> None:
    client = SchemaRegistryClient({"url": schema_registry_url})
    context = SerializationContext(topic_name, MessageField.VALUE)
    payment_class = _payment_class(topic_name)
    settings = {"use.deprecated.format": False}

    data = ProtobufSerializer(payment_class, client, settings)(
        payment_class(id=3, amount=2.5), context
    )
    schema_id = _frame_id(data)
    # The message-index list after the id: one zero byte for the file's first message.
    assert data[5] == 0
    assert client.get_schema(schema_id).schema_type == "PROTOBUF"
    latest = client.get_latest_version(f"{topic_name}-value")
    assert (latest.schema_id, latest.version) == (schema_id, 1)
    decoded = ProtobufDeserializer(payment_class, settings, client)(data, context)
    assert (decoded.id, decoded.amount) == (3, 2.5)


def test_json_record_round_trips_decoded_with_the_writer_schema_by_id(
    schema_registry_url: str, topic_name: str
) -> None:
    client = SchemaRegistryClient({"url": schema_registry_url})
    context = SerializationContext(topic_name, MessageField.VALUE)

    data = JSONSerializer(json.dumps(_CLICK_SCHEMA), client)({"user": "ann", "count": 2}, context)
    schema_id = _frame_id(data)
    registered = client.get_schema(schema_id)
    assert registered.schema_type == "JSON"
    assert json.loads(registered.schema_str) == _CLICK_SCHEMA
    latest = client.get_latest_version(f"{topic_name}-value")
    assert (latest.schema_id, latest.version) == (schema_id, 1)
    # No schema given: the deserializer validates with the one registered under the frame's id.
    decoded = JSONDeserializer(None, schema_registry_client=client)(data, context)
    assert decoded == {"user": "ann", "count": 2}


# --- schema references: subjects that use other subjects' types -----------------------------

_ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "shop.common",
    "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "int"}],
}
_ORDER_WITH_REFERENCE = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "ship_to", "type": "shop.common.Address"},
        {"name": "bill_to", "type": ["null", "shop.common.Address"], "default": None},
    ],
}
_REFERENCED = 12


def _referencing(client: SchemaRegistryClient, topic: str) -> Schema:
    """Register ``Address`` under a subject of its own; give ``Order``, which references it."""
    subject = f"{topic}-address"
    client.register_schema(subject, Schema(json.dumps(_ADDRESS), "AVRO"))
    version = client.get_latest_version(subject).version
    reference = SchemaReference("shop.common.Address", subject, version)
    return Schema(json.dumps(_ORDER_WITH_REFERENCE), "AVRO", [reference])


def _address_order(i: int) -> dict[str, Any]:
    bill = None if i % 3 else {"city": f"bill {i}", "zip": 2000 + i}
    return {"id": i, "ship_to": {"city": f"city {i}", "zip": 1000 + i}, "bill_to": bill}


def test_avro_references_are_followed_by_both_decoders_and_the_sink(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, schema_registry_url: str
) -> None:
    client = SchemaRegistryClient({"url": schema_registry_url})
    context = SerializationContext(topic_name, MessageField.VALUE)
    serializer = AvroSerializer(client, _referencing(client, topic_name))
    payloads = [serializer(_address_order(i), context) for i in range(_REFERENCED)]
    assert client.get_schema(_frame_id(payloads[0])).references  # the bytes reference Address
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    produce(kafka_bootstrap, topic_name, [Record(value=payload) for payload in payloads])
    registry = {"schema.registry.url": schema_registry_url}
    expected = {i: _address_order(i) for i in range(_REFERENCED)}

    # Spark's Python workers decode with the session's decoders (the native core in CI) ...
    frame = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, valueFormat="avro", **registry
    )
    assert {row.value.id: row.value.asDict(recursive=True) for row in frame.collect()} == expected
    # ... and each decoder on its own here: the native core must decode the batch itself,
    # not hand it to the slow path, and the fallback must read the same.
    settings = RegistrySettings((("url", schema_registry_url),))
    payload = PayloadOptions("value", PayloadFormat.AVRO, framing=Framing.CONFLUENT)
    reader = AVRO.resolve(payload, settings, [topic_name])
    assert reader.spark_type is not None
    arrow_type = to_arrow_type(reader.spark_type, timezone="UTC")
    column = AVRO.column_decoder(reader, reader.spark_type, arrow_type, settings)
    assert column is not None
    decoded = column(pa.array(payloads, pa.binary()))
    assert decoded is not None, "the native core handed the batch to the slow path"
    one_by_one = AVRO.decoder(reader, reader.spark_type, settings)
    assert decoded.to_pylist() == [one_by_one(data) for data in payloads] == list(expected.values())

    # The sink writes with the subject's latest version, references and all.
    target = f"{topic_name}-out"
    create_topic(kafka_bootstrap, target, partitions=1)
    (
        frame.select("value")
        .write.format(OUR_FORMAT)
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", target)
        .option("valueFormat", "avro")
        .option("valueSubject", f"{topic_name}-value")
        .option("schema.registry.auto.register.schemas", "false")
        .option("schema.registry.use.latest.version", "true")
        .options(**registry)
        .mode("append")
        .save()
    )
    written = [record.value for record in read_all(kafka_bootstrap, target)]
    assert {_frame_id(data) for data in written} == {_frame_id(payloads[0])}
    deserializer = AvroDeserializer(client)
    out = SerializationContext(target, MessageField.VALUE)
    assert sorted((deserializer(data, out) for data in written), key=lambda v: v["id"]) == list(
        expected.values()
    )


def test_a_reference_the_registry_lost_is_refused_naming_it(
    schema_registry_url: str, topic_name: str
) -> None:
    client = SchemaRegistryClient({"url": schema_registry_url})
    order = _referencing(client, topic_name)
    client.register_schema(f"{topic_name}-value", order)
    client.delete_subject(f"{topic_name}-address")
    client.delete_subject(f"{topic_name}-address", permanent=True)
    settings = RegistrySettings((("url", schema_registry_url),))
    payload = PayloadOptions("value", PayloadFormat.AVRO, framing=Framing.CONFLUENT)
    with pytest.raises(SchemaReferenceError) as refused:
        AVRO.resolve(payload, settings, [topic_name])
    message = str(refused.value)
    assert f"subject '{topic_name}-value' references subject '{topic_name}-address'" in message
    assert "'shop.common.Address'" in message
    assert "the registry does not have" in message
    assert refused.value.reference == (f"{topic_name}-address", 1)


def _money_and_order(topic: str) -> tuple[descriptor_pb2.FileDescriptorProto, ...]:
    """``shop/<topic>.proto``'s ``Order``, importing ``common/<topic>_money.proto``'s ``Money``."""
    field = descriptor_pb2.FieldDescriptorProto
    money = descriptor_pb2.FileDescriptorProto(
        name=f"common/{topic}_money.proto", package="common", syntax="proto3"
    )
    fields = money.message_type.add(name="Money").field
    fields.add(name="currency", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    fields.add(name="units", number=2, type=field.TYPE_INT64, label=field.LABEL_OPTIONAL)
    order = descriptor_pb2.FileDescriptorProto(
        name=f"shop/{topic}.proto", package="shop", syntax="proto3", dependency=[money.name]
    )
    fields = order.message_type.add(name="Order").field
    fields.add(name="id", number=1, type=field.TYPE_INT64, label=field.LABEL_OPTIONAL)
    fields.add(
        name="total",
        number=2,
        type=field.TYPE_MESSAGE,
        type_name=".common.Money",
        label=field.LABEL_OPTIONAL,
    )
    return money, order


def test_protobuf_imports_are_read_and_written_as_references(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_name: str,
    schema_registry_url: str,
    tmp_path: Path,
) -> None:
    files = _money_and_order(topic_name)
    pool = descriptor_pool.DescriptorPool()
    for file in files:
        pool.Add(file)
    order_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))
    client = SchemaRegistryClient({"url": schema_registry_url})
    settings = {"use.deprecated.format": False}
    context = SerializationContext(topic_name, MessageField.VALUE)
    serializer = ProtobufSerializer(order_class, client, settings)
    payloads = [
        serializer(order_class(id=i, total={"currency": "EUR", "units": 10 * i}), context)
        for i in range(_REFERENCED)
    ]
    referenced = client.get_schema(_frame_id(payloads[0])).references
    assert [(ref.name, ref.subject) for ref in referenced] == [(files[0].name, files[0].name)]
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    produce(kafka_bootstrap, topic_name, [Record(value=payload) for payload in payloads])
    descriptor_set = tmp_path / "order.desc"
    descriptor_set.write_bytes(descriptor_pb2.FileDescriptorSet(file=files).SerializeToString())
    typed = {
        "valueFormat": "protobuf",
        "valueSchema": str(descriptor_set),
        "valueMessage": "shop.Order",
        "schema.registry.url": schema_registry_url,
    }
    expected = {
        i: {"id": i, "total": {"currency": "EUR", "units": 10 * i}} for i in range(_REFERENCED)
    }

    frame = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, **typed)
    assert {row.value.id: row.value.asDict(recursive=True) for row in frame.collect()} == expected

    # The sink's serializer registers the output subject with its import as a reference.
    target = f"{topic_name}-out"
    create_topic(kafka_bootstrap, target, partitions=1)
    writer = frame.select("value").write.format(OUR_FORMAT).options(**typed)
    writer.option("kafka.bootstrap.servers", kafka_bootstrap).option("topic", target)
    writer.mode("append").save()
    latest = SchemaRegistryClient({"url": schema_registry_url}).get_latest_version(
        f"{target}-value"
    )
    assert [ref.subject for ref in latest.schema.references] == [files[0].name]
    deserializer = ProtobufDeserializer(order_class, settings, client)
    out = SerializationContext(target, MessageField.VALUE)
    decoded = [deserializer(record.value, out) for record in read_all(kafka_bootstrap, target)]
    assert {message.id: (message.total.currency, message.total.units) for message in decoded} == {
        i: ("EUR", 10 * i) for i in range(_REFERENCED)
    }


# --- the tool itself ---------------------------------------------------------------------------


def test_a_built_registry_starts_without_maven(monkeypatch: pytest.MonkeyPatch) -> None:
    built = registry_app()
    java_only = os.path.dirname(os.path.realpath(find_java()))
    monkeypatch.setenv("PATH", java_only)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert registry_app() == built


def test_a_taken_port_fails_naming_it() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        registry = LocalSchemaRegistry(port=port)
        with pytest.raises(SchemaRegistryStartError, match=f"port {port} .* already in use"):
            registry.start()
        assert not registry.is_running
