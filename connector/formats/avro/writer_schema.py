"""Spark types written as Avro schemas, as spark-avro's ``to_avro`` writes them (the sink).

A struct is a record named ``topLevelRecord``, nested records are named after their field,
decimals are named ``fixed``; unlike ``to_avro``, a nullable type is ``["null", T]`` with a
``null`` default, so that a later version of the schema may drop or add such a field
compatibly.
"""

from __future__ import annotations

from typing import Any, Final

import pyspark.sql.types as T

from kafka_rescalable.formats.avro.types import AvroMappingError

__all__ = ["TOP_LEVEL_RECORD", "avro_schema_of"]

TOP_LEVEL_RECORD: Final = "topLevelRecord"
"""The name of the record :func:`avro_schema_of` writes for a struct, as spark-avro names it."""


def avro_schema_of(data_type: T.DataType, nullable: bool = False) -> Any:
    """Return the Avro schema (JSON-able) spark-avro's ``to_avro`` writes for ``data_type``.

    Raises
    ------
    AvroMappingError
        For a type Avro has no equivalent of (a map whose keys are not strings, intervals...).
    """
    return _avro(data_type, nullable, TOP_LEVEL_RECORD, "")


def _avro(data_type: T.DataType, nullable: bool, name: str, namespace: str) -> Any:
    schema = _avro_non_null(data_type, name, namespace)
    return ["null", schema] if nullable else schema


_AVRO_LEAVES: Final[tuple[tuple[type | tuple[type, ...], Any], ...]] = (
    (T.BooleanType, "boolean"),
    ((T.ByteType, T.ShortType, T.IntegerType), "int"),
    (T.LongType, "long"),
    (T.FloatType, "float"),
    (T.DoubleType, "double"),
    (T.StringType, "string"),
    (T.BinaryType, "bytes"),
    (T.NullType, "null"),
    (T.DateType, {"type": "int", "logicalType": "date"}),
    (T.TimestampType, {"type": "long", "logicalType": "timestamp-micros"}),
    (T.TimestampNTZType, {"type": "long", "logicalType": "local-timestamp-micros"}),
)
"""The Avro type of each Spark type that holds no other, as spark-avro's ``to_avro`` writes it."""


def _avro_non_null(data_type: T.DataType, name: str, namespace: str) -> Any:
    for spark_types, avro in _AVRO_LEAVES:
        if isinstance(data_type, spark_types):
            return dict(avro) if isinstance(avro, dict) else avro
    if isinstance(data_type, T.DecimalType):
        return {
            "type": "fixed",
            "name": f"{namespace}.{name}.fixed" if namespace else f"{name}.fixed",
            "size": _bytes_for_precision(data_type.precision),
            "logicalType": "decimal",
            "precision": data_type.precision,
            "scale": data_type.scale,
        }
    if isinstance(data_type, T.ArrayType):
        return {
            "type": "array",
            "items": _avro(data_type.elementType, data_type.containsNull, name, namespace),
        }
    if isinstance(data_type, T.MapType):
        if not isinstance(data_type.keyType, T.StringType):
            msg = f"Avro maps have string keys; {data_type.simpleString()} has other keys"
            raise AvroMappingError(msg)
        return {
            "type": "map",
            "values": _avro(data_type.valueType, data_type.valueContainsNull, name, namespace),
        }
    if isinstance(data_type, T.StructType):
        inner = f"{namespace}.{name}" if namespace else name
        fields = []
        for field in data_type.fields:
            avro_field: dict[str, Any] = {
                "name": field.name,
                "type": _avro(field.dataType, field.nullable, field.name, inner),
            }
            if field.nullable:
                avro_field["default"] = None
            fields.append(avro_field)
        record: dict[str, Any] = {"type": "record", "name": name, "fields": fields}
        if namespace:
            record["namespace"] = namespace
        return record
    msg = f"Avro has no type for Spark's {data_type.simpleString()}"
    raise AvroMappingError(msg)


def _bytes_for_precision(precision: int) -> int:
    """Count the fewest bytes whose two's complement holds ``precision`` digits."""
    size = 1
    while 2 ** (8 * size - 1) <= 10**precision - 1:
        size += 1
    return size
