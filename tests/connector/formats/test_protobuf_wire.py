"""The native core's wire-format reader alone, against the Python path.

The core reads Protobuf payloads straight from the wire format (``protobuf_wire.rs``) and
hands a batch it is not sure of to its dynamic-message reader (``protobuf.rs``), which in
turn declines to the Python path. ``test_protobuf_native.py`` checks the core as a whole;
these tests call ``decode(..., wire_only=True)``, so a difference in the wire reader cannot
hide behind the reader it falls back to. The wire reader must equal the Python path wherever
it reads a batch, and must read every record protobuf's own serializer writes, unless the
Python path refuses it too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from protobuf_samples import descriptor_set, file_proto, message_classes
from protobuf_samples import shop_set as make_shop_set
from pyspark.sql.pandas.types import to_arrow_type

from kafka_rescalable.formats.options import Framing, PayloadFormat, PayloadOptions
from kafka_rescalable.formats.protobuf_codec import CODEC
from kafka_rescalable.formats.registry import frame
from tests.connector.formats.test_protobuf_native import (
    ITEMS,
    ORDERS,
    PROTO2,
    Item,
    Order,
    _payloads,
    in_key_order,
    plain_values,
    same_values,
)

native = pytest.importorskip("kafka_rescalable_native")

# syntax = "proto3"; package unsigned;
# message Keys { map<uint32, string> small = 1; map<uint64, string> large = 2; Sub sub = 3; }
# message Sub { int32 x = 1; }
UNSIGNED = """
name: "unsigned.proto" package: "unsigned" syntax: "proto3"
message_type {
  name: "Keys"
  field { name: "small" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".unsigned.Keys.SmallEntry" }
  field { name: "large" number: 2 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".unsigned.Keys.LargeEntry" }
  field { name: "sub" number: 3 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".unsigned.Sub" }
  nested_type {
    name: "SmallEntry" options { map_entry: true }
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_UINT32 }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING }
  }
  nested_type {
    name: "LargeEntry" options { map_entry: true }
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_UINT64 }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING }
  }
}
message_type {
  name: "Sub"
  field { name: "x" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 }
}
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("protobuf-wire")
    paths = {}
    sets = {
        "shop": make_shop_set(),
        "old": descriptor_set(file_proto(PROTO2)),
        "unsigned": descriptor_set(file_proto(UNSIGNED)),
    }
    for name, data in sets.items():
        paths[name] = folder / f"{name}.desc"
        paths[name].write_bytes(data)
    return paths


class Paths:
    """The wire reader and the Python path of one message, as functions of payloads."""

    def __init__(self, path: Path, message: str, framing: Framing = Framing.NONE) -> None:
        payload = PayloadOptions(
            "value", PayloadFormat.PROTOBUF, schema=str(path), message=message, framing=framing
        )
        reader = CODEC.resolve(payload, None, ["orders"])
        self.arrow_type = to_arrow_type(reader.spark_type, timezone="UTC")
        indexes = [0] if framing is Framing.CONFLUENT else None
        self.core = native.ProtobufDecoder(path.read_bytes(), message, self.arrow_type, indexes)
        self.decode = CODEC.decoder(reader, reader.spark_type, None)

    def wire(self, payloads: list[bytes | None]) -> pa.Array | None:
        """Return the wire reader's array, or ``None`` where it declines the batch."""
        try:
            return self.core.decode(pa.array(payloads, pa.binary()), wire_only=True)
        except native.NativeDecodeError:
            return None

    def python(self, payloads: list[bytes | None]) -> pa.Array | None:
        """Return the Python path's array, maps in key order; ``None`` if it refuses a record."""
        try:
            values = [None if p is None else self.decode(p) for p in payloads]
            plain = pa.array(values, self.arrow_type)
        except Exception:  # noqa: BLE001 - any refusal: the wire reader must decline too
            return None
        return in_key_order(plain)

    def whole(self, payloads: list[bytes | None]) -> pa.Array | None:
        """Return the whole core's array (wire reader, else dynamic messages), or ``None``."""
        try:
            return self.core.decode(pa.array(payloads, pa.binary()))
        except native.NativeDecodeError:
            return None


def _assert_alike(paths: Paths, payloads: list[bytes | None]) -> bool:
    """Assert the wire reader declines or equals the Python path; return whether it read."""
    got, expected = paths.wire(payloads), paths.python(payloads)
    if expected is None:
        assert got is None, "the wire reader read what the Python path refuses"
        return False
    if got is None:
        return False
    assert same_values(got, expected), (plain_values(got), plain_values(expected))
    return True


@settings(max_examples=150)
@given(st.lists(st.one_of(st.none(), ORDERS), min_size=1, max_size=6))
def test_serialized_orders_are_read_as_the_python_path_reads_them(
    files: dict[str, Path], orders: list[Any]
) -> None:
    paths = Paths(files["shop"], "shop.Order")
    payloads = list(_payloads(orders, Order))
    # protobuf's serializer writes each field once and one member per oneof: the wire reader
    # declines none of it, but what the core declines as a whole (times out of range).
    assert _assert_alike(paths, payloads) or paths.whole(payloads) is None


@settings(max_examples=100)
@given(st.lists(st.one_of(st.none(), ITEMS), min_size=1, max_size=6))
def test_serialized_proto2_items_are_read_as_the_python_path_reads_them(
    files: dict[str, Path], items: list[Any]
) -> None:
    assert _assert_alike(Paths(files["old"], "old.Item"), list(_payloads(items, Item)))


@settings(max_examples=400)
@given(st.binary(max_size=32))
@example(b"u\x00\x00\x81\x7f")  # weight: a float NaN with a payload; Arrow's equals fails NaNs
@example(b"\x98\x01\x05")  # a field Spark leaves out (an empty message), as a varint
def test_random_bytes_are_read_alike_or_declined(files: dict[str, Path], payload: bytes) -> None:
    _assert_alike(Paths(files["shop"], "shop.Order"), [payload])


@settings(max_examples=200)
@given(st.lists(ORDERS, min_size=2, max_size=4))
def test_concatenated_orders_are_read_alike(files: dict[str, Path], orders: list[Any]) -> None:
    """Read serialized orders one after the other as protobuf does: as one merged record.

    The last scalar wins, repeated fields and maps add up, messages merge; fields come out of
    order.
    """
    payload = b"".join(Order(**order).SerializeToString() for order in orders)
    _assert_alike(Paths(files["shop"], "shop.Order"), [payload])


@pytest.mark.parametrize(
    ("payload", "reads"),
    [
        (b"\x22\x05\x0a\x01k\x10\x01\x22\x05\x0a\x01k\x10\x02", True),  # map: last key wins
        (b"\x22\x05\x10\x01\x0a\x01k", True),  # map entry: value before key
        (b"\x22\x02\x10\x07", True),  # map entry without a key: the empty string
        (b"\xa8\x01\x02\xaa\x01\x02\x01\x09", True),  # repeated enum: unpacked and packed
        (b"\x08\x01\x08\x02", True),  # a scalar given twice: the last wins
        (b"\x3a\x01a\x42\x03\x0a\x01b", False),  # oneof: two members
        (b"\x32\x02\x10\x05\x32\x02\x08\x03", False),  # a message given twice is merged
        (b"\x0a\x00", False),  # a known field's wrong wire type: Python fails the record
        (b"\x98\x01\x05", False),  # the same for a field Spark leaves out (an empty message)
        (b"\x9a\x01\x01\xff", False),  # that field's body does not parse
        (b"\xf3\x01\xf4\x01", False),  # an unknown group
        (b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", False),  # an overlong varint
    ],
    ids=[
        "map-key-twice",
        "map-value-first",
        "map-no-key",
        "packed",
        "scalar-twice",
        "oneof-two-members",
        "merged",
        "wrong-wire-type",
        "unread-wrong-wire-type",
        "unread-malformed",
        "group",
        "overlong-varint",
    ],
)
def test_wire_format_corners(files: dict[str, Path], payload: bytes, reads: bool) -> None:
    """What the wire reader reads is the Python path's; what it declines, the core reads."""
    paths = Paths(files["shop"], "shop.Order")
    assert _assert_alike(paths, [payload]) is reads
    whole, expected = paths.whole([payload]), paths.python([payload])
    assert whole is None or (expected is not None and same_values(whole, expected))


def test_framed_records_are_read_with_their_message_indexes(files: dict[str, Path]) -> None:
    paths = Paths(files["shop"], "shop.Order", Framing.CONFLUENT)
    body = Order(id=3, tags={"b": 2, "a": 1}).SerializeToString()
    assert _assert_alike(paths, [frame(12, b"\x00" + body), None])
    assert paths.wire([frame(12, b"\x02\x02" + body)]) is None  # another message's indexes


def test_a_closed_enums_unknown_number_is_declined(files: dict[str, Path]) -> None:
    paths = Paths(files["old"], "old.Item")
    assert paths.wire([Item(a=1).SerializeToString(), b"\x18\x07"]) is None
    assert paths.wire([b"\x22\x01\x07"]) is None  # packed


def test_unsigned_map_keys_come_in_the_order_spark_shows_on_both_readers(
    files: dict[str, Path],
) -> None:
    """Keys past the signed range wrap (3,000,000,000 shows as -1,294,967,296): that order."""
    keys = message_classes(file_proto(UNSIGNED))["unsigned.Keys"]
    record = keys(
        small={1: "a", 3_000_000_000: "b", 7: "c"}, large={2**63 + 5: "d", 3: "e"}
    ).SerializeToString()
    merged = b"\x1a\x02\x08\x01\x1a\x02\x08\x02"  # sub given twice: the wire reader declines
    paths = Paths(files["unsigned"], "unsigned.Keys")
    assert _assert_alike(paths, [record])
    assert paths.wire([record, merged]) is None
    whole, expected = paths.whole([record, merged]), paths.python([record, merged])
    assert expected is not None
    assert whole is not None
    assert whole.equals(expected)
    assert [key for key, _ in whole.to_pylist()[0]["small"]] == [-1_294_967_296, 1, 7]
