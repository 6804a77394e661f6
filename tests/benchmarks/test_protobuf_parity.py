"""The Protobuf parity diagnostic's pure part: putting each difference in its class."""

from __future__ import annotations

import pytest

from benchmarks.diagnostics.protobuf_parity import EXPECTED, Difference, TopicReport, classify


def _difference(ours: object, spark: object, reason: str | None = None) -> Difference:
    return Difference(0, b"\x08\x01", ours, spark, reason)


@pytest.mark.parametrize(
    ("difference", "kind"),
    [
        (
            _difference(
                None,
                {"id": 1},
                "value: field shop.Order.ttl: a Duration of 9 s is "
                "beyond the 64-bit microseconds Spark holds",
            ),
            "time past 64-bit microseconds",
        ),
        (
            _difference(
                None, {"id": 0}, "value: not a valid shop.Order message: Error parsing message"
            ),
            "payload protobuf's parser refuses",
        ),
        (
            _difference(None, {"id": 0}, "value: something else"),
            "ours refuses, from_protobuf reads",
        ),
        (_difference({"id": 0}, None), "from_protobuf refuses, ours reads"),
        (
            _difference({"id": 1, "note": "a", "gift": True}, {"id": 1, "note": None}),
            "values differ in gift, note",
        ),
    ],
)
def test_each_difference_falls_in_one_class(difference: Difference, kind: str) -> None:
    assert classify(difference) == kind


def test_only_classes_outside_the_documented_ones_count_as_unexpected() -> None:
    report = TopicReport("orders", 10)
    for _ in range(4):
        report.add(_difference(None, {"id": 0}, "Error parsing message"))
    report.add(_difference({"id": 0}, None))
    assert set(EXPECTED) >= {"payload protobuf's parser refuses"}
    assert report.classes["payload protobuf's parser refuses"] == 4
    assert len(report.examples["payload protobuf's parser refuses"]) == 3
    assert report.unexpected == 1
