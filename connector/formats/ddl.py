"""Spark data types written as DDL text, the form in which the source declares its schema.

A Python data source may declare its schema as DDL, which Spark parses in the JVM and hands
back, parsed, to ``reader(schema)``. The source uses that for typed records: a JSON value's
schema given as DDL (``'id BIGINT, name STRING'``) cannot be parsed in a Python worker without a
JVM, so it is spliced into the declared DDL as it is, and the executors get Spark's parsing.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    DataType,
    DecimalType,
    MapType,
    StructType,
)

__all__ = ["quote", "to_ddl"]


def quote(name: str) -> str:
    """Write a field name as DDL: in backticks, with backticks inside doubled."""
    return "`" + name.replace("`", "``") + "`"


def to_ddl(data_type: DataType) -> str:
    """Write ``data_type`` as DDL that Spark parses back to an equal type.

    ``simpleString()`` is not enough: it leaves field names unquoted, so a name with a space,
    a colon or a reserved word would not parse.
    """
    if isinstance(data_type, StructType):
        fields = ", ".join(
            f"{quote(field.name)}: {to_ddl(field.dataType)}"
            + ("" if field.nullable else " NOT NULL")
            for field in data_type.fields
        )
        return f"STRUCT<{fields}>"
    if isinstance(data_type, ArrayType):
        return f"ARRAY<{to_ddl(data_type.elementType)}>"
    if isinstance(data_type, MapType):
        return f"MAP<{to_ddl(data_type.keyType)}, {to_ddl(data_type.valueType)}>"
    if isinstance(data_type, DecimalType):
        return f"DECIMAL({data_type.precision}, {data_type.scale})"
    return data_type.simpleString().upper()
