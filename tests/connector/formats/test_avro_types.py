"""Avro schema <-> Spark type, as spark-avro maps them; no Spark session, no Kafka."""

from __future__ import annotations

import fastavro
import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kafka_rescalable.formats.avro.types import (
    AvroMappingError,
    as_declared,
    spark_type_of,
    without_ignored_logical_types,
)
from kafka_rescalable.formats.avro.values import has_struct_union
from kafka_rescalable.formats.avro.writer_schema import avro_schema_of


def _spark(schema: object) -> tuple[DataType, bool]:
    return spark_type_of(fastavro.parse_schema(without_ignored_logical_types(schema)))


@pytest.mark.parametrize(
    ("avro", "spark", "nullable"),
    [
        ("boolean", BooleanType(), False),
        ("int", IntegerType(), False),
        ("long", LongType(), False),
        ("float", FloatType(), False),
        ("double", DoubleType(), False),
        ("string", StringType(), False),
        ("bytes", BinaryType(), False),
        ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, StringType(), False),
        ({"type": "fixed", "name": "F", "size": 4}, BinaryType(), False),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
            DecimalType(9, 2),
            False,
        ),
        (
            {
                "type": "fixed",
                "name": "D",
                "size": 16,
                "logicalType": "decimal",
                "precision": 38,
                "scale": 10,
            },
            DecimalType(38, 10),
            False,
        ),
        ({"type": "int", "logicalType": "date"}, DateType(), False),
        ({"type": "long", "logicalType": "timestamp-millis"}, TimestampType(), False),
        ({"type": "long", "logicalType": "timestamp-micros"}, TimestampType(), False),
        ({"type": "long", "logicalType": "local-timestamp-millis"}, TimestampNTZType(), False),
        ({"type": "long", "logicalType": "local-timestamp-micros"}, TimestampNTZType(), False),
        ({"type": "string", "logicalType": "uuid"}, StringType(), False),
        ({"type": "int", "logicalType": "time-millis"}, IntegerType(), False),
        ({"type": "long", "logicalType": "time-micros"}, LongType(), False),
        ({"type": "string", "logicalType": "no-such-type"}, StringType(), False),
        ({"type": "array", "items": "int"}, ArrayType(IntegerType(), False), False),
        ({"type": "array", "items": ["null", "int"]}, ArrayType(IntegerType(), True), False),
        ({"type": "map", "values": "long"}, MapType(StringType(), LongType(), False), False),
        (
            {"type": "map", "values": ["null", "string"]},
            MapType(StringType(), StringType(), True),
            False,
        ),
        (["null", "string"], StringType(), True),
        (["string", "null"], StringType(), True),
        (["int", "long"], LongType(), False),
        (["null", "float", "double"], DoubleType(), True),
        (
            ["int", "string"],
            StructType(
                [StructField("member0", IntegerType()), StructField("member1", StringType())]
            ),
            False,
        ),
        (
            ["null", "int", "string"],
            StructType(
                [StructField("member0", IntegerType()), StructField("member1", StringType())]
            ),
            True,
        ),
    ],
)
def test_each_avro_type_maps_as_spark_avro_maps_it(
    avro: object, spark: DataType, nullable: bool
) -> None:
    assert _spark(avro) == (spark, nullable)


def test_records_nest_with_field_nullability_from_their_unions() -> None:
    schema = {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "note", "type": ["null", "string"], "default": None},
            {
                "name": "line",
                "type": {
                    "type": "record",
                    "name": "Line",
                    "fields": [{"name": "sku", "type": "string"}],
                },
            },
            {"name": "lines", "type": {"type": "array", "items": "Line"}},
            {"name": "spare", "type": ["null", "shop.Line"]},
        ],
    }
    line = StructType([StructField("sku", StringType(), False)])
    assert _spark(schema) == (
        StructType(
            [
                StructField("id", LongType(), False),
                StructField("note", StringType(), True),
                StructField("line", line, False),
                StructField("lines", ArrayType(line, False), False),
                StructField("spare", line, True),
            ]
        ),
        False,
    )


def test_a_recursive_record_is_refused_naming_the_cycle() -> None:
    schema = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "next", "type": ["null", "Node"]}],
    }
    with pytest.raises(AvroMappingError, match=r"'Node' contains itself \(Node -> Node\)"):
        _spark(schema)


@pytest.mark.parametrize("precision", [0, 39])
def test_a_decimal_outside_sparks_range_is_refused(precision: int) -> None:
    schema = {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": 0}
    with pytest.raises(AvroMappingError, match="precision 1 to 38"):
        spark_type_of(schema)


def test_a_union_of_only_null_is_refused() -> None:
    with pytest.raises(AvroMappingError, match="nothing but 'null'"):
        _spark(["null"])


def test_struct_unions_are_found_below_records_arrays_and_maps() -> None:
    inner = {"type": "map", "values": {"type": "array", "items": ["int", "string"]}}
    deep = {"type": "record", "name": "R", "fields": [{"name": "m", "type": inner}]}
    assert has_struct_union(fastavro.parse_schema(deep))
    flat = {
        "type": "record",
        "name": "S",
        "fields": [{"name": "a", "type": ["null", "int"]}, {"name": "b", "type": ["int", "long"]}],
    }
    assert not has_struct_union(fastavro.parse_schema(flat))


def test_spark_types_map_to_the_avro_schema_to_avro_writes() -> None:
    spark = StructType(
        [
            StructField("id", LongType(), False),
            StructField("small", ShortType(), True),
            StructField("price", DecimalType(10, 2), False),
            StructField("at", TimestampType(), True),
            StructField("local", TimestampNTZType(), False),
            StructField("day", DateType(), False),
            StructField("tags", MapType(StringType(), StringType(), True), False),
            StructField("lines", ArrayType(StructType([StructField("n", IntegerType())])), True),
        ]
    )
    schema = avro_schema_of(spark)
    assert schema["name"] == "topLevelRecord"
    fields = {field["name"]: field for field in schema["fields"]}
    assert fields["id"] == {"name": "id", "type": "long"}
    assert fields["small"] == {"name": "small", "type": ["null", "int"], "default": None}
    assert fields["price"]["type"] == {
        "type": "fixed",
        "name": "topLevelRecord.price.fixed",
        "size": 5,
        "logicalType": "decimal",
        "precision": 10,
        "scale": 2,
    }
    assert fields["at"]["type"] == ["null", {"type": "long", "logicalType": "timestamp-micros"}]
    assert fields["local"]["type"]["logicalType"] == "local-timestamp-micros"
    assert fields["day"]["type"] == {"type": "int", "logicalType": "date"}
    assert fields["tags"]["type"] == {"type": "map", "values": ["null", "string"]}
    lines = fields["lines"]["type"][1]["items"][1]
    assert (lines["name"], lines["namespace"]) == ("lines", "topLevelRecord")
    # And back: the same Spark type, but for the short, which Avro has only as an int.
    back = StructType(
        [
            StructField("small", IntegerType(), True) if field.name == "small" else field
            for field in spark.fields
        ]
    )
    assert _spark(schema) == (back, False)


def test_a_map_with_other_than_string_keys_has_no_avro_type() -> None:
    with pytest.raises(AvroMappingError, match="string keys"):
        avro_schema_of(MapType(IntegerType(), StringType()))


@pytest.mark.parametrize(
    ("precision", "size"), [(1, 1), (2, 1), (3, 2), (9, 4), (18, 8), (19, 9), (38, 16)]
)
def test_fixed_decimals_are_as_small_as_their_precision_allows(precision: int, size: int) -> None:
    assert avro_schema_of(DecimalType(precision, 0))["size"] == size


def test_the_declared_type_lets_arrays_and_maps_hold_nulls_as_ddl_does() -> None:
    mapped = StructType(
        [
            StructField("xs", ArrayType(MapType(StringType(), LongType(), False), False), False),
            StructField("s", StructType([StructField("a", IntegerType(), False)]), True),
        ]
    )
    assert as_declared(mapped) == StructType(
        [
            StructField("xs", ArrayType(MapType(StringType(), LongType(), True), True), False),
            StructField("s", StructType([StructField("a", IntegerType(), False)]), True),
        ]
    )
