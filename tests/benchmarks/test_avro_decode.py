"""The Avro decoding benchmark's pure parts: its records, its UDF, its rounds and its table."""

from __future__ import annotations

import pyarrow as pa

from benchmarks.whole_queries.avro_decode import (
    AVRO,
    BINARY_UDF,
    BUILTIN_FROM_AVRO,
    AvroRun,
    avro_table,
    decode_orders,
)
from benchmarks.whole_queries.avro_records import order, order_bodies
from benchmarks.whole_queries.spark_throughput import QueryRun, rotating_rounds


def test_the_udf_decodes_every_body_to_the_record_written() -> None:
    bodies = pa.array([body for _, body in order_bodies(0, 50)] + [None], pa.binary())

    rows = decode_orders(bodies).to_pylist()

    for row in rows[:-1]:
        row["attributes"] = dict(row["attributes"])
    assert rows == [order(index) for index in range(50)] + [None]


def test_records_are_about_two_hundred_bytes_of_plain_avro() -> None:
    sizes = [len(body) for _, body in order_bodies(0, 2_000)]

    assert 190 <= sum(sizes) / len(sizes) <= 220
    assert len(order(0)) == 16


def test_rounds_rotate_the_order_and_keep_the_first_and_the_best_run() -> None:
    calls: list[str] = []
    seconds = iter([10.0, 20.0, 5.0, 8.0, 4.0, 9.0])

    def run_one(contender: str) -> QueryRun:
        calls.append(contender)
        return QueryRun(rows=100, seconds=next(seconds), batches=1, batch_seconds=1.0)

    first, best = rotating_rounds(["a", "b"], 2, run_one, lambda _line: None)

    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert (first["a"].seconds, first["b"].seconds) == (10.0, 20.0)
    assert (best["a"].seconds, best["b"].seconds) == (4.0, 5.0)


def test_the_table_gives_ratios_to_from_avro_and_to_the_udf_and_says_what_did_not_run() -> None:
    def run(seconds: float) -> QueryRun:
        return QueryRun(rows=1_000, seconds=seconds, batches=1, batch_seconds=seconds / 2)

    table = avro_table(
        [
            AvroRun(AVRO, run(2.0), run(1.0)),
            AvroRun("ours, avro + registry (framed)", None, None, "no codec"),
            AvroRun(BUILTIN_FROM_AVRO, run(4.0), run(2.0)),
            AvroRun(BINARY_UDF, run(8.0), run(4.0)),
        ]
    )

    lines = table.splitlines()
    assert lines[2] == f"| {AVRO} | 500 | 1,000 | 1.0 | 0.5 | 2.00 | 4.00 |"
    assert "not run: no codec" in lines[3]
    assert lines[5].endswith("| 0.50 | 1.00 |")
