"""The ``protobuf`` codec without Kafka: resolve, decode into Arrow's values, encode back."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from protobuf_samples import LEGACY, descriptor_set, file_proto, message_classes, shop_classes
from protobuf_samples import shop_set as make_shop_set
from pyspark.sql.pandas.types import to_arrow_type

from kafka_rescalable.errors import InvalidOptionError, PayloadDecodeError
from kafka_rescalable.formats.codec import ReaderSchema, WriterColumn
from kafka_rescalable.formats.options import Framing, PayloadFormat, PayloadOptions
from kafka_rescalable.formats.protobuf_codec import CODEC
from kafka_rescalable.formats.registry import frame

CLASSES = shop_classes()
Order, Line, Voucher = CLASSES["shop.Order"], CLASSES["shop.Line"], CLASSES["shop.Voucher"]
UTC = timezone.utc


@pytest.fixture(scope="module")
def shop_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("protobuf") / "shop.desc"
    path.write_bytes(make_shop_set())
    return path


def _payload(path: Path, message: str = "shop.Order", framing: Framing = Framing.NONE):
    return PayloadOptions(
        "value", PayloadFormat.PROTOBUF, schema=str(path), message=message, framing=framing
    )


def _decoder(path: Path, message: str = "shop.Order", framing: Framing = Framing.NONE):
    reader = CODEC.resolve(_payload(path, message, framing), None, ["orders"])
    return reader, CODEC.decoder(reader, reader.spark_type, None)


def _full_order() -> Any:
    order = Order(
        id=7,
        customer="Zoë",
        lines=[Line(sku="a", qty=2), Line(sku="b")],
        tags={"rush": 1, "gift": 0},
        status=Order.Status.Value("SHIPPED"),
        voucher=Voucher(code="SPRING"),
        note="",
        u32=2**32 - 1,
        u64=2**64 - 2,
        f64=5,
        total=12.5,
        weight=0.25,
        gift=True,
        blob=b"\x00\xff",
        lines_by_no={3: Line(sku="c", qty=1)},
        history=[1, 2, 9],
    )
    order.placed_at.FromDatetime(datetime(2024, 2, 29, 23, 59, 58, 123456))
    order.placed_at.nanos += 999  # below the microsecond: cut
    order.ttl.seconds, order.ttl.nanos = -90, -500_999
    order.events.add(seconds=0)
    order.nothing.SetInParent()
    return order


FULL_ROW = {
    "id": 7,
    "customer": "Zoë",
    "lines": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 0}],
    "tags": {"rush": 1, "gift": 0},
    "status": "SHIPPED",
    "placed_at": datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC),
    "card": None,
    "voucher": {"code": "SPRING"},
    "note": "",
    "u32": -1,
    "u64": -2,
    "f64": 5,
    "total": 12.5,
    "weight": 0.25,
    "gift": True,
    "blob": b"\x00\xff",
    "ttl": -timedelta(seconds=90, microseconds=500),
    "lines_by_no": {3: {"sku": "c", "qty": 1}},
    "events": [datetime(1970, 1, 1, tzinfo=UTC)],
    "history": ["PAID", "SHIPPED", "UNKNOWN_ENUM_VALUE_Status_9"],
}


def test_resolve_keeps_the_files_bytes_and_the_struct(shop_set: Path) -> None:
    reader = CODEC.resolve(_payload(shop_set), None, ["orders"])
    assert reader.definition == shop_set.read_bytes()
    assert reader.spark_type is not None
    assert reader.spark_ddl.startswith("STRUCT<`id`: BIGINT")


def test_a_missing_file_is_refused_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError) as refused:
        CODEC.resolve(_payload(tmp_path / "nowhere.desc"), None, ["orders"])
    assert refused.value.option == "valueSchema"
    assert "nowhere.desc" in str(refused.value)
    assert "--descriptor_set_out" in str(refused.value)


def test_a_message_decodes_into_values_arrow_takes(shop_set: Path) -> None:
    reader, decode = _decoder(shop_set)
    row = decode(_full_order().SerializeToString())
    assert row == FULL_ROW
    (back,) = pa.array([row], to_arrow_type(reader.spark_type, timezone="UTC")).to_pylist()
    assert {**back, "tags": dict(back["tags"]), "lines_by_no": dict(back["lines_by_no"])} == row


def test_unset_fields_are_null_where_presence_is_tracked_else_their_default(
    shop_set: Path,
) -> None:
    reader, decode = _decoder(shop_set)
    row = decode(b"")
    assert row == {
        "id": 0,
        "customer": "",
        "lines": [],
        "tags": {},
        "status": "UNKNOWN",
        "placed_at": None,
        "card": None,
        "voucher": None,
        "note": None,
        "u32": 0,
        "u64": 0,
        "f64": 0,
        "total": 0.0,
        "weight": 0.0,
        "gift": False,
        "blob": b"",
        "ttl": None,
        "lines_by_no": {},
        "events": [],
        "history": [],
    }
    pa.array([row, row], to_arrow_type(reader.spark_type, timezone="UTC"))


def test_proto2_defaults_and_presence(tmp_path: Path) -> None:
    path = tmp_path / "legacy.desc"
    path.write_bytes(descriptor_set(file_proto(LEGACY)))
    _, decode = _decoder(path, "legacy.Account")
    account = message_classes(file_proto(LEGACY))["legacy.Account"]
    assert decode(account(id=3).SerializeToString()) == {"id": 3, "name": "anon", "visits": None}
    with pytest.raises(PayloadDecodeError, match="not a valid legacy.Account message"):
        decode(b"")  # the required id is missing


def test_a_framed_record_names_its_message_by_index_path(shop_set: Path) -> None:
    _, decode = _decoder(shop_set, "shop.Line", Framing.CONFLUENT)
    body = Line(sku="x", qty=4).SerializeToString()
    # one index (zig-zag 2), the second top-level message (zig-zag 1 -> 2)
    assert decode(frame(12, b"\x02\x02" + body)) == {"sku": "x", "qty": 4}
    with pytest.raises(PayloadDecodeError) as refused:
        decode(frame(12, b"\x00" + body))
    assert refused.value.schema_id == 12
    assert "the writer used message shop.Order (index path [0]" in str(refused.value)
    _, decode_order = _decoder(shop_set, "shop.Order", Framing.CONFLUENT)
    assert decode_order(frame(3, b"\x00" + _full_order().SerializeToString())) == FULL_ROW


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"\x08\x96", "not a valid shop.Order message"),  # a truncated varint
        (b"\x0a\xff\xff", "not a valid shop.Order message"),
        (frame(5, b"\x00\x08\x96"), "not a valid shop.Order message"),  # framed, read as plain
    ],
)
def test_malformed_plain_payloads_fail_to_decode(
    shop_set: Path, payload: bytes, reason: str
) -> None:
    _, decode = _decoder(shop_set)
    with pytest.raises(PayloadDecodeError, match=reason):
        decode(payload)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"\x30\x50", "field shop.Order.placed_at \\(number 6\\) came as a varint"),
        (b"\x08\x01\x11" + bytes(8), "field shop.Order.customer \\(number 2\\) came as a 64-bit"),
        (b"\x0d" + bytes(4), "field shop.Order.id \\(number 1\\) came as a 32-bit value"),
    ],
    ids=["message-as-varint", "string-as-fixed64", "int64-as-fixed32"],
)
def test_a_field_of_the_message_with_another_wire_type_fails_the_record(
    shop_set: Path, payload: bytes, reason: str
) -> None:
    # protobuf's parser sets such a field aside as unknown; spark-protobuf refuses the record
    # (the writer's schema was another), and so does the Python path, naming the field.
    _, decode = _decoder(shop_set)
    with pytest.raises(PayloadDecodeError, match=f"not a valid shop.Order message: {reason}"):
        decode(payload)


def test_a_misfit_inside_a_nested_message_is_skipped_as_spark_protobuf_skips_it(
    shop_set: Path,
) -> None:
    # spark-protobuf checks the top level only: a nested field with another wire type reads as
    # unset, as protobuf's parser leaves it.
    _, decode = _decoder(shop_set)
    line = b"\x08\x05\x10\x02"  # sku (a string) as the varint 5, then qty 2
    row = decode(b"\x08\x07\x1a" + bytes([len(line)]) + line)
    assert (row["id"], row["lines"]) == (7, [{"sku": "", "qty": 2}])


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"\x01\x00\x00\x00\x07\x00", "unknown magic byte"),
        (b"\x00\x00\x00", "shorter than the registry framing"),
        (frame(7, b"\x08\x96"), "truncated Protobuf message indexes"),  # plain, read as framed
        (frame(7, b"\x02\x06" + b"\x08\x01"), "the writer used message shop.Empty"),
        (frame(7, b"\x02\x10"), "the writer used a message \\(index path \\[8\\]"),
        (frame(7, b"\x00\x08\x96"), "not a valid shop.Order message"),
    ],
)
def test_malformed_framed_payloads_fail_to_decode(
    shop_set: Path, payload: bytes, reason: str
) -> None:
    _, decode = _decoder(shop_set, framing=Framing.CONFLUENT)
    with pytest.raises(PayloadDecodeError, match=reason):
        decode(payload)


def test_rows_encode_into_the_message_they_decode_from(shop_set: Path) -> None:
    reader, decode = _decoder(shop_set)
    encode = CODEC.encoder(WriterColumn(_payload(shop_set), reader.spark_type, None, "orders"))
    order = _full_order()
    order.ClearField("nothing")  # not in the Spark type, so not written back
    del order.history[2]  # an unknown enum value has no name to write back
    row = decode(order.SerializeToString())
    as_arrow = pa.array([row], to_arrow_type(reader.spark_type, timezone="UTC")).to_pylist()[0]
    written = Order.FromString(encode(as_arrow))
    order.placed_at.nanos -= 999  # Spark keeps microseconds
    order.ttl.nanos = -500_000
    assert written == order
    assert decode(encode(as_arrow)) == row
    assert Order.FromString(encode({})) == Order()


def test_the_sink_may_write_fewer_fields_but_no_unknown_one(shop_set: Path) -> None:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    some = StructType([StructField("customer", StringType()), StructField("id", LongType())])
    encode = CODEC.encoder(WriterColumn(_payload(shop_set), some, None, "orders"))
    assert Order.FromString(encode({"id": 5, "customer": None})) == Order(id=5)
    unknown = StructType([StructField("id", LongType()), StructField("price", LongType())])
    with pytest.raises(InvalidOptionError, match="shop.Order has no field 'price'"):
        CODEC.encoder(WriterColumn(_payload(shop_set), unknown, None, "orders"))


def test_registry_framing_without_a_registry_is_refused(shop_set: Path) -> None:
    reader = CODEC.resolve(_payload(shop_set), None, ["orders"])
    with pytest.raises(InvalidOptionError) as refused:
        framed = _payload(shop_set, framing=Framing.CONFLUENT)
        CODEC.encoder(WriterColumn(framed, reader.spark_type, None, "t"))
    assert refused.value.option == "valueFraming"


@pytest.fixture(scope="module")
def round_trip(shop_set: Path) -> tuple[ReaderSchema, Any, Any]:
    reader, decode = _decoder(shop_set)
    encode = CODEC.encoder(WriterColumn(_payload(shop_set), reader.spark_type, None, "orders"))
    return reader, decode, encode


@given(
    u32=st.integers(0, 2**32 - 1),
    u64=st.integers(0, 2**64 - 1),
    seconds=st.integers(-(10**10), 10**10),
    micros=st.integers(0, 999_999),
)
def test_unsigned_integers_and_times_survive_a_round_trip(
    round_trip: tuple[ReaderSchema, Any, Any], u32: int, u64: int, seconds: int, micros: int
) -> None:
    reader, decode, encode = round_trip
    order = Order(u32=u32, u64=u64)
    order.placed_at.seconds, order.placed_at.nanos = seconds, micros * 1000
    # a Duration's nanos have the sign of its seconds
    order.ttl.seconds, order.ttl.nanos = seconds, micros * 1000 * (-1 if seconds < 0 else 1)
    row = decode(order.SerializeToString())
    assert -(2**31) <= row["u32"] < 2**31
    assert -(2**63) <= row["u64"] < 2**63
    assert Order.FromString(encode(row)) == order
    pa.array([row], to_arrow_type(reader.spark_type, timezone="UTC"))
