"""Ours against Spark's ``from_protobuf``, record by record, on made-up and random payloads.

The unit tests hold our native readers to our Python path; this holds our source to Spark's
own decoder, which needs a spark-protobuf jar (none on Maven Central as reached here: build one
with :mod:`benchmarks.spark_protobuf_jar`)::

    python -m benchmarks.diagnostics.protobuf_parity --spark-protobuf-jar /tmp/spark-protobuf.jar

Topics of hypothesis-made messages (the unit tests' strategies: proto3 orders with every
kind of field, proto2 items) and of random bytes are written to an embedded broker and read
in batch by both sides in ``PERMISSIVE`` mode: ours with ``valueFormat=protobuf``, Spark's
built-in source with ``from_protobuf`` (``emit.default.values``, the behaviour ours has).
Values are compared per offset as their ``to_json`` text, parsed back (so map entries compare
in any order, and times past Python's ``datetime`` need no conversion).

Each difference is put in a class; the classes the types reference documents as expected are
reported apart. The command exits 1 if any other difference shows, else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["EXPECTED", "Difference", "TopicReport", "classify", "main"]

EXPECTED = {
    "time past 64-bit microseconds": "ours refuses, naming the field; from_protobuf gives a "
    "wrong time (its seconds * 1000 wraps) or null",
    "payload protobuf's parser refuses": "ours refuses; from_protobuf reads on (it keeps a "
    "tag's low 32 bits, for one)",
}
"""The differences ``docs/reference/types.md`` documents, by class."""

_FORMATS = Path(__file__).resolve().parents[2] / "tests" / "connector" / "formats"


@dataclass(frozen=True)
class Difference:
    """One offset where the two sides differ: what each read, and our failure reason."""

    offset: int
    payload: bytes
    ours: Any
    spark: Any
    reason: str | None


@dataclass
class TopicReport:
    """One topic's comparison: records, nulls on both sides, differences by class."""

    name: str
    records: int
    both_null: int = 0
    classes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[Difference]] = field(default_factory=dict)

    def add(self, difference: Difference) -> None:
        """Count ``difference`` in its class, keeping the first three of each as examples."""
        kind = classify(difference)
        self.classes[kind] += 1
        self.examples.setdefault(kind, [])
        if len(self.examples[kind]) < 3:
            self.examples[kind].append(difference)

    @property
    def unexpected(self) -> int:
        """Differences in no class of :data:`EXPECTED`."""
        return sum(n for kind, n in self.classes.items() if kind not in EXPECTED)


def classify(difference: Difference) -> str:
    """Name the class of a difference: one of :data:`EXPECTED`, or a description of it."""
    reason = difference.reason or ""
    if difference.ours is None and difference.spark is not None:
        if "beyond the 64-bit microseconds" in reason:
            return "time past 64-bit microseconds"
        if "Error parsing message" in reason:
            return "payload protobuf's parser refuses"
        return "ours refuses, from_protobuf reads"
    if difference.spark is None:
        return "from_protobuf refuses, ours reads"
    keys = sorted(k for k in {*difference.ours, *difference.spark} if _differs(difference, k))
    return f"values differ in {', '.join(keys)}"


def _differs(difference: Difference, key: str) -> bool:
    return difference.ours.get(key) != difference.spark.get(key)


def _examples(strategy: Any, count: int, seed: int) -> list[Any]:
    """Draw ``count`` examples of a hypothesis strategy, the same for the same seed."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as with_seed

    drawn: list[Any] = []

    @with_seed(seed)
    @settings(
        max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(strategy)
    def draw(example: Any) -> None:
        drawn.append(example)

    draw()
    return drawn


def _topics(scratch: Path, records: int) -> dict[str, tuple[Path, str, list[bytes | None]]]:
    """Each topic's descriptor set file, message and payloads."""
    sys.path.insert(0, str(_FORMATS))  # the tests' samples and strategies
    from hypothesis import strategies as st
    from protobuf_samples import descriptor_set, file_proto, shop_set

    from tests.connector.formats.test_protobuf_native import (
        ITEMS,
        ORDERS,
        PROTO2,
        Item,
        Order,
        _payloads,
    )

    shop, old = scratch / "shop.desc", scratch / "old.desc"
    shop.write_bytes(shop_set())
    old.write_bytes(descriptor_set(file_proto(PROTO2)))
    return {
        "orders": (shop, "shop.Order", list(_payloads(_examples(ORDERS, records, 1), Order))),
        "items": (old, "old.Item", list(_payloads(_examples(ITEMS, records // 3, 2), Item))),
        "random": (shop, "shop.Order", _examples(st.binary(max_size=40), records, 3)),
    }


def _compare(spark: Any, bootstrap: str, name: str, topic: tuple[Path, str, list]) -> TopicReport:
    from pyspark.sql import functions as F
    from pyspark.sql.protobuf.functions import from_protobuf

    from benchmarks.session import BUILTIN, OURS

    path, message, payloads = topic
    common = {"kafka.bootstrap.servers": bootstrap, "subscribe": name}
    common["startingOffsets"] = "earliest"
    ours = (
        spark.read.format(OURS)
        .options(**common, valueFormat="protobuf", valueSchema=str(path), valueMessage=message)
        .option("mode", "PERMISSIVE")
        .load()
        .select("offset", F.to_json("value").alias("v"), "decodeError")
    )
    options = {"emit.default.values": "true", "mode": "PERMISSIVE"}
    theirs = (
        spark.read.format(BUILTIN)
        .options(**common)
        .load()
        .select("offset", from_protobuf("value", message, str(path), options).alias("v"))
        .select("offset", F.to_json("v").alias("v"))
    )
    ours_rows = {row["offset"]: (_parsed(row["v"]), row["decodeError"]) for row in ours.collect()}
    spark_rows = {row["offset"]: _parsed(row["v"]) for row in theirs.collect()}
    report = TopicReport(name, len(payloads))
    for offset, payload in enumerate(payloads):
        (value, reason), expected = ours_rows[offset], spark_rows[offset]
        if value is None and expected is None:
            report.both_null += 1
        elif value != expected:
            report.add(Difference(offset, payload or b"", value, expected, reason))
    return report


def _parsed(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _print(report: TopicReport) -> None:
    differing = sum(report.classes.values())
    print(
        f"\n{report.name}: {report.records} records, {differing} differ "
        f"({report.unexpected} unexpectedly), {report.both_null} null on both sides"
    )
    for kind, count in report.classes.most_common():
        note = f" (expected: {EXPECTED[kind]})" if kind in EXPECTED else ""
        print(f"  {count:5d}  {kind}{note}")
        if kind not in EXPECTED:
            for example in report.examples[kind]:
                print(f"         offset {example.offset} payload {example.payload!r}")
                print(f"           ours  {example.ours} ({example.reason})")
                print(f"           spark {example.spark}")


def main(argv: Sequence[str] | None = None) -> int:
    """Command line; returns 1 if a difference outside :data:`EXPECTED` showed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--spark-protobuf-jar", type=Path, required=True)
    parser.add_argument("--records", type=int, default=3000, help="orders and random payloads")
    args = parser.parse_args(argv)
    from confluent_kafka import Producer

    from benchmarks.broker import benchmark_broker
    from benchmarks.data import create_topic
    from benchmarks.session import spark_session
    from benchmarks.whole_queries.typed_contenders import spark_protobuf_jars

    jars, why = spark_protobuf_jars(args.spark_protobuf_jar)
    if why:
        print(why, file=sys.stderr)
        return 2
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with (
        tempfile.TemporaryDirectory(prefix="protobuf-parity-") as folder,
        benchmark_broker() as kafka,
    ):
        scratch = Path(folder)
        topics = _topics(scratch, args.records)
        producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
        for name, (_, _, payloads) in topics.items():
            create_topic(kafka.bootstrap_servers, name, 1)
            for payload in payloads:
                producer.produce(name, value=payload)
        producer.flush()
        spark = spark_session(scratch / "warehouse", extra_jars=jars)
        try:
            reports = [_compare(spark, kafka.bootstrap_servers, n, t) for n, t in topics.items()]
        finally:
            spark.stop()
    for report in reports:
        _print(report)
    return 1 if any(report.unexpected for report in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
