"""The Avro "order" records of the Avro decoding benchmark, and how to write them.

A record of 16 fields of the kinds an event pipeline carries: longs and an int, strings, a
double, a ``decimal(12,2)``, a ``timestamp-millis``, an enum, a nullable string, an array of
strings and a map of strings. Its plain Avro body (no registry framing) is some 200 bytes.
Record ``i`` is a function of ``i`` alone, so that every producer process writes its share of
the topic without coordination and a check can rebuild any record.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["ORDER_SCHEMA", "ORDER_SCHEMA_JSON", "order", "order_bodies", "order_type"]

ORDER_SCHEMA: Mapping[str, Any] = {
    "type": "record",
    "name": "Order",
    "namespace": "bench.shop",
    "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "customer_id", "type": "long"},
        {"name": "created_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "status",
            "type": {
                "type": "enum",
                "name": "Status",
                "symbols": ["PENDING", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"],
            },
        },
        {"name": "currency", "type": "string"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2},
        },
        {"name": "unit_price", "type": "double"},
        {"name": "quantity", "type": "int"},
        {"name": "sku", "type": "string"},
        {"name": "product_name", "type": "string"},
        {"name": "customer_email", "type": "string"},
        {"name": "shipping_city", "type": "string"},
        {"name": "shipping_country", "type": "string"},
        {"name": "coupon", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attributes", "type": {"type": "map", "values": "string"}},
    ],
}
"""The writer's and the reader's schema (the same: no schema evolution is measured)."""

ORDER_SCHEMA_JSON = json.dumps(ORDER_SCHEMA)


def order_type() -> Any:
    """Return the Spark type spark-avro maps :data:`ORDER_SCHEMA` to.

    Enum as string, ``timestamp-millis`` as timestamp, ``decimal(12,2)`` as decimal, the union
    with null as a nullable string; the other fields are not nullable. It is the Arrow UDF's
    return type, built without a session (the UDF's worker has none to parse DDL with).
    """
    from pyspark.sql import types as T

    def field(name: str, data_type: Any, nullable: bool = False) -> Any:
        return T.StructField(name, data_type, nullable)

    text = T.StringType()
    return T.StructType(
        [
            field("order_id", T.LongType()),
            field("customer_id", T.LongType()),
            field("created_at", T.TimestampType()),
            field("status", text),
            field("currency", text),
            field("amount", T.DecimalType(12, 2)),
            field("unit_price", T.DoubleType()),
            field("quantity", T.IntegerType()),
            field("sku", text),
            field("product_name", text),
            field("customer_email", text),
            field("shipping_city", text),
            field("shipping_country", text),
            field("coupon", text, nullable=True),
            field("tags", T.ArrayType(text, containsNull=False)),
            field("attributes", T.MapType(text, text, valueContainsNull=False)),
        ]
    )


_STATUSES = ORDER_SCHEMA["fields"][3]["type"]["symbols"]
_CURRENCIES = ("EUR", "USD", "GBP", "CHF", "JPY")
_CITIES = (
    "Amsterdam",
    "Berlin",
    "Lisbon",
    "Montreal",
    "Osaka",
    "Valparaiso",
    "Zurich",
    "Saint-Etienne",
)
_COUNTRIES = ("NL", "DE", "PT", "CA", "JP", "CL", "CH", "FR")
_PRODUCTS = (
    "Stainless steel insulated water bottle, 750 ml, matte black",
    "Merino wool hiking socks, medium cushioning (pair)",
    "Cast iron skillet, 26 cm, pre-seasoned, with helper handle",
    "Noise-cancelling wireless headphones, over-ear, 30 h battery",
    "Organic cotton bath towel, large, 600 gsm, stone grey",
)
_TAGS = ("gift", "express", "fragile", "bulk", "promo")
_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
_UTC = datetime.timezone.utc


def order(index: int) -> dict[str, Any]:
    """Return record ``index`` as fastavro writes it (and as fastavro reads it back)."""
    quantity = 1 + index % 7
    cents = 199 + index % 50_000
    tag_count = index % 4
    return {
        "order_id": 10_000_000_000 + index,
        "customer_id": 1_000_000 + index % 250_000,
        "created_at": datetime.datetime.fromtimestamp((_EPOCH_MS + index * 37) / 1000, tz=_UTC),
        "status": _STATUSES[index % len(_STATUSES)],
        "currency": _CURRENCIES[index % len(_CURRENCIES)],
        "amount": decimal.Decimal(cents * quantity).scaleb(-2),
        "unit_price": cents / 100,
        "quantity": quantity,
        "sku": f"SKU-{index % 90_000:06d}-{index % 13:02d}-BLK",
        "product_name": _PRODUCTS[index % len(_PRODUCTS)],
        "customer_email": f"customer.{index % 250_000:06d}@mail.example-shop.com",
        "shipping_city": _CITIES[index % len(_CITIES)],
        "shipping_country": _COUNTRIES[index % len(_COUNTRIES)],
        "coupon": None if index % 3 else f"SPRING{index % 100:02d}",
        "tags": [_TAGS[(index + k) % len(_TAGS)] for k in range(tag_count)],
        "attributes": {
            "channel": "web" if index % 2 else "mobile-app",
            "warehouse": f"WH-{index % 9:02d}",
        },
    }


def order_bodies(start: int, stop: int, step: int = 1) -> Iterator[tuple[int, bytes]]:
    """Yield ``(index, plain Avro body)`` of records ``range(start, stop, step)``."""
    import fastavro

    parsed = fastavro.parse_schema(dict(ORDER_SCHEMA))
    write = fastavro.schemaless_writer
    buffer = io.BytesIO()
    for index in range(start, stop, step):
        buffer.seek(0)
        buffer.truncate()
        write(buffer, parsed, order(index))
        yield index, buffer.getvalue()
