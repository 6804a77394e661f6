"""Micro-benchmark of JSON values (``valueFormat=json``): microseconds per record, no Spark query.

A batch of "order" records (12 fields: integers, strings, a decimal, a double, a timestamp, a
date, a boolean, an array and a nested struct; about 330 bytes of JSON each) goes through the
executor's :func:`~kafka_rescalable.formats.decoding.decode_batch` as a micro-batch's records
do, timed alone (records and batch built before the clock starts), median of a few runs. Cases:

- ``bulk``: as shipped, the column read by pyarrow's JSON reader where provably equal;
- ``record-by-record``: the same code with the whole-column decoder switched off;
- ``bulk, registry-framed``: the same records behind the registry's 5-byte header (no
  registry: the writer schema id is not looked up);
- ``bulk, 1% short dates``: 1 record in 100 with a date in one of Spark's short forms
  (``2024-3-3``), which the bulk reader's checks send back to the record-by-record reader;
- ``bulk, 1% epoch timestamps``: 1 record in 100 with a timestamp in epoch seconds, which
  pyarrow refuses: the batch is halved to find them, up to a bounded number of reads;
- ``bulk, 1 bad record``: one record per batch that does not decode (``PERMISSIVE``), so the
  whole batch is read record by record;
- ``order with a map``: the whole-query benchmark's JSON order records
  (:func:`benchmarks.whole_queries.order_encodings.encoded_orders`, 16 fields, about 470 bytes
  each), whose ``attributes MAP<STRING,STRING>`` pyarrow's reader cannot take: as shipped,
  and record by record.

Run it on an older checkout (``PYTHONPATH`` pointing at its package tree) to compare; there the
whole-column decoder does not exist and every case is record by record.

    python -m benchmarks.micro.json_decode [--records 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import UTC, datetime, timedelta

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from benchmarks.whole_queries.order_encodings import encoded_orders
from kafka_rescalable.errors import RecordDecodeError
from kafka_rescalable.formats import decoding
from kafka_rescalable.formats.codec import ReaderSchema, codec_for
from kafka_rescalable.formats.decoding import DecodePlan, decode_batch
from kafka_rescalable.formats.options import DecodeMode, Framing, PayloadFormat, PayloadOptions
from kafka_rescalable.formats.registry import frame
from kafka_rescalable.schema import arrow_schema

__all__ = ["MAP_ORDER", "ORDER", "main", "measure", "order_json"]

ORDER = StructType(
    [
        StructField("order_id", LongType()),
        StructField("customer_id", LongType()),
        StructField("status", StringType()),
        StructField("currency", StringType()),
        StructField("amount", DecimalType(12, 2)),
        StructField("discount", DoubleType()),
        StructField("quantity", IntegerType()),
        StructField("created_at", TimestampType()),
        StructField("ship_date", DateType()),
        StructField("express", BooleanType()),
        StructField("tags", ArrayType(StringType())),
        StructField(
            "address",
            StructType(
                [
                    StructField("street", StringType()),
                    StructField("city", StringType()),
                    StructField("zip", StringType()),
                    StructField("country", StringType()),
                ]
            ),
        ),
    ]
)
MAP_ORDER = StructType(
    [
        StructField("order_id", LongType()),
        StructField("customer_id", LongType()),
        StructField("created_at", TimestampType()),
        StructField("status", StringType()),
        StructField("currency", StringType()),
        StructField("amount", DecimalType(12, 2)),
        StructField("unit_price", DoubleType()),
        StructField("quantity", IntegerType()),
        StructField("sku", StringType()),
        StructField("product_name", StringType()),
        StructField("customer_email", StringType()),
        StructField("shipping_city", StringType()),
        StructField("shipping_country", StringType()),
        StructField("coupon", StringType()),
        StructField("tags", ArrayType(StringType())),
        StructField("attributes", MapType(StringType(), StringType())),
    ]
)
"""The whole-query benchmark's order (``ORDER_DDL``) as Spark parses the DDL: all nullable."""
_START = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
_STATUSES = ("new", "paid", "shipped", "delivered", "returned")


def order_json(index: int) -> bytes:
    """One order as a producer's ``json.dumps`` writes it."""
    created = _START + timedelta(seconds=index * 7, microseconds=index * 1000 % 1_000_000)
    order = {
        "order_id": 10_000_000 + index,
        "customer_id": 500_000 + index % 9973,
        "status": _STATUSES[index % 5],
        "currency": "EUR" if index % 3 else "USD",
        "amount": float(f"{index % 100_000}.{index % 100:02d}"),
        "discount": (index % 20) / 100,
        "quantity": 1 + index % 12,
        "created_at": created.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "ship_date": (created + timedelta(days=2)).date().isoformat(),
        "express": index % 7 == 0,
        "tags": [f"tag{index % 11}", "web"] if index % 2 else ["app"],
        "address": {
            "street": f"{index % 400} Rue de la Paix",
            "city": ("Paris", "Lyon", "Lille", "Nantes")[index % 4],
            "zip": f"{75000 + index % 20:05d}",
            "country": "FR",
        },
    }
    return json.dumps(order).encode()


def _batch(values: list[bytes | None]) -> pa.RecordBatch:
    count = len(values)
    columns = [
        pa.nulls(count, pa.binary()),
        pa.array(values, pa.binary()),
        pa.array(["orders"] * count),
        pa.array([0] * count, pa.int32()),
        pa.array(range(count), pa.int64()),
        pa.array([0] * count, pa.timestamp("us", tz="UTC")),
        pa.array([0] * count, pa.int32()),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=arrow_schema(False))


def _plan(mode: DecodeMode, framing: Framing, spark_type: StructType) -> DecodePlan:
    payload = PayloadOptions("value", PayloadFormat.JSON, schema="ddl", framing=framing)
    reader = ReaderSchema(payload, "ddl", f"STRUCT<{spark_type.simpleString()}>")
    return DecodePlan((reader,), (spark_type.json(),), mode, None)


def measure(
    values: list[bytes | None],
    mode: DecodeMode,
    runs: int,
    bulk: bool,
    framing: Framing = Framing.NONE,
    spark_type: StructType = ORDER,
) -> tuple[float, float]:
    """Return the median CPU and wall microseconds per record of decoding ``values`` at once.

    CPU time (the process's, all threads) is the figure to compare on a shared machine: it
    does not count the time other processes took the cores.
    """
    codec = type(codec_for(PayloadFormat.JSON))
    shipped = getattr(codec, "column_decoder", None)
    if not bulk and shipped is not None:
        codec.column_decoder = lambda *args: None  # type: ignore[method-assign]
    try:
        decoding._columns.cache_clear()
        batch, plan = _batch(values), _plan(mode, framing, spark_type)
        decode_batch(batch, plan)  # build the decoders, warm the caches
        cpu, wall = [], []
        for _ in range(runs):
            started, started_cpu = time.perf_counter(), time.process_time()
            decode_batch(batch, plan)
            cpu.append(time.process_time() - started_cpu)
            wall.append(time.perf_counter() - started)
    finally:
        if shipped is not None:
            codec.column_decoder = shipped  # type: ignore[method-assign]
        decoding._columns.cache_clear()
    per_record = 1e6 / len(values)
    return statistics.median(cpu) * per_record, statistics.median(wall) * per_record


_Case = tuple[str, list[bytes | None], DecodeMode, bool, Framing, StructType]


def _cases(records: int) -> list[_Case]:
    clean: list[bytes | None] = [order_json(i) for i in range(records)]
    short, epoch = list(clean), list(clean)
    for index in range(0, records, 100):
        order = json.loads(order_json(index))
        year, month, day = order["ship_date"].split("-")
        short[index] = json.dumps(order | {"ship_date": f"{year}-{int(month)}-{int(day)}"}).encode()
        epoch[index] = json.dumps(order | {"created_at": 1_709_294_400 + index}).encode()
    bad = list(clean)
    bad[records // 2] = b'{"order_id": "twelve"}'
    framed: list[bytes | None] = [frame(1, value) for value in clean if value is not None]
    mapped: list[bytes | None] = [value for _, value in encoded_orders("json", 0, records)]
    plain, failfast, permissive = Framing.NONE, DecodeMode.FAILFAST, DecodeMode.PERMISSIVE
    cases = [
        ("bulk", clean, failfast, True, plain),
        ("record-by-record", clean, failfast, False, plain),
        ("bulk, registry-framed", framed, failfast, True, Framing.CONFLUENT),
        ("record-by-record, registry-framed", framed, failfast, False, Framing.CONFLUENT),
        ("bulk, 1% short dates", short, failfast, True, plain),
        ("bulk, 1% epoch timestamps", epoch, failfast, True, plain),
        ("bulk, 1 bad record (PERMISSIVE)", bad, permissive, True, plain),
    ]
    with_map = [
        ("order with a map, as shipped", mapped, failfast, True, plain),
        ("order with a map, record-by-record", mapped, failfast, False, plain),
    ]
    return [(*case, ORDER) for case in cases] + [(*case, MAP_ORDER) for case in with_map]


def main(argv: list[str] | None = None) -> int:
    """Print one Markdown row per case."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000, help="records per batch")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per case (median)")
    args = parser.parse_args(argv)
    sizes = [len(order_json(i)) for i in range(1000)]
    print(f"{args.records:,} records per batch, {sum(sizes) / len(sizes):.0f} bytes each")
    print("| case | CPU µs per record | wall µs per record |\n|---|--:|--:|")
    for name, values, mode, bulk, framing, spark_type in _cases(args.records):
        try:
            cpu, wall = measure(values, mode, args.runs, bulk, framing, spark_type)
        except RecordDecodeError:  # an older checkout that does not read Spark's short dates
            print(f"| {name} | refused | refused |")
            continue
        print(f"| {name} | {cpu:.2f} | {wall:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
