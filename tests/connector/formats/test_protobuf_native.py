"""The native Protobuf decoder against the Python path: equal arrays, or a declined batch.

Every test builds the column both ways: the native core's array (``column_decoder``), and the
Python path's (``decoder`` record by record, then ``pa.array`` of the Spark type's Arrow type,
as :func:`kafka_rescalable.formats.decoding.decode_batch` does). Either the native path
declines (``None``: the batch goes to the Python path) or the two are equal. Map entries are
compared in key order: protobuf's Python maps iterate in a hash order that changes from one
process to the next, so the Python path has no order to match.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from protobuf_samples import (
    LEGACY,
    WELL_KNOWN,
    descriptor_set,
    file_proto,
    message_classes,
    shop_classes,
)
from protobuf_samples import shop_set as make_shop_set
from pyspark.sql.pandas.types import to_arrow_type

from kafka_rescalable.errors import PayloadDecodeError
from kafka_rescalable.formats.decoding import DecodePlan, decode_batch
from kafka_rescalable.formats.native_core import NATIVE_ENV
from kafka_rescalable.formats.options import DecodeMode, Framing, PayloadFormat, PayloadOptions
from kafka_rescalable.formats.protobuf_codec import CODEC
from kafka_rescalable.formats.registry import frame
from tests.connector.formats.avro_batches import batch

native = pytest.importorskip("kafka_rescalable_native")
if not hasattr(native, "ProtobufDecoder"):
    pytest.skip("the installed native core predates ProtobufDecoder", allow_module_level=True)

Order = shop_classes()["shop.Order"]

# syntax = "proto2"; package old;
# message Item { enum Kind { ONE = 1; TWO = 2; } optional int32 a = 1; optional string s = 2;
#   optional Kind k = 3; repeated Kind ks = 4; optional bytes b = 5; optional Sub sub = 6;
#   repeated sint64 xs = 7 [packed = true]; optional fixed32 f = 8; }
# message Sub { optional int64 x = 1; }
# message Defaults { optional string s = 1 [default = "d"]; }
PROTO2 = """
name: "old.proto" package: "old" syntax: "proto2"
message_type {
  name: "Item"
  field { name: "a" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 }
  field { name: "s" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "k" number: 3 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: ".old.Item.Kind" }
  field { name: "ks" number: 4 label: LABEL_REPEATED type: TYPE_ENUM type_name: ".old.Item.Kind" }
  field { name: "b" number: 5 label: LABEL_OPTIONAL type: TYPE_BYTES }
  field { name: "sub" number: 6 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".old.Sub" }
  field { name: "xs" number: 7 label: LABEL_REPEATED type: TYPE_SINT64 options { packed: true } }
  field { name: "f" number: 8 label: LABEL_OPTIONAL type: TYPE_FIXED32 }
  enum_type { name: "Kind" value { name: "ONE" number: 1 } value { name: "TWO" number: 2 } }
}
message_type {
  name: "Sub"
  field { name: "x" number: 1 label: LABEL_OPTIONAL type: TYPE_INT64 }
}
message_type {
  name: "Defaults"
  field { name: "s" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING default_value: "d" }
}
"""
Item = message_classes(file_proto(PROTO2))["old.Item"]

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
TIMESTAMPS = st.fixed_dictionaries(
    {},
    optional={
        "seconds": st.one_of(st.integers(-(10**11), 3 * 10**11), INT64),
        "nanos": INT32,
    },
)
DURATIONS = st.fixed_dictionaries(
    {}, optional={"seconds": st.one_of(st.integers(-(10**12), 10**12), INT64), "nanos": INT32}
)
LINES = st.fixed_dictionaries({}, optional={"sku": st.text(max_size=5), "qty": INT32})
STATUS = st.integers(-3, 4)  # an open (proto3) enum: unknown numbers are kept
ORDERS = st.fixed_dictionaries(
    {},
    optional={
        "id": INT64,
        "customer": st.text(max_size=8),
        "lines": st.lists(LINES, max_size=3),
        "tags": st.dictionaries(st.text(max_size=4), INT32, max_size=4),
        "status": STATUS,
        "placed_at": TIMESTAMPS,
        "card": st.text(max_size=4),
        "voucher": st.fixed_dictionaries({}, optional={"code": st.text(max_size=4)}),
        "note": st.text(max_size=4),
        "u32": st.integers(0, 2**32 - 1),
        "u64": st.integers(0, 2**64 - 1),
        "f64": st.integers(0, 2**64 - 1),
        "total": st.floats(allow_nan=False),
        "weight": st.floats(width=32, allow_nan=False),
        "gift": st.booleans(),
        "blob": st.binary(max_size=6),
        "ttl": DURATIONS,
        "lines_by_no": st.dictionaries(INT32, LINES, max_size=3),
        "nothing": st.just({}),
        "events": st.lists(TIMESTAMPS, max_size=3),
        "history": st.lists(STATUS, max_size=4),
    },
)
ITEMS = st.fixed_dictionaries(
    {},
    optional={
        "a": INT32,
        "s": st.text(max_size=4),
        "k": st.sampled_from([1, 2]),
        "ks": st.lists(st.sampled_from([1, 2]), max_size=3),
        "b": st.binary(max_size=4),
        "sub": st.fixed_dictionaries({}, optional={"x": INT64}),
        "xs": st.lists(INT64, max_size=3),
        "f": st.integers(0, 2**32 - 1),
    },
)


@pytest.fixture(autouse=True)
def _native_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NATIVE_ENV, raising=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("protobuf-native")
    sets = {
        "shop": make_shop_set(),
        "old": descriptor_set(file_proto(PROTO2)),
        "legacy": descriptor_set(file_proto(LEGACY)),
    }
    paths = {}
    for name, data in sets.items():
        paths[name] = folder / f"{name}.desc"
        paths[name].write_bytes(data)
    return paths


Paths = Callable[[pa.Array], "pa.Array | None"]


def _paths(path: Path, message: str, framing: Framing = Framing.NONE) -> tuple[Paths, Any]:
    """Return the native column decoder, and the Python path as a function of payloads."""
    payload = PayloadOptions(
        "value", PayloadFormat.PROTOBUF, schema=str(path), message=message, framing=framing
    )
    reader = CODEC.resolve(payload, None, ["orders"])
    arrow_type = to_arrow_type(reader.spark_type, timezone="UTC")
    column = CODEC.column_decoder(reader, reader.spark_type, arrow_type, None)
    assert column is not None
    decode = CODEC.decoder(reader, reader.spark_type, None)

    def python(payloads: list[bytes | None]) -> pa.Array:
        values = [None if p is None else decode(p) for p in payloads]
        return pa.array(values, arrow_type)

    return column, python


def in_key_order(array: pa.Array) -> pa.Array:
    """``array`` with every map's entries in key order, its times (even past Python's) kept."""
    plain = _times_as_int64(array.type)
    return pa.array(_sorted_maps(array.cast(plain).to_pylist()), plain).cast(array.type)


def plain_values(array: pa.Array) -> list[Any]:
    """``to_pylist`` with times as microseconds: Arrow holds years Python's datetime cannot."""
    return array.cast(_times_as_int64(array.type)).to_pylist()


def same_values(got: pa.Array, expected: pa.Array) -> bool:
    """Whether two arrays hold the same values, every NaN equal to every other.

    Arrow's ``equals`` holds no NaN equal, not even to itself, and the two paths may give a
    NaN with other bits (the Python path's goes through a Python float).
    """
    return _nans_named(plain_values(got)) == _nans_named(plain_values(expected))


def _nans_named(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {key: _nans_named(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_nans_named(item) for item in value)
    return value


def _times_as_int64(data_type: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(data_type) or pa.types.is_duration(data_type):
        return pa.int64()
    if pa.types.is_struct(data_type):
        return pa.struct([field.with_type(_times_as_int64(field.type)) for field in data_type])
    if pa.types.is_map(data_type):
        item = data_type.item_field
        return pa.map_(data_type.key_field, item.with_type(_times_as_int64(item.type)))
    if pa.types.is_list(data_type):
        element = data_type.value_field
        return pa.list_(element.with_type(_times_as_int64(element.type)))
    return data_type


def _sorted_maps(value: Any) -> Any:
    """``value`` (from ``to_pylist``) with every map's entries in key order."""
    if isinstance(value, dict):
        return {key: _sorted_maps(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [_sorted_maps(item) for item in value]
        if items and all(isinstance(item, tuple) for item in items):
            return sorted(items, key=lambda pair: pair[0])
        return items
    if isinstance(value, tuple):
        return tuple(_sorted_maps(item) for item in value)
    return value


def _assert_parity(column: Paths, python: Any, payloads: list[bytes | None]) -> bool:
    """Assert the native array equals the Python path's, or that native declined; say which."""
    array = pa.array(payloads, pa.binary())
    got = column(array)
    try:
        expected = python(payloads)
    except Exception:  # noqa: BLE001 - the Python path refuses a record: native must decline
        assert got is None
        return False
    if got is None:
        return False
    assert got.type == expected.type
    assert same_values(got, in_key_order(expected)), (plain_values(got), plain_values(expected))
    return True


def _payloads(messages: list[dict[str, Any] | None], cls: Any) -> Iterator[bytes | None]:
    for fields in messages:
        yield None if fields is None else cls(**fields).SerializeToString()


@settings(max_examples=150)
@given(st.lists(st.one_of(st.none(), ORDERS), min_size=1, max_size=6))
def test_random_orders_decode_alike(files: dict[str, Path], orders: list[Any]) -> None:
    column, python = _paths(files["shop"], "shop.Order")
    payloads = list(_payloads(orders, Order))
    _assert_parity(column, python, payloads)


@settings(max_examples=100)
@given(st.lists(st.one_of(st.none(), ITEMS), min_size=1, max_size=6))
def test_random_proto2_items_decode_alike(files: dict[str, Path], items: list[Any]) -> None:
    column, python = _paths(files["old"], "old.Item")
    assert _assert_parity(column, python, list(_payloads(items, Item)))


@settings(max_examples=300)
@given(st.binary(max_size=24))
@example(b"\x98\x01\x05")  # a field Spark leaves out (an empty message), as a varint
def test_random_bytes_decode_alike_or_decline(files: dict[str, Path], payload: bytes) -> None:
    column, python = _paths(files["shop"], "shop.Order")
    _assert_parity(column, python, [payload])


def test_a_plain_order_is_decoded_natively(files: dict[str, Path]) -> None:
    column, python = _paths(files["shop"], "shop.Order")
    order = Order(
        id=7,
        tags={"b": 2, "a": 1},
        status=9,
        placed_at={"seconds": 1, "nanos": -1},
        voucher={"code": "x"},
        u32=2**32 - 1,
        ttl={"seconds": -1, "nanos": -1500},
        history=[1, 7],
    )
    assert _assert_parity(column, python, [order.SerializeToString(), None])


@pytest.mark.parametrize(
    ("payload", "natively"),
    [
        (b"\x3a\x01a\x42\x03\x0a\x01b", True),  # oneof: card, then voucher wins
        (b"\x42\x03\x0a\x01b\x3a\x01a", True),  # oneof: voucher, then card wins
        (b"\x22\x05\x0a\x01k\x10\x01\x22\x05\x0a\x01k\x10\x02", True),  # map: last key wins
        (b"\xa8\x01\x02\xaa\x01\x02\x01\x09", True),  # repeated enum: unpacked and packed
        (b"\x32\x02\x10\x05\x32\x02\x08\x03", True),  # a message given twice is merged
        (b"\x0a\x00", False),  # a known field's wrong wire type: both decline, Python fails it
        (b"\x98\x01\x05", False),  # the same for a field Spark leaves out (an empty message)
        (b"\x9a\x01\x01\xff", False),  # that field's body does not parse: Python fails it
        (b"\x9a\x01\x02\x08\x01", True),  # its body holds a field Empty does not know
        (b"\x1a\x02\x0a\x00", True),  # a wrong wire type inside a nested message: unset
    ],
    ids=[
        "oneof-last",
        "oneof-first",
        "map-key-twice",
        "packed",
        "merged",
        "wrong-wire-type",
        "unread-wrong-wire-type",
        "unread-malformed",
        "unread-unknown-inside",
        "nested-wrong-wire-type",
    ],
)
def test_wire_format_corners_decode_alike(
    files: dict[str, Path], payload: bytes, natively: bool
) -> None:
    column, python = _paths(files["shop"], "shop.Order")
    assert _assert_parity(column, python, [payload]) is natively


@pytest.mark.parametrize("depth", [99, 100, 101])
@pytest.mark.parametrize("prefix", [b"", b"\x42"], ids=["top", "in-voucher"])
def test_nesting_limits_agree(files: dict[str, Path], depth: int, prefix: bytes) -> None:
    """Unknown groups nested to protobuf's and prost's limits (100 each) decode alike."""
    column, python = _paths(files["shop"], "shop.Order")
    groups = b"\xf3\x01" * depth + b"\xf4\x01" * depth  # field 30: start and end group
    payload = groups if not prefix else prefix + _varint(len(groups)) + groups
    _assert_parity(column, python, [payload])


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def test_framed_orders_with_the_message_indexes_are_decoded_natively(
    files: dict[str, Path],
) -> None:
    column, python = _paths(files["shop"], "shop.Line", Framing.CONFLUENT)
    body = shop_classes()["shop.Line"](sku="x", qty=4).SerializeToString()
    assert _assert_parity(column, python, [frame(12, b"\x02\x02" + body), None])


def test_framed_records_of_another_message_go_to_the_python_path(
    files: dict[str, Path],
) -> None:
    column, _ = _paths(files["shop"], "shop.Line", Framing.CONFLUENT)
    body = shop_classes()["shop.Line"](sku="x").SerializeToString()
    assert column(pa.array([frame(12, b"\x00" + body)], pa.binary())) is None
    assert column(pa.array([b"\x01\x00\x00\x00\x0c\x00"], pa.binary())) is None  # magic byte


@pytest.mark.parametrize(
    ("name", "message"),
    [("legacy", "legacy.Account"), ("old", "old.Defaults")],
    ids=["required", "explicit-default"],
)
def test_schemas_not_proven_go_to_the_python_path(
    files: dict[str, Path], name: str, message: str
) -> None:
    column, _ = _paths(files[name], message)
    assert column(pa.array([b""], pa.binary())) is None


@pytest.mark.parametrize(
    "payload",
    [
        b"\x18\x07",  # an unknown number of a closed (proto2) enum: an unknown field to Python
        b"\x22\x01\x07",  # the same in a packed repeated enum
        b"\x12\x02\xff\xfe",  # a string that is not UTF-8
        b"\x08",  # truncated
    ],
    ids=["closed-enum", "closed-enum-packed", "utf8", "truncated"],
)
def test_records_the_core_cannot_match_send_the_batch_to_the_python_path(
    files: dict[str, Path], payload: bytes
) -> None:
    column, _ = _paths(files["old"], "old.Item")
    assert column(pa.array([Item(a=1).SerializeToString(), payload], pa.binary())) is None


@pytest.mark.parametrize(
    ("fields", "micros"),
    [
        ({"placed_at": {"seconds": 253_402_300_800}}, 253_402_300_800_000_000),  # year 10000
        ({"events": [{"seconds": -62_135_596_801}]}, -62_135_596_801_000_000),  # before year 1
        ({"placed_at": {"nanos": -1}}, 0),  # cut toward zero, as Java divides: the epoch
        ({"placed_at": {"seconds": -1, "nanos": -1999}}, -1_000_001),
        ({"ttl": {"seconds": 9_223_372_036_854, "nanos": 775_807_999}}, 2**63 - 1),
        ({"ttl": {"seconds": -9_223_372_036_854, "nanos": -775_808_000}}, -(2**63)),
    ],
    ids=["year-10000", "before-year-1", "negative-nanos", "both-negative", "max", "min"],
)
def test_times_read_as_spark_protobuf_counts_them_on_both_paths(
    files: dict[str, Path], fields: dict[str, Any], micros: int
) -> None:
    # Seconds and nanos in microseconds, the nanos cut toward zero, as spark-protobuf does, even
    # where protobuf calls the message invalid or Python's datetime cannot hold the year.
    column, python = _paths(files["shop"], "shop.Order")
    payloads = [Order(**fields).SerializeToString()]
    assert _assert_parity(column, python, payloads)
    (row,) = plain_values(python(payloads))
    (name, value), *_ = fields.items()
    assert (row[name][0] if isinstance(value, list) else row[name]) == micros


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"placed_at": {"seconds": 9_223_372_036_855}}, "shop.Order.placed_at"),
        ({"events": [{"seconds": -(2**63)}]}, "shop.Order.events"),
        ({"ttl": {"seconds": 2**63 - 1}}, "shop.Order.ttl"),  # hypothesis: abs() overflowed
        ({"ttl": {"seconds": -9_223_372_036_854, "nanos": -775_809_000}}, "shop.Order.ttl"),
    ],
    ids=["timestamp-after", "timestamp-before", "duration-max", "duration-min"],
)
def test_times_past_64_bit_microseconds_fail_the_record_naming_the_field(
    files: dict[str, Path], fields: dict[str, Any], field: str
) -> None:
    column, python = _paths(files["shop"], "shop.Order")
    payload = Order(**fields).SerializeToString()
    assert column(pa.array([payload], pa.binary())) is None
    with pytest.raises(PayloadDecodeError, match=f"field {field}: a .* is beyond the 64-bit"):
        python([payload])


@pytest.mark.parametrize(
    "payload",
    [b"\x18\x07", b"\x22\x01\x07"],  # k = 7, and 7 in the packed ks: Kind has 1 and 2
    ids=["closed-enum", "closed-enum-packed"],
)
def test_a_closed_enums_unknown_number_fails_the_record_as_in_spark_protobuf(
    files: dict[str, Path], payload: bytes
) -> None:
    # protobuf's parser keeps it aside as an unknown field, which spark-protobuf refuses at the
    # message's top level; the core declines and the Python path names the field.
    column, python = _paths(files["old"], "old.Item")
    assert column(pa.array([payload], pa.binary())) is None
    with pytest.raises(PayloadDecodeError, match="7 is not a number of the closed enum old"):
        python([payload])


# syntax = "proto2"; package cm; import "google/protobuf/timestamp.proto";
# enum Kind { Z = 0; A = 1; }  // a map's enum values must start at 0
# message M { map<int32, Kind> kinds = 1; optional Kind k = 2;
#             map<string, google.protobuf.Timestamp> at = 3; }
CLOSED_MAP = """
name: "cm.proto" package: "cm" syntax: "proto2" dependency: "google/protobuf/timestamp.proto"
message_type {
  name: "M"
  field { name: "kinds" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".cm.M.KindsEntry" }
  field { name: "k" number: 2 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: ".cm.Kind" }
  field { name: "at" number: 3 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".cm.M.AtEntry" }
  nested_type {
    name: "KindsEntry" options { map_entry: true }
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: ".cm.Kind" }
  }
  nested_type {
    name: "AtEntry" options { map_entry: true }
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE
            type_name: ".google.protobuf.Timestamp" }
  }
}
enum_type { name: "Kind" value { name: "Z" number: 0 } value { name: "A" number: 1 } }
"""


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"\x0a\x04\x08\x01\x10\x07", "field cm.M.kinds: an entry's value is not a number"),
        (b"\x10" + b"\xff" * 9 + b"\x01", "field cm.M.k: -1 is not a number of the closed enum"),
        # a map entry's Timestamp past 64-bit microseconds: the map is named, not its entry
        (b"\x1a\x0f\x0a\x01t\x12\x0a\x08" + b"\xff" * 8 + b"\x7f", "field cm.M.at: a Timestamp"),
    ],
    ids=["map-value", "negative-number", "map-time"],
)
def test_reasons_name_the_field_the_user_wrote(tmp_path: Path, payload: bytes, reason: str) -> None:
    path = tmp_path / "cm.desc"
    path.write_bytes(descriptor_set(file_proto(CLOSED_MAP), *WELL_KNOWN))
    column, python = _paths(path, "cm.M")
    assert column(pa.array([payload], pa.binary())) is None
    with pytest.raises(PayloadDecodeError, match=reason):
        python([payload])


def test_the_native_switch_turns_it_off(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    column, _ = _paths(files["shop"], "shop.Order")
    monkeypatch.setenv(NATIVE_ENV, "0")
    assert column(pa.array([Order(id=1).SerializeToString()], pa.binary())) is None


def test_a_batch_with_a_bad_record_keeps_the_python_paths_reason(files: dict[str, Path]) -> None:
    """The core declines the batch; ``decode_batch`` reads it in Python and says why."""
    payload = PayloadOptions(
        "value", PayloadFormat.PROTOBUF, schema=str(files["shop"]), message="shop.Order"
    )
    reader = CODEC.resolve(payload, None, ["orders"])
    plan = DecodePlan((reader,), (reader.spark_type.json(),), DecodeMode.PERMISSIVE, None)
    good = Order(id=5, tags={"a": 1}).SerializeToString()

    decoded = decode_batch(batch([good, b"\x08", None]), plan).to_pydict()

    assert [row and row["id"] for row in decoded["value"]] == [5, None, None]
    assert decoded["decodeError"][0] is None
    assert decoded["decodeError"][1].startswith("value: not a valid shop.Order message")
