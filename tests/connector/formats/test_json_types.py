"""JSON Schema -> Spark types, DDL wrapping, and the JSON Schema the sink derives."""

from __future__ import annotations

import json

import jsonschema
import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.formats.json_types import (
    check_ddl,
    column_ddl,
    is_json_schema,
    json_schema_of,
    spark_type_of,
)


def _struct(*fields: tuple[str, object]) -> StructType:
    return StructType([StructField(name, kind, True) for name, kind in fields])


def test_an_object_maps_to_a_struct_with_every_field_nullable() -> None:
    schema = {
        "type": "object",
        "required": ["id"],
        "properties": {
            "id": {"type": "integer"},
            "price": {"type": "number"},
            "ok": {"type": "boolean"},
            "name": {"type": "string"},
            "at": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "raw": {"type": "string", "contentEncoding": "base64"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
            "inner": {"type": "object", "properties": {"x": {"type": ["null", "number"]}}},
        },
    }
    assert spark_type_of(json.dumps(schema), "valueSchema") == _struct(
        ("id", LongType()),
        ("price", DoubleType()),
        ("ok", BooleanType()),
        ("name", StringType()),
        ("at", TimestampType()),
        ("day", DateType()),
        ("raw", BinaryType()),
        ("tags", ArrayType(StringType(), True)),
        ("attrs", MapType(StringType(), LongType(), True)),
        ("inner", _struct(("x", DoubleType()))),
    )


def test_nullable_choices_refs_and_untyped_parts_map() -> None:
    schema = {
        "$defs": {"Point": {"properties": {"x": {"type": "integer"}}}},
        "properties": {
            "p": {"$ref": "#/$defs/Point"},
            "q": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/Point"}]},
            "anything": {},
            "kind": {"enum": ["a", "b"]},
            "loose": {"type": "object"},
        },
    }
    point = _struct(("x", LongType()))
    assert spark_type_of(schema, "valueSchema") == _struct(
        ("p", point),
        ("q", point),
        ("anything", StringType()),
        ("kind", StringType()),
        ("loose", MapType(StringType(), StringType(), True)),
    )


def test_a_top_level_array_maps_to_an_array() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    assert spark_type_of(schema, "valueSchema") == ArrayType(LongType(), True)


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ('{"type": "object", ', "not valid JSON"),
        ("[1]", "JSON object"),
        ({"properties": {"a": {"type": ["string", "integer"]}}}, "#/properties/a"),
        ({"properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}, "several"),
        ({"properties": {"a": {"$ref": "other.json#/x"}}}, "only local"),
        (
            {
                "$defs": {"n": {"properties": {"next": {"$ref": "#/$defs/n"}}}},
                "properties": {"a": {"$ref": "#/$defs/n"}},
            },
            "recursively",
        ),
        ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "does not have"),
        ({"properties": {"a": {"type": "null"}}}, "'null'"),
        ({"properties": {"a": {"description": "no type"}}}, "no 'type'"),
        ({"type": "object", "additionalProperties": False}, "no properties"),
    ],
)
def test_an_unmappable_schema_names_the_option_and_the_place(schema: object, said: str) -> None:
    text = schema if isinstance(schema, str) else json.dumps(schema)
    with pytest.raises(InvalidOptionError, match="valueSchema") as refused:
        spark_type_of(text, "valueSchema")
    assert said in str(refused.value)


def test_ddl_fields_are_wrapped_and_a_whole_type_is_kept() -> None:
    assert column_ddl(" id BIGINT, name STRING ") == "STRUCT<id BIGINT, name STRING>"
    assert column_ddl("array<struct<a: int>>") == "array<struct<a: int>>"
    assert column_ddl("MAP <STRING, INT>") == "MAP <STRING, INT>"
    assert column_ddl("array ARRAY<INT>") == "STRUCT<array ARRAY<INT>>"  # a field named array
    assert is_json_schema('  {"type": "object"}') and not is_json_schema("a INT")


def test_the_derived_json_schema_maps_back_and_validates_what_the_sink_writes() -> None:
    spark_type = StructType(
        [
            StructField("id", LongType(), False),
            StructField("n", IntegerType(), True),
            StructField("amount", DecimalType(10, 2), True),
            StructField("at", TimestampType(), True),
            StructField("day", DateType(), True),
            StructField("raw", BinaryType(), True),
            StructField("tags", ArrayType(StringType(), True), True),
            StructField("attrs", MapType(StringType(), DoubleType(), True), True),
            StructField("inner", _struct(("ok", BooleanType())), True),
        ]
    )
    derived = json_schema_of(spark_type)
    assert derived["required"] == ["id"]
    back = spark_type_of(derived, "valueSchema")
    assert [field.name for field in back.fields] == [field.name for field in spark_type.fields]
    assert back["n"].dataType == LongType() and back["amount"].dataType == DoubleType()
    assert back["at"].dataType == TimestampType() and back["raw"].dataType == BinaryType()
    assert back["attrs"].dataType == MapType(StringType(), DoubleType(), True)
    value = {
        "id": 1,
        "amount": 2.5,
        "at": "2024-01-02T03:04:05.000Z",
        "day": "2024-01-02",
        "raw": "aGk=",
        "tags": ["a", None],
        "attrs": {"x": 1.0},
        "inner": {"ok": True},
    }
    jsonschema.validate(value, derived)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"n": 1}, derived)  # id is required: the field is NOT NULL


def test_a_map_with_other_keys_has_no_json_schema() -> None:
    with pytest.raises(ValueError, match="keys are strings"):
        json_schema_of(MapType(IntegerType(), StringType()))


@pytest.mark.parametrize(
    "ddl",
    [
        "id BIGINT, name STRING, tags ARRAY<STRING>, at TIMESTAMP",
        "a: int, `b c`: struct<x: decimal(10, 2), y: map<string, array<struct<>>>> NOT NULL",
        "a INT COMMENT 'it, is > 1', b STRING COLLATE UTF8_LCASE, c VARCHAR(3), d TIME(6)",
        "x INTERVAL DAY TO SECOND, y TIMESTAMP_NTZ, z BYTE, w VARIANT",
        "array<struct<a: int>>",
    ],
)
def test_ddl_spark_parses_passes_the_check(ddl: str) -> None:
    check_ddl(ddl, "valueSchema")


@pytest.mark.parametrize(
    ("ddl", "said"),
    [
        ("id BIGIN, name STRING", "expected a type, found 'bigin'"),
        ("id BIGINT, name", "expected a type, found the end"),
        ("a ARRAY<INT", "expected '>', found the end"),
        ("a MAP<STRING>", "expected ',', found '>'"),
        ("a INT,, b INT", "expected a field name, found ','"),
        ("a DECIMAL(10, 2", "unclosed '('"),
        ("a INT b INT", "unexpected 'b'"),
    ],
)
def test_a_ddl_mistake_names_the_option_and_the_place(ddl: str, said: str) -> None:
    with pytest.raises(InvalidOptionError, match="valueSchema") as refused:
        check_ddl(ddl, "valueSchema")
    assert said in str(refused.value)
