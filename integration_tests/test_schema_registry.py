"""The local schema registry: confluent-kafka's own serializers work against it, end to end.

Typed records are Confluent-framed: a zero byte, the schema's 4-byte id, then the payload. These
tests register schemas through confluent-kafka's ``SchemaRegistryClient`` and serializers,
check the framing, decode by the id alone, and ask for a subject's latest version, against the
registry of the ``schema_registry_url`` fixture: the protocol the source's decoding will rely
on. The last tests check the tool itself: a cached build needs no Maven, and a taken port
fails clearly.
"""

from __future__ import annotations

import json
import os
import socket

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

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
