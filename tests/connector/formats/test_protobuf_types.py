"""Descriptor sets read on the driver, and messages mapped to Spark types as spark-protobuf does."""

from __future__ import annotations

import pytest
from google.protobuf import any_pb2, descriptor_pb2, wrappers_pb2
from protobuf_samples import LEGACY, SHOP, WELL_KNOWN, descriptor_set, file_proto, shop_set
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DayTimeIntervalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.formats.protobuf_types import load_message, message_type

LINE = StructType([StructField("sku", StringType()), StructField("qty", IntegerType())])

ORDER = StructType(
    [
        StructField("id", LongType()),
        StructField("customer", StringType()),
        StructField("lines", ArrayType(LINE)),
        StructField("tags", MapType(StringType(), IntegerType())),
        StructField("status", StringType()),
        StructField("placed_at", TimestampType()),
        StructField("card", StringType()),
        StructField("voucher", StructType([StructField("code", StringType())])),
        StructField("note", StringType()),
        StructField("u32", IntegerType()),
        StructField("u64", LongType()),
        StructField("f64", LongType()),
        StructField("total", DoubleType()),
        StructField("weight", FloatType()),
        StructField("gift", BooleanType()),
        StructField("blob", BinaryType()),
        StructField(
            "ttl", DayTimeIntervalType(DayTimeIntervalType.DAY, DayTimeIntervalType.SECOND)
        ),
        StructField("lines_by_no", MapType(IntegerType(), LINE)),
        # 'nothing' (a message without fields) is left out, as spark-protobuf leaves it out
        StructField("events", ArrayType(TimestampType())),
        StructField("history", ArrayType(StringType())),
    ]
)


def _load(data: bytes, name: str):
    return load_message(data, name, "valueSchema", "valueMessage")


def test_a_message_maps_to_the_struct_spark_protobuf_gives() -> None:
    struct, ddl = message_type(_load(shop_set(), "shop.Order"), "valueMessage")
    assert struct == ORDER
    assert ddl.startswith("STRUCT<`id`: BIGINT, `customer`: STRING, `lines`: ARRAY<STRUCT<")
    assert "`ttl`: INTERVAL DAY TO SECOND" in ddl


def test_a_nested_message_is_found_by_its_full_name_and_files_load_in_any_order() -> None:
    imports_first = descriptor_set(*WELL_KNOWN, file_proto(SHOP))
    for data in (imports_first, shop_set()):
        assert _load(data, ".shop.Line").full_name == "shop.Line"


def test_proto2_required_fields_are_not_nullable() -> None:
    struct, ddl = message_type(_load(descriptor_set(file_proto(LEGACY)), "legacy.Account"), "m")
    assert [(f.name, f.nullable) for f in struct.fields] == [
        ("id", False),
        ("name", True),
        ("visits", True),
    ]
    assert "`id`: INT NOT NULL" in ddl


def test_wrappers_and_any_stay_messages_as_in_spark_protobufs_defaults() -> None:
    wrapped = file_proto(
        'name: "w.proto" package: "w" syntax: "proto3" '
        'dependency: "google/protobuf/wrappers.proto" dependency: "google/protobuf/any.proto" '
        'message_type { name: "W" '
        'field { name: "n" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE '
        'type_name: ".google.protobuf.Int32Value" } '
        'field { name: "a" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE '
        'type_name: ".google.protobuf.Any" } }'
    )
    known = [
        descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
        for module in (wrappers_pb2, any_pb2)
    ]
    struct, _ = message_type(_load(descriptor_set(wrapped, *known), "w.W"), "valueMessage")
    assert struct == StructType(
        [
            StructField("n", StructType([StructField("value", IntegerType())])),
            StructField(
                "a",
                StructType(
                    [StructField("type_url", StringType()), StructField("value", BinaryType())]
                ),
            ),
        ]
    )


def test_a_recursive_message_is_refused_naming_the_cycle() -> None:
    with pytest.raises(InvalidOptionError) as refused:
        message_type(_load(shop_set(), "shop.Node"), "valueMessage")
    assert refused.value.option == "valueMessage"
    assert "shop.Node -> shop.Node" in str(refused.value)


def test_a_message_without_fields_is_refused() -> None:
    with pytest.raises(InvalidOptionError, match="shop.Empty has no fields"):
        message_type(_load(shop_set(), "shop.Empty"), "valueMessage")


def test_an_unknown_message_is_refused_listing_the_sets_messages() -> None:
    with pytest.raises(InvalidOptionError) as refused:
        _load(shop_set(), "Order")
    assert refused.value.option == "valueMessage"
    message = str(refused.value)
    assert "shop.Order, shop.Voucher" in message
    assert "google.protobuf.Timestamp" in message
    assert "TagsEntry" not in message  # map entries are not messages one can read


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x0a\x05hello not a set", "not a Protobuf descriptor set"),
        (b"", "not a Protobuf descriptor set, or an empty one"),
        (descriptor_set(file_proto(SHOP)), "imports google/protobuf/timestamp.proto, which"),
    ],
)
def test_a_file_that_is_not_a_complete_descriptor_set_is_refused(data: bytes, reason: str) -> None:
    with pytest.raises(InvalidOptionError) as refused:
        _load(data, "shop.Order")
    assert refused.value.option == "valueSchema"
    assert reason in str(refused.value)
    assert "--include_imports" in str(refused.value)
