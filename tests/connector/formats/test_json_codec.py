"""The json codec without a registry: resolving valueSchema, framed and plain decoding, encoding.

The registry paths (the subject's latest version, schema ids, JSONSerializer) run against a
real registry in integration_tests/test_json_records.py.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafka_rescalable.errors import InvalidOptionError, PayloadDecodeError
from kafka_rescalable.formats.codec import WriterColumn, codec_for
from kafka_rescalable.formats.json_values import column_reader_for
from kafka_rescalable.formats.options import (
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
    payload_settings,
)
from kafka_rescalable.formats.registry import frame

CODEC = codec_for(PayloadFormat.JSON)
TYPE = StructType(
    [
        StructField("id", LongType()),
        StructField("tags", ArrayType(StringType())),
        StructField("at", TimestampType()),
    ]
)
REGISTRY = RegistrySettings((("url", "http://registry.invalid:8081"),))


def _payload(schema: str | None = None, **given: object) -> PayloadOptions:
    return PayloadOptions("value", PayloadFormat.JSON, schema=schema, **given)  # type: ignore[arg-type]


def test_a_ddl_schema_is_left_for_spark_to_parse() -> None:
    reader = CODEC.resolve(_payload("id BIGINT, tags ARRAY<STRING>"), None, ["t"])
    assert reader.spark_ddl == "STRUCT<id BIGINT, tags ARRAY<STRING>>"
    assert reader.spark_type is None
    assert reader.definition == "id BIGINT, tags ARRAY<STRING>"


def test_a_json_schema_is_mapped_on_the_driver() -> None:
    schema = '{"type": "object", "properties": {"id": {"type": "integer"}}}'
    reader = CODEC.resolve(_payload(schema), None, ["t"])
    assert reader.spark_type == StructType([StructField("id", LongType())])
    assert reader.spark_ddl == "STRUCT<`id`: BIGINT>"
    assert reader.schema_id is None


def test_an_empty_schema_names_the_option() -> None:
    with pytest.raises(InvalidOptionError, match="valueSchema.*empty"):
        CODEC.resolve(_payload("  "), None, ["t"])


@pytest.mark.parametrize("topics", [["a", "b"], []])
def test_a_registry_schema_needs_a_subject_for_several_topics_or_a_pattern(
    topics: list[str],
) -> None:
    with pytest.raises(InvalidOptionError, match="valueSubject"):
        CODEC.resolve(_payload(framing=Framing.CONFLUENT), REGISTRY, topics)


def test_plain_payloads_decode_and_encode_back() -> None:
    reader = CODEC.resolve(_payload("id BIGINT, tags ARRAY<STRING>, at TIMESTAMP"), None, ["t"])
    decode = CODEC.decoder(reader, TYPE, None)
    encode = CODEC.encoder(WriterColumn(_payload(), TYPE, None, "t"))
    value = decode(b'{"id": 7, "tags": ["a"], "at": "2024-01-02T03:04:05.250Z"}')
    assert value == {"id": 7, "tags": ["a"], "at": datetime(2024, 1, 2, 3, 4, 5, 250000, UTC)}
    assert encode(value) == b'{"id":7,"tags":["a"],"at":"2024-01-02T03:04:05.250Z"}'
    assert decode(encode(value)) == value


def test_framed_payloads_lose_their_header_and_failures_keep_the_schema_id() -> None:
    reader = CODEC.resolve(_payload("id BIGINT", framing=Framing.CONFLUENT), None, ["t"])
    decode = CODEC.decoder(reader, StructType([StructField("id", LongType())]), None)
    assert decode(frame(42, b'{"id": 1}')) == {"id": 1}
    with pytest.raises(PayloadDecodeError) as failed:
        decode(frame(42, b'{"id": "x"}'))
    assert failed.value.schema_id == 42
    assert "id: expected an integer" in failed.value.reason
    with pytest.raises(PayloadDecodeError, match="magic byte"):
        decode(b'{"id": 1}')


def test_a_type_from_json_cannot_read_names_the_option() -> None:
    reader = CODEC.resolve(_payload("m MAP<INT, STRING>"), None, ["t"])
    spark_type = StructType([StructField("m", MapType(IntegerType(), StringType()))])
    with pytest.raises(InvalidOptionError, match="valueSchema.*keys are strings"):
        CODEC.decoder(reader, spark_type, None)


def test_json_takes_its_schema_from_the_registry_when_none_is_given() -> None:
    values = {"valueFormat": "json"}
    registry = {"schema.registry.url": "http://registry:8081"}
    settings = payload_settings(values, registry)
    assert settings.value.schema is None and settings.value.framing is Framing.CONFLUENT
    with pytest.raises(InvalidOptionError, match="valueSchema.*schema.registry.url"):
        payload_settings(values, {})


def test_framed_payloads_decode_a_column_at_a_time_as_record_by_record() -> None:
    reader = CODEC.resolve(_payload("id BIGINT", framing=Framing.CONFLUENT), None, ["t"])
    spark_type = StructType([StructField("id", LongType())])
    decode = CODEC.decoder(reader, spark_type, None)
    from pyspark.sql.pandas.types import to_arrow_type

    arrow_type = to_arrow_type(spark_type, timezone="UTC")
    decode_column = CODEC.column_decoder(reader, spark_type, arrow_type, None)
    assert decode_column is not None
    payloads = [frame(42, b'{"id": 1}'), None, frame(7, b'{"id": 2}'), frame(7, b"")]
    column = decode_column(pa.array(payloads, pa.binary()))
    assert column is not None
    assert column.to_pylist() == [None if p is None else decode(p) for p in payloads]
    for bad in (b'{"id": 1}', b"\x00\x00", frame(7, b'{"id": "x"}')):  # record by record
        assert decode_column(pa.array([frame(7, b'{"id": 3}'), bad], pa.binary())) is None


def test_an_unknown_writer_schema_id_gives_a_framed_column_up() -> None:
    known = {7}

    def check(schema_id: int) -> None:
        if schema_id not in known:
            raise PayloadDecodeError(f"no schema id {schema_id}", schema_id)

    decode_column = column_reader_for(StructType([StructField("id", LongType())]), check)
    assert decode_column is not None
    assert decode_column(pa.array([frame(7, b'{"id": 1}')], pa.binary())) is not None
    assert decode_column(pa.array([frame(8, b'{"id": 1}')], pa.binary())) is None
