"""The sink's input contract: schema checks on the driver, Arrow rows to Kafka records."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from connector.errors import SinkInputError
from connector.sink.rows import SinkColumns, first_topic, kafka_records

HEADERS = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)


def schema(**columns) -> StructType:
    return StructType([StructField(name, kind) for name, kind in columns.items()])


def test_every_column_of_the_contract_is_accepted() -> None:
    columns = SinkColumns.from_schema(
        schema(
            key=BinaryType(),
            value=StringType(),
            topic=StringType(),
            partition=IntegerType(),
            headers=HEADERS,
            extra=LongType(),
        ),
        None,
    )
    assert columns == SinkColumns(True, True, True, True, None)


@pytest.mark.parametrize(
    ("columns", "topic", "named", "message"),
    [
        ({"key": StringType()}, "t", "value", "needs a 'value' column"),
        ({"value": LongType()}, "t", "value", "column 'value' has type bigint"),
        ({"value": StringType(), "key": IntegerType()}, "t", "key", "column 'key' has type int"),
        ({"value": StringType(), "topic": BinaryType()}, None, "topic", "needs string"),
        ({"value": StringType(), "partition": LongType()}, "t", "partition", "needs int"),
        ({"value": StringType(), "headers": StringType()}, "t", "headers", "array<struct"),
        ({"value": StringType()}, None, "topic", "no topic to write to"),
    ],
)
def test_a_wrong_input_is_refused_naming_the_column(columns, topic, named, message) -> None:
    with pytest.raises(SinkInputError, match=message) as refused:
        SinkColumns.from_schema(schema(**columns), topic)
    assert refused.value.column == named


def test_rows_become_records_with_the_option_overriding_the_topic_column() -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "value": [b"a", None, b"c"],
            "key": ["k1", None, "k3"],
            "topic": ["x", "y", "z"],
            "partition": pa.array([None, 2, 0], pa.int32()),
            "headers": [[{"key": "h", "value": b"1"}, {"key": "h", "value": None}], None, []],
        }
    )
    columns = SinkColumns(True, True, True, True, "forced")
    assert list(kafka_records(batch, columns)) == [
        ("forced", b"a", "k1", -1, [("h", b"1"), ("h", None)]),
        ("forced", None, None, 2, None),
        ("forced", b"c", "k3", 0, []),
    ]
    assert first_topic(batch, SinkColumns(has_topic=True)) == "x"


def test_a_row_without_topic_is_refused_naming_the_row() -> None:
    batch = pa.RecordBatch.from_pydict({"value": ["a", "b"], "topic": ["x", None]})
    with pytest.raises(SinkInputError, match="row 12 of this task has a null 'topic'"):
        kafka_records(batch, SinkColumns(has_topic=True), first_row=11)
    with pytest.raises(SinkInputError, match="row 0 of this task"):
        first_topic(batch.slice(1), SinkColumns(has_topic=True))
