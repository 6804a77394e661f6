"""The benchmark's "order" records in each encoding it decodes: Avro, framed Avro, JSON, Protobuf.

Every encoding carries the same records, :func:`benchmarks.whole_queries.avro_records.order`,
so that the decoders are compared on the same content, each in its format's own types:

- ``avro``: plain Avro bodies (:data:`~benchmarks.whole_queries.avro_records.ORDER_SCHEMA`);
- ``avro-framed``: the same bodies behind Confluent's framing (magic byte, schema id);
- ``json``: JSON text as ``to_json`` writes it (timestamps ISO-8601 UTC with milliseconds,
  decimals as numbers), read with :data:`ORDER_DDL`;
- ``protobuf``: a proto3 ``bench.shop.Order`` (:func:`order_descriptor_set`): the timestamp a
  ``google.protobuf.Timestamp``, the status an enum, the coupon ``optional``; Protobuf has no
  decimal, so the amount is its decimal text, as money often travels in Protobuf.

The descriptor set is built here from descriptor protos, as ``protoc --include_imports
--descriptor_set_out`` would write it, so no ``protoc`` is needed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

from benchmarks.whole_queries.avro_records import ORDER_SCHEMA, order, order_bodies, order_type

__all__ = [
    "ENCODINGS",
    "ORDER_DDL",
    "ORDER_MESSAGE",
    "encoded_orders",
    "expected_rows",
    "order_descriptor_set",
]

ENCODINGS = ("avro", "avro-framed", "json", "protobuf")
ORDER_MESSAGE = "bench.shop.Order"


def _ddl() -> str:
    return ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in order_type().fields)


ORDER_DDL = _ddl()
"""The Spark DDL of the order struct (``from_json``'s schema and our ``valueSchema`` for JSON)."""


def encoded_orders(
    encoding: str, start: int, stop: int, step: int = 1, schema_id: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(index, value)`` of records ``range(start, stop, step)`` in ``encoding``.

    ``avro-framed`` needs the ``schema_id`` the registry gave the order schema.
    """
    if encoding in ("avro", "avro-framed"):
        if encoding == "avro-framed" and schema_id is None:
            msg = "encoding 'avro-framed' needs the schema_id of the registered order schema"
            raise ValueError(msg)
        from kafka_rescalable.formats.registry import frame

        for index, body in order_bodies(start, stop, step):
            yield index, body if schema_id is None else frame(schema_id, body)
    elif encoding == "json":
        for index in range(start, stop, step):
            yield index, _json(order(index))
    elif encoding == "protobuf":
        message = _message_class()
        for index in range(start, stop, step):
            yield index, _protobuf(message, order(index))
    else:
        msg = f"encoding must be one of {ENCODINGS}, got {encoding!r}"
        raise ValueError(msg)


def expected_rows(encoding: str, count: int) -> list[dict[str, Any]]:
    """Return the rows a correct decoder gives for records ``0 .. count - 1``, by ``order_id``.

    Maps as plain dicts (compare them with ``dict(row[...])`` of Arrow's list of pairs).
    """
    rows = [order(index) for index in range(count)]
    if encoding == "protobuf":
        for row in rows:
            row["amount"] = str(row["amount"])
    return rows


def _json(record: dict[str, Any]) -> bytes:
    created = record["created_at"].isoformat(timespec="milliseconds").replace("+00:00", "Z")
    # A float's repr is the shortest text that reads back the same, so the cents survive.
    return json.dumps(
        {**record, "created_at": created, "amount": float(record["amount"])},
        separators=(",", ":"),
    ).encode()


def _protobuf(message: Any, record: dict[str, Any]) -> bytes:
    # The datetime goes in as it is: protobuf turns it into the Timestamp field's seconds and
    # nanoseconds itself.
    fields = {**record, "amount": str(record["amount"])}
    if fields["coupon"] is None:
        del fields["coupon"]
    return message(**fields).SerializeToString()


def order_descriptor_set() -> bytes:
    """Return the serialized ``FileDescriptorSet`` of :data:`ORDER_MESSAGE` and its imports."""
    from google.protobuf import descriptor_pb2, timestamp_pb2

    files = [
        descriptor_pb2.FileDescriptorProto.FromString(timestamp_pb2.DESCRIPTOR.serialized_pb),
        _order_file(),
    ]
    return descriptor_pb2.FileDescriptorSet(file=files).SerializeToString()


@functools.cache
def _message_class() -> Any:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(order_descriptor_set()).file:
        pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(ORDER_MESSAGE))


def _order_file() -> Any:
    """Return the ``FileDescriptorProto`` of ``bench/shop/order.proto``: the Avro fields."""
    from google.protobuf import descriptor_pb2

    field_type = descriptor_pb2.FieldDescriptorProto
    scalar = {
        "long": field_type.TYPE_INT64,
        "int": field_type.TYPE_INT32,
        "double": field_type.TYPE_DOUBLE,
        "string": field_type.TYPE_STRING,
    }
    proto = descriptor_pb2.FileDescriptorProto(
        name="bench/shop/order.proto",
        package="bench.shop",
        syntax="proto3",
        dependency=["google/protobuf/timestamp.proto"],
    )
    message = proto.message_type.add(name="Order")
    status = message.enum_type.add(name="Status")
    for number, symbol in enumerate(ORDER_SCHEMA["fields"][3]["type"]["symbols"]):
        status.value.add(name=symbol, number=number)
    entry = message.nested_type.add(name="AttributesEntry")
    entry.options.map_entry = True
    for number, name in enumerate(("key", "value"), start=1):
        entry.field.add(name=name, number=number, type=field_type.TYPE_STRING)
    special = {
        "created_at": {"type": field_type.TYPE_MESSAGE, "type_name": ".google.protobuf.Timestamp"},
        "status": {"type": field_type.TYPE_ENUM, "type_name": ".bench.shop.Order.Status"},
        "amount": {"type": field_type.TYPE_STRING},
        "coupon": {"type": field_type.TYPE_STRING, "oneof_index": 0, "proto3_optional": True},
        "tags": {"type": field_type.TYPE_STRING, "label": field_type.LABEL_REPEATED},
        "attributes": {
            "type": field_type.TYPE_MESSAGE,
            "type_name": ".bench.shop.Order.AttributesEntry",
            "label": field_type.LABEL_REPEATED,
        },
    }
    for number, avro_field in enumerate(ORDER_SCHEMA["fields"], start=1):
        name = avro_field["name"]
        shape = special.get(name) or {"type": scalar[avro_field["type"]]}
        message.field.add(name=name, number=number, **{"label": field_type.LABEL_OPTIONAL, **shape})
    message.oneof_decl.add(name="_coupon")
    return proto
