"""The native Protobuf decoder against the Python path: equal arrays, or a declined batch.

Every test builds the column both ways: the native core's array (``column_decoder``), and the
Python path's (``decoder`` record by record, then ``pa.array`` of the Spark type's Arrow type,
as :func:`kafka_rescalable.formats.decoding.decode_batch` does). Either the native path
declines (``None``: the batch goes to the Python path) or the two are equal. Map entries are
compared in key order: protobuf's Python maps iterate in a hash order that changes from one
process to the next, so the Python path has no order to match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protobuf_samples import LEGACY, descriptor_set, file_proto, message_classes, shop_classes
from protobuf_samples import shop_set as make_shop_set
from pyspark.sql.pandas.types import to_arrow_type

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
    normalized = pa.array(_sorted_maps(expected.to_pylist()), expected.type)
    assert got.equals(normalized), (got.to_pylist(), expected.to_pylist())
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
        (b"\x0a\x00", False),  # a known field's wrong wire type: Python skips it, prost fails
    ],
    ids=["oneof-last", "oneof-first", "map-key-twice", "packed", "merged", "wrong-wire-type"],
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
    "fields",
    [
        {"placed_at": {"seconds": 253_402_300_800}},  # year 10000: beyond datetime
        {"events": [{"seconds": -62_135_596_801}]},  # before year 1
        {"ttl": {"seconds": -(2**63)}},  # hypothesis found it: abs() overflowed in the core
        {"ttl": {"seconds": 2**63 - 1}},
    ],
    ids=["timestamp-after", "timestamp-before", "duration-min", "duration-max"],
)
def test_times_out_of_python_range_go_to_the_python_path(
    files: dict[str, Path], fields: dict[str, Any]
) -> None:
    column, python = _paths(files["shop"], "shop.Order")
    payload = Order(**fields).SerializeToString()
    assert column(pa.array([payload], pa.binary())) is None
    with pytest.raises(OverflowError):
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
