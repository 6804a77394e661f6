"""Under ``DEADLETTER`` the records that do not decode are set apart, with their reasons."""

from __future__ import annotations

from pyspark.sql.types import LongType, StructField, StructType

from kafka_rescalable.formats.codec import ReaderSchema
from kafka_rescalable.formats.decoding import DecodePlan, decode_batch, decode_separating
from kafka_rescalable.formats.options import DecodeMode, PayloadFormat, PayloadOptions
from tests.connector.formats.avro_batches import batch

ORDER = StructType([StructField("id", LongType())])


def _plan(mode: DecodeMode) -> DecodePlan:
    payload = PayloadOptions("value", PayloadFormat.JSON, schema="ddl")
    reader = ReaderSchema(payload, "ddl", f"STRUCT<{ORDER.simpleString()}>")
    return DecodePlan((reader,), (ORDER.json(),), mode, None)


def test_bad_records_leave_the_batch_with_the_reason_permissive_gives() -> None:
    source = batch([b'{"id": 1}', b"{", None, b'{"id": "x"}', b'{"id": 5}'])
    separated = decode_separating(source, _plan(DecodeMode.DEADLETTER))
    assert separated.good.to_pydict()["value"] == [{"id": 1}, None, {"id": 5}]
    assert separated.good.to_pydict()["offset"] == [0, 2, 4]
    assert "decodeError" not in separated.good.schema.names
    assert separated.bad_rows == (1, 3)
    permissive = decode_batch(source, _plan(DecodeMode.PERMISSIVE)).to_pydict()
    assert list(separated.reasons) == [permissive["decodeError"][1], permissive["decodeError"][3]]


def test_a_clean_batch_is_all_good() -> None:
    source = batch([b'{"id": 1}', b'{"id": 2}'])
    separated = decode_separating(source, _plan(DecodeMode.DEADLETTER))
    assert separated.bad_rows == () and separated.good.num_rows == 2
