"""The Arrow schema we build must be the one Spark checks our batches against."""

from __future__ import annotations

import pytest
from pyspark.sql.pandas.types import to_arrow_schema

from kafka_rescalable.schema import arrow_schema, spark_schema


@pytest.mark.parametrize("include_headers", [False, True])
def test_arrow_schema_matches_sparks_conversion(include_headers: bool) -> None:
    expected = to_arrow_schema(spark_schema(include_headers), timezone="UTC")
    assert arrow_schema(include_headers).equals(expected)


def test_column_names_match_sparks_kafka_source() -> None:
    assert spark_schema(True).fieldNames() == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers",
    ]
    assert "headers" not in spark_schema(False).fieldNames()
