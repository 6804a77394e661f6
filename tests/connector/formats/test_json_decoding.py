"""A batch of JSON values through the executor's decoding, in both modes.

Under ``PERMISSIVE`` a record keeps what Spark's ``from_json`` keeps of it, with the reason
beside it; under ``FAILFAST`` the reason names the record and the field. The same records run
against Spark itself in integration_tests/test_json_records.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql.types import DataType, IntegerType, LongType, StringType, StructField, StructType

from kafka_rescalable.errors import RecordDecodeError
from kafka_rescalable.formats.codec import ReaderSchema
from kafka_rescalable.formats.decoding import DecodePlan, decode_batch
from kafka_rescalable.formats.options import DecodeMode, PayloadFormat, PayloadOptions
from tests.connector.formats.avro_batches import batch

ORDER = StructType([StructField("id", LongType()), StructField("name", StringType())])


def _decode(values: list[bytes | None], mode: DecodeMode, spark_type: DataType = ORDER) -> Any:
    payload = PayloadOptions("value", PayloadFormat.JSON, schema="ddl")
    reader = ReaderSchema(payload, "ddl", f"STRUCT<{spark_type.simpleString()}>")
    plan = DecodePlan((reader,), (spark_type.json(),), mode, None)
    return decode_batch(batch(values), plan).to_pydict()


def test_permissive_keeps_what_from_json_keeps_with_the_reason() -> None:
    decoded = _decode(
        [
            b'{"id": "12", "name": "n"}',
            b"null",
            b'{"id": 9223372036854775808, "name": "x"}',
            b'{"id": 1, "name": "ok"}',
            None,
            b"",
            b"{",
        ],
        DecodeMode.PERMISSIVE,
    )
    assert decoded["value"] == [
        {"id": None, "name": "n"},
        {"id": None, "name": None},
        {"id": None, "name": "x"},
        {"id": 1, "name": "ok"},
        None,
        None,
        {"id": None, "name": None},
    ]
    assert decoded["decodeError"][:6] == [
        'value: id: expected an integer, got string "12"',
        "value: the value: expected an object, got null null",
        "value: id: expected an integer within BIGINT (-9223372036854775808 to "
        "9223372036854775807), got number 9223372036854775808",
        None,
        None,
        None,
    ]
    assert decoded["decodeError"][6].startswith("value: not JSON")


@pytest.mark.parametrize(
    ("spark_type", "text", "said"),
    [
        (ORDER, b'{"id": 9223372036854775808}', "id: expected an integer within BIGINT"),
        (
            StructType([StructField("n", IntegerType())]),
            b'{"n": 3000000000}',
            "n: expected an integer within INT (-2147483648 to 2147483647), got number 3000000000",
        ),
    ],
)
def test_failfast_names_the_field_of_an_integer_out_of_range(
    spark_type: DataType, text: bytes, said: str
) -> None:
    with pytest.raises(RecordDecodeError) as failed:
        _decode([b"{}", text], DecodeMode.FAILFAST, spark_type)
    assert "the value of the record at orders-0 offset 1 could not be decoded" in str(failed.value)
    assert said in str(failed.value)
