"""Descriptor sets for the Protobuf format's unit tests, written as FileDescriptorProto text.

No ``protoc`` is needed: the text is what ``protoc --descriptor_set_out`` would produce for
the ``.proto`` shown in each constant's comment. The well-known types come from the protobuf
package's own descriptors.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    message_factory,
    text_format,
    timestamp_pb2,
)

# syntax = "proto3"; package shop;
# import "google/protobuf/timestamp.proto"; import "google/protobuf/duration.proto";
# message Order {
#   enum Status { UNKNOWN = 0; PAID = 1; SHIPPED = 2; }
#   int64 id = 1; string customer = 2; repeated Line lines = 3; map<string, int32> tags = 4;
#   Status status = 5; google.protobuf.Timestamp placed_at = 6;
#   oneof payment { string card = 7; Voucher voucher = 8; }
#   optional string note = 9; uint32 u32 = 10; uint64 u64 = 11; fixed64 f64 = 12;
#   double total = 13; float weight = 14; bool gift = 15; bytes blob = 16;
#   google.protobuf.Duration ttl = 17; map<int32, Line> lines_by_no = 18; Empty nothing = 19;
#   repeated google.protobuf.Timestamp events = 20; repeated Status history = 21;
# }
# message Line { string sku = 1; int32 qty = 2; }
# message Voucher { string code = 1; }
# message Empty {}
# message Node { string name = 1; Node child = 2; }
SHOP = """
name: "shop/order.proto" package: "shop" syntax: "proto3"
dependency: "google/protobuf/timestamp.proto" dependency: "google/protobuf/duration.proto"
message_type {
  name: "Order"
  field { name: "id" number: 1 label: LABEL_OPTIONAL type: TYPE_INT64 }
  field { name: "customer" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "lines" number: 3 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".shop.Line" }
  field { name: "tags" number: 4 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".shop.Order.TagsEntry" }
  field { name: "status" number: 5 label: LABEL_OPTIONAL type: TYPE_ENUM
          type_name: ".shop.Order.Status" }
  field { name: "placed_at" number: 6 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".google.protobuf.Timestamp" }
  field { name: "card" number: 7 label: LABEL_OPTIONAL type: TYPE_STRING oneof_index: 0 }
  field { name: "voucher" number: 8 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".shop.Voucher" oneof_index: 0 }
  field { name: "note" number: 9 label: LABEL_OPTIONAL type: TYPE_STRING oneof_index: 1
          proto3_optional: true }
  field { name: "u32" number: 10 label: LABEL_OPTIONAL type: TYPE_UINT32 }
  field { name: "u64" number: 11 label: LABEL_OPTIONAL type: TYPE_UINT64 }
  field { name: "f64" number: 12 label: LABEL_OPTIONAL type: TYPE_FIXED64 }
  field { name: "total" number: 13 label: LABEL_OPTIONAL type: TYPE_DOUBLE }
  field { name: "weight" number: 14 label: LABEL_OPTIONAL type: TYPE_FLOAT }
  field { name: "gift" number: 15 label: LABEL_OPTIONAL type: TYPE_BOOL }
  field { name: "blob" number: 16 label: LABEL_OPTIONAL type: TYPE_BYTES }
  field { name: "ttl" number: 17 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".google.protobuf.Duration" }
  field { name: "lines_by_no" number: 18 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".shop.Order.LinesByNoEntry" }
  field { name: "nothing" number: 19 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".shop.Empty" }
  field { name: "events" number: 20 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".google.protobuf.Timestamp" }
  field { name: "history" number: 21 label: LABEL_REPEATED type: TYPE_ENUM
          type_name: ".shop.Order.Status" }
  nested_type {
    name: "TagsEntry" options { map_entry: true }
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
  }
  nested_type {
    name: "LinesByNoEntry" options { map_entry: true }
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE
            type_name: ".shop.Line" }
  }
  enum_type {
    name: "Status"
    value { name: "UNKNOWN" number: 0 } value { name: "PAID" number: 1 }
    value { name: "SHIPPED" number: 2 }
  }
  oneof_decl { name: "payment" }
  oneof_decl { name: "_note" }
}
message_type {
  name: "Line"
  field { name: "sku" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "qty" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
}
message_type {
  name: "Voucher"
  field { name: "code" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
}
message_type { name: "Empty" }
message_type {
  name: "Node"
  field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "child" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".shop.Node" }
}
"""

# syntax = "proto2"; package legacy;
# message Account { required int32 id = 1; optional string name = 2 [default = "anon"];
#                   optional int32 visits = 3; }
LEGACY = """
name: "legacy.proto" package: "legacy" syntax: "proto2"
message_type {
  name: "Account"
  field { name: "id" number: 1 label: LABEL_REQUIRED type: TYPE_INT32 }
  field { name: "name" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING default_value: "anon" }
  field { name: "visits" number: 3 label: LABEL_OPTIONAL type: TYPE_INT32 }
}
"""

WELL_KNOWN = tuple(
    descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
    for module in (timestamp_pb2, duration_pb2)
)


def file_proto(text: str) -> descriptor_pb2.FileDescriptorProto:
    """Parse one file's descriptor from its text form."""
    return text_format.Parse(text, descriptor_pb2.FileDescriptorProto())


def descriptor_set(*files: descriptor_pb2.FileDescriptorProto) -> bytes:
    """Serialize ``files`` as ``protoc --descriptor_set_out`` does."""
    return descriptor_pb2.FileDescriptorSet(file=list(files)).SerializeToString()


def shop_set() -> bytes:
    """Serialize the shop file and its imports, importing file first (protoc puts it last)."""
    return descriptor_set(file_proto(SHOP), *WELL_KNOWN)


def message_classes(*files: descriptor_pb2.FileDescriptorProto) -> dict[str, Any]:
    """Make the writer's message classes, by full name, in a pool of their own."""
    pool = descriptor_pool.DescriptorPool()
    classes = {}
    for file in files:
        pool.Add(file)
        for name in file.message_type:
            full = f"{file.package}.{name.name}" if file.package else name.name
            classes[full] = message_factory.GetMessageClass(pool.FindMessageTypeByName(full))
    return classes


def shop_classes() -> dict[str, Any]:
    """Message classes of the shop file (and the well-known types it imports)."""
    return message_classes(*WELL_KNOWN, file_proto(SHOP))
