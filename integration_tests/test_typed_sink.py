"""Typed records through the sink: our source -> a transformation -> our sink, and back.

A round trip per format: records produced to an input topic are read by our source with
``valueFormat`` (and ``keyFormat``), transformed, written exactly once by our sink with the
same format, and read back by our source with that format, under ``read_committed``: every
record comes back once, transformed. Each format is one :class:`RoundTrip`; adding a format is
adding one to :data:`ROUND_TRIPS`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.utils import AnalysisException, PythonException

from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import OUR_FORMAT, batch_read, kafka_stream, run_available_now
from kafka_rescalable.formats.avro.types import spark_type_of
from kafka_rescalable.formats.options import (
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
)
from kafka_rescalable.sink.encoding import ColumnEncoding

pytestmark = pytest.mark.integration

ORDERS = 40
PARTITIONS = 2


@dataclass(frozen=True)
class RoundTrip:
    """One format's round trip.

    Parameters
    ----------
    fmt
        ``valueFormat`` and ``keyFormat`` of the source, the sink and the read back.
    payload
        Order ``i``'s input value as bytes, given the input topic and the registry's URL.
    transform
        SQL from the source's ``value`` column to the sink's ``value`` column.
    expected
        Order ``i``'s value as the read back gives it (``Row`` values as dicts).
    options
        Further typed options, given the registry's URL (``None`` without a registry).
    needs_registry
        Whether the round trip uses the session's schema registry.
    """

    fmt: str
    payload: Callable[[int, str, str | None], bytes]
    transform: str
    expected: Callable[[int], Any]
    options: Callable[[str | None], dict[str, str]] = field(default=lambda url: {})
    needs_registry: bool = False


ORDER_AVRO = {
    "type": "record",
    "name": "Order",
    "namespace": "sinktest",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "shipping",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "int"}],
            },
        },
        {"name": "coupon", "type": ["null", "string"], "default": None},
    ],
}
PLACED = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def _order(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "item": f"item {i}",
        "price": Decimal(f"{i}.{i % 100:02d}"),
        "placed": PLACED + timedelta(seconds=i),
        "shipping": {"city": f"city {i % 5}", "zip": 10_000 + i},
        "coupon": None if i % 4 else f"C{i}",
    }


@functools.cache
def _avro_serializer(url: str) -> Any:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer

    return AvroSerializer(SchemaRegistryClient({"url": url}), json.dumps(ORDER_AVRO))


def _avro_payload(i: int, topic: str, url: str | None) -> bytes:
    from confluent_kafka.serialization import MessageField, SerializationContext

    return _avro_serializer(url)(_order(i), SerializationContext(topic, MessageField.VALUE))


def _avro_expected(i: int) -> dict[str, Any]:
    order = _order(i)
    return {
        "id": i,
        "item": f"ITEM {i}",
        "total": order["price"] * 2,
        # PySpark hands timestamps back as naive datetimes in the local time zone.
        "placed": datetime.fromtimestamp(order["placed"].timestamp()),
        "shipping": order["shipping"],
        "coupon": order["coupon"],
    }


ROUND_TRIPS = {
    "string": RoundTrip(
        fmt="string",
        payload=lambda i, topic, url: f"order {i}: ünits {i % 7}".encode(),
        transform="upper(value)",
        expected=lambda i: f"ORDER {i}: ÜNITS {i % 7}",
    ),
    # The sink derives the output's Avro schema from the transformed struct and registers it
    # under '<output topic>-value'; the read back resolves to that subject's latest version.
    "avro": RoundTrip(
        fmt="avro",
        payload=_avro_payload,
        transform=(
            "named_struct('id', value.id, 'item', upper(value.item), 'total', value.price * 2, "
            "'placed', value.placed, 'shipping', value.shipping, "
            "'coupon', value.coupon)"
        ),
        expected=_avro_expected,
        options=lambda url: {"schema.registry.url": url},
        needs_registry=True,
    ),
}


def _as_python(value: Any) -> Any:
    return value.asDict(recursive=True) if hasattr(value, "asDict") else value


@pytest.mark.parametrize("fmt", sorted(ROUND_TRIPS))
def test_typed_round_trip_writes_every_record_once(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_name: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    fmt: str,
) -> None:
    trip = ROUND_TRIPS[fmt]
    url = request.getfixturevalue("schema_registry_url") if trip.needs_registry else None
    source, target = f"{topic_name}-in", f"{topic_name}-out"
    for topic in (source, target):
        create_topic(kafka_bootstrap, topic, partitions=PARTITIONS)
    produce(
        kafka_bootstrap,
        source,
        [Record(key=f"k{i}".encode(), value=trip.payload(i, source, url)) for i in range(ORDERS)],
    )
    typed = {"keyFormat": "string", "valueFormat": trip.fmt, **trip.options(url)}
    query = (
        kafka_stream(spark, kafka_bootstrap, source, **typed)
        .selectExpr("key", f"{trip.transform} AS value")
        .writeStream.format(OUR_FORMAT)
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", target)
        .option("deliveryGuarantee", "exactly-once")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .options(**typed)
        .trigger(availableNow=True)
        .start()
    )
    run_available_now(query)
    rows = batch_read(
        spark,
        OUR_FORMAT,
        kafka_bootstrap,
        target,
        **typed,
        **{"kafka.isolation.level": "read_committed"},
    ).collect()
    assert len(rows) == ORDERS
    assert {row.key: _as_python(row.value) for row in rows} == {
        f"k{i}": trip.expected(i) for i in range(ORDERS)
    }


def test_a_column_the_format_cannot_encode_fails_at_save(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    orders = spark.range(3).selectExpr("named_struct('id', id, 'item', 'pen') AS value")

    def save(frame: Any, **options: str) -> None:
        writer = frame.write.format(OUR_FORMAT).option("kafka.bootstrap.servers", kafka_bootstrap)
        writer.option("topic", topic_name).options(**options).mode("append").save()

    refused = (AnalysisException, PythonException)
    with pytest.raises(
        refused,
        match="column 'value' has type struct<id:bigint,item:string>; 'valueFormat' is 'string'",
    ):
        save(orders, valueFormat="string")
    with pytest.raises(refused, match="'valueFormat' to 'json', 'avro' or 'protobuf'"):
        save(orders)
    with pytest.raises(refused, match="mode.*source option"):
        save(orders.selectExpr("value.item AS value"), valueFormat="string", mode="PERMISSIVE")


@pytest.mark.parametrize("inline", [True, False], ids=["valueSchema", "derived schema"])
def test_avro_values_encode_in_bulk_as_the_serializer_frames_them(
    schema_registry_url: str, topic_name: str, inline: bool
) -> None:
    import fastavro
    from confluent_kafka.schema_registry import SchemaRegistryClient

    spark_type, _ = spark_type_of(fastavro.parse_schema(ORDER_AVRO))
    schema = json.dumps(ORDER_AVRO) if inline else None
    payload = PayloadOptions("value", PayloadFormat.AVRO, schema, framing=Framing.CONFLUENT)
    registry = RegistrySettings((("url", schema_registry_url),))
    encoding = ColumnEncoding(payload, spark_type.json(), registry, topic_name)
    orders = [None if i == 5 else _order(i) for i in range(ORDERS)]
    column = pa.array(orders, to_arrow_type(spark_type, timezone="UTC"))
    encode = encoding.encoder()  # confluent-kafka's AvroSerializer, which registers the schema
    expected = [None if value is None else encode(value) for value in column.to_pylist()]
    bulk = encoding.column_encoder(encode)
    assert bulk is not None
    assert bulk(column) == expected
    registered = SchemaRegistryClient({"url": schema_registry_url}).get_latest_version(
        f"{topic_name}-value"
    )
    frames = {value[:5] for value in expected if value is not None}
    assert frames == {b"\x00" + registered.schema_id.to_bytes(4, "big")}
