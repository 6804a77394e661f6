"""Avro records through the source: registry-framed and plain, against a real registry.

Records are written by confluent-kafka's own ``AvroSerializer`` (which registers the schema
under ``<topic>-value`` and frames each record with its id); each row must equal what a plain
confluent-kafka consumer with ``AvroDeserializer`` decodes from the same record. Schema
evolution runs in one streaming query that goes on while a second schema version appears.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.errors import AnalysisException, PySparkException
from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from integration_tests.kafka_helpers import Record, create_topic, produce, read_all
from integration_tests.spark_helpers import (
    OUR_FORMAT,
    batch_read,
    kafka_stream,
    start_parquet_stream,
    wait_until,
)
from kafka_rescalable.config.redaction import shown_by_spark
from kafka_rescalable.formats.avro_codec import CODEC
from kafka_rescalable.formats.codec import WriterColumn
from kafka_rescalable.formats.options import (
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
)
from kafka_rescalable.formats.registry import frame

pytestmark = pytest.mark.integration

UTC = timezone.utc

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {
            "name": "ship_to",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Address",
                    "fields": [
                        {"name": "city", "type": "string"},
                        {"name": "zip", "type": ["null", "string"], "default": None},
                    ],
                },
            ],
            "default": None,
        },
        {
            "name": "lines",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Line",
                    "fields": [
                        {"name": "sku", "type": "string"},
                        {"name": "qty", "type": "int"},
                        {
                            "name": "price",
                            "type": {
                                "type": "bytes",
                                "logicalType": "decimal",
                                "precision": 9,
                                "scale": 2,
                            },
                        },
                    ],
                },
            },
        },
        {"name": "tags", "type": {"type": "map", "values": "long"}},
        {
            "name": "status",
            "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SENT"]},
        },
        {"name": "placed_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "shipped_at",
            "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}],
        },
        {"name": "payment", "type": ["null", "string", "Address"], "default": None},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def _orders(count: int) -> list[dict[str, Any]]:
    """Orders that use every kind of field, and leave each optional one unset in some."""
    base = datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC)
    return [
        {
            "id": i,
            "customer": f"cüstomer {i}",
            "ship_to": {"city": f"city {i}", "zip": None if i % 3 else f"{10000 + i}"}
            if i % 4
            else None,
            "lines": [
                {"sku": f"sku-{i}-{n}", "qty": n, "price": Decimal(f"{i}.{n:02d}")}
                for n in range(i % 3)
            ],
            "tags": {f"t{i % 4}": i, "all": -i},
            "status": ["NEW", "PAID", "SENT"][i % 3],
            "placed_at": base.replace(minute=i % 60, microsecond=(i * 1000) % 1_000_000),
            "shipped_at": base.replace(hour=13, microsecond=i) if i % 2 else None,
            "payment": [None, f"card {i}", {"city": f"bill {i}", "zip": None}][i % 3],
            "note": f"note {i}" if i % 5 else None,
        }
        for i in range(count)
    ]


def _local(moment: datetime) -> datetime:
    """Give a timestamp as PySpark's ``collect`` gives a TIMESTAMP: naive, in local time."""
    return moment.astimezone().replace(tzinfo=None)


def _expected_row(order: dict[str, Any]) -> dict[str, Any]:
    """Give the row the source must read for ``order``, as the deserializer decoded it."""
    payment = order["payment"]
    return {
        **order,
        "placed_at": _local(order["placed_at"]),
        "shipped_at": None if order["shipped_at"] is None else _local(order["shipped_at"]),
        "payment": None
        if payment is None
        else {
            "member0": payment if isinstance(payment, str) else None,
            "member1": payment if isinstance(payment, dict) else None,
        },
    }


def _serializer(url: str, schema: dict[str, Any]) -> AvroSerializer:
    # A new client per schema version: a client caches the subject's latest version.
    return AvroSerializer(SchemaRegistryClient({"url": url}), json.dumps(schema))


def _value(serializer: AvroSerializer, topic: str, value: Any) -> bytes:
    return serializer(value, SerializationContext(topic, MessageField.VALUE))


@pytest.mark.pyspark_versions
def test_registry_framed_orders_equal_what_the_deserializer_decodes(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, schema_registry_url: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    serializer = _serializer(schema_registry_url, ORDER)
    orders = _orders(30)
    produce(
        kafka_bootstrap,
        topic_name,
        [
            Record(value=_value(serializer, topic_name, order), partition=order["id"] % 2)
            for order in orders
        ],
    )
    frame_ = batch_read(
        spark,
        OUR_FORMAT,
        kafka_bootstrap,
        topic_name,
        valueFormat="avro",
        **{"schema.registry.url": schema_registry_url},
    )
    value_type = frame_.schema["value"].dataType
    assert isinstance(value_type, StructType)
    assert value_type["payment"].dataType.simpleString() == (
        "struct<member0:string,member1:struct<city:string,zip:string>>"
    )
    rows = frame_.collect()
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": schema_registry_url}))
    context = SerializationContext(topic_name, MessageField.VALUE)
    expected = {
        record.position: _expected_row(deserializer(record.value, context))
        for record in read_all(kafka_bootstrap, topic_name)
    }
    got = {(row.partition, row.offset): row.value.asDict(recursive=True) for row in rows}
    assert got == expected
    assert sorted(row["id"] for row in got.values()) == list(range(30))


EVOLVED_V1 = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "channel", "type": "string", "default": "web"},
    ],
}
EVOLVED_V2 = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "coupon", "type": ["null", "string"], "default": None},
    ],
}


def test_a_running_query_reads_a_new_writer_version_resolved_to_its_reader_schema(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_name: str,
    schema_registry_url: str,
    tmp_path: Path,
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    v1 = _serializer(schema_registry_url, EVOLVED_V1)
    produce(
        kafka_bootstrap,
        topic_name,
        [Record(value=_value(v1, topic_name, {"id": i, "channel": "app"})) for i in range(3)],
    )
    # The reader schema is fixed now: v1, the subject's latest when the query starts.
    query = start_parquet_stream(
        spark,
        kafka_bootstrap,
        topic_name,
        tmp_path / "out",
        tmp_path / "checkpoint",
        valueFormat="avro",
        **{"schema.registry.url": schema_registry_url},
    )
    try:

        def rows() -> list[Any]:
            try:  # the sink's log names no file before the first batch commits
                return spark.read.parquet(str(tmp_path / "out")).select("offset", "value").collect()
            except AnalysisException:
                return []

        wait_until(lambda: len(rows()) == 3, "the v1 records")
        # A writer v2 adds an optional field and removes a defaulted one, mid-stream.
        v2 = _serializer(schema_registry_url, EVOLVED_V2)
        produce(
            kafka_bootstrap,
            topic_name,
            [
                Record(value=_value(v2, topic_name, {"id": i, "coupon": f"C{i}"}))
                for i in range(3, 6)
            ],
        )
        wait_until(lambda: len(rows()) == 6, "the v2 records")
        assert query.exception() is None
    finally:
        query.stop()
    ids = SchemaRegistryClient({"url": schema_registry_url})
    assert len(ids.get_versions(f"{topic_name}-value")) == 2
    got = sorted((row.offset, row.value.id, row.value.channel) for row in rows())
    assert got == [
        (0, 0, "app"),
        (1, 1, "app"),
        (2, 2, "app"),
        (3, 3, "web"),
        (4, 4, "web"),
        (5, 5, "web"),
    ]
    assert "coupon" not in spark.read.parquet(str(tmp_path / "out")).schema["value"].dataType.names


def test_malformed_records_fail_naming_the_record_or_show_per_record(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, schema_registry_url: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    serializer = _serializer(schema_registry_url, EVOLVED_V1)
    good = _value(serializer, topic_name, {"id": 1, "channel": "app"})
    schema_id = int.from_bytes(good[1:5], "big")
    unknown_id = schema_id + 100_000
    bad = {
        1: (b"\x07" + good[1:], "unknown magic byte 0x07"),
        2: (frame(unknown_id, good[5:]), f"has no schema with id {unknown_id}"),
        3: (good[:6], "truncated Avro payload"),
    }
    produce(
        kafka_bootstrap,
        topic_name,
        [
            Record(value=good),
            *(Record(value=payload) for payload, _ in bad.values()),
            Record(value=good),
        ],
    )
    options = {"valueFormat": "avro", "schema.registry.url": schema_registry_url}
    for offset, (_, reason) in bad.items():
        with pytest.raises(PySparkException) as failed:
            batch_read(
                spark,
                OUR_FORMAT,
                kafka_bootstrap,
                topic_name,
                startingOffsets=json.dumps({topic_name: {"0": offset}}),
                endingOffsets=json.dumps({topic_name: {"0": offset + 1}}),
                **options,
            ).collect()
        message = str(failed.value)
        assert f"{topic_name}-0 offset {offset}" in message
        assert reason in message
    rows = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, topic_name, mode="PERMISSIVE", **options
    ).collect()
    by_offset = {row.offset: row for row in rows}
    assert sorted(by_offset) == [0, 1, 2, 3, 4]
    for offset in (0, 4):
        assert by_offset[offset].value.asDict() == {"id": 1, "channel": "app"}
        assert by_offset[offset].decodeError is None
    for offset, (_, reason) in bad.items():
        assert by_offset[offset].value is None
        assert reason in by_offset[offset].decodeError
    assert f"writer schema id {unknown_id}" in by_offset[2].decodeError


def test_an_inline_schema_reads_plain_avro_without_a_registry(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    parsed = fastavro.parse_schema(ORDER)
    orders = _orders(12)

    def plain(order: dict[str, Any]) -> bytes:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, order)
        return out.getvalue()

    produce(kafka_bootstrap, topic_name, [Record(value=plain(order)) for order in orders])
    rows = batch_read(
        spark,
        OUR_FORMAT,
        kafka_bootstrap,
        topic_name,
        valueFormat="avro",
        valueSchema=json.dumps(ORDER),
    ).collect()
    expected = {
        record.offset: _expected_row(
            fastavro.schemaless_reader(io.BytesIO(record.value), parsed, None)
        )
        for record in read_all(kafka_bootstrap, topic_name)
    }
    assert {row.offset: row.value.asDict(recursive=True) for row in rows} == expected


def test_the_encoder_registers_a_schema_the_deserializer_reads(
    spark: SparkSession, topic_name: str, schema_registry_url: str
) -> None:
    value_type = (
        spark.createDataFrame(
            [], "v STRUCT<id: BIGINT NOT NULL, tags: MAP<STRING, INT>, price: DECIMAL(10, 2)>"
        )
        .schema["v"]
        .dataType
    )
    registry = RegistrySettings((("url", schema_registry_url),))
    payload = PayloadOptions("value", PayloadFormat.AVRO, framing=Framing.CONFLUENT)
    encode = CODEC.encoder(WriterColumn(payload, value_type, registry, topic_name))
    payloads = [
        encode({"id": 1, "tags": [("a", 1), ("b", None)], "price": Decimal("3.50")}),
        encode({"id": 2, "tags": None, "price": None}),
    ]
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": schema_registry_url}))
    context = SerializationContext(topic_name, MessageField.VALUE)
    assert [deserializer(value, context) for value in payloads] == [
        {"id": 1, "tags": {"a": 1, "b": None}, "price": Decimal("3.50")},
        {"id": 2, "tags": None, "price": None},
    ]
    latest = SchemaRegistryClient({"url": schema_registry_url}).get_latest_version(
        f"{topic_name}-value"
    )
    assert json.loads(latest.schema.schema_str)["name"] == "topLevelRecord"
    assert int.from_bytes(payloads[0][1:5], "big") == latest.schema_id


def test_an_unreachable_registry_fails_a_permissive_read_instead_of_giving_null_rows(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    # Framed records whose writer schema must come from a registry that does not answer:
    # nothing is wrong with them, so PERMISSIVE must not turn them into nulls.
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    parsed = fastavro.parse_schema(EVOLVED_V1)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, {"id": 1, "channel": "app"})
    produce(kafka_bootstrap, topic_name, [Record(value=frame(5, out.getvalue()))] * 3)
    with pytest.raises(PySparkException) as failed:
        batch_read(
            spark,
            OUR_FORMAT,
            kafka_bootstrap,
            topic_name,
            valueFormat="avro",
            valueSchema=json.dumps(EVOLVED_V1),
            mode="PERMISSIVE",
            **{
                "schema.registry.url": "http://probe:never-shown@127.0.0.1:9",
                "schema.registry.max.retries": "0",  # the client's 3 retries take seconds
            },
        ).collect()
    message = str(failed.value)
    assert "SchemaRegistryError" in message
    assert "http://***@127.0.0.1:9" in message
    assert "schema id 5" in message
    assert "never-shown" not in message


EVOLVING_V2 = {
    "type": "record",
    "name": "Order",
    "fields": [*EVOLVED_V1["fields"], {"name": "coupon", "type": "string", "default": "none"}],
}


def test_a_dataframe_defined_after_a_new_version_reads_with_it_and_an_older_one_with_its_own(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, schema_registry_url: str
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    v1 = _serializer(schema_registry_url, EVOLVED_V1)
    produce(kafka_bootstrap, topic_name, [Record(value=_value(v1, topic_name, {"id": 1}))])
    options = {"valueFormat": "avro", "schema.registry.url": schema_registry_url}
    before = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, **options)
    # A compatible new version is registered (by a producer) in the same application.
    v2 = _serializer(schema_registry_url, EVOLVING_V2)
    second = _value(v2, topic_name, {"id": 2, "coupon": "C"})
    produce(kafka_bootstrap, topic_name, [Record(value=second)])
    after = batch_read(spark, OUR_FORMAT, kafka_bootstrap, topic_name, **options)
    assert before.schema["value"].dataType.names == ["id", "channel"]
    assert after.schema["value"].dataType.names == ["id", "channel", "coupon"]
    # Each DataFrame reads with the reader schema it was defined with, whichever runs first.
    assert sorted(tuple(row.value) for row in after.collect()) == [
        (1, "web", "none"),
        (2, "web", "C"),
    ]
    assert sorted(tuple(row.value) for row in before.collect()) == [(1, "web"), (2, "web")]


def test_no_registry_credential_shows_in_explain_progress_or_checkpoint(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_name: str,
    schema_registry_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Credentials in the URL: the registry client sends them as basic auth, and Spark's
    # default redaction hides every option whose name contains 'url'.
    secret = "url-secret-7f3"
    with_credentials = schema_registry_url.replace("://", f"://registry-user:{secret}@", 1)
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    serializer = _serializer(schema_registry_url, EVOLVED_V1)
    values = [_value(serializer, topic_name, {"id": i, "channel": "app"}) for i in range(3)]
    produce(kafka_bootstrap, topic_name, [Record(value=value) for value in values])
    options = {"valueFormat": "avro", "schema.registry.url": with_credentials}
    query = start_parquet_stream(
        spark, kafka_bootstrap, topic_name, tmp_path / "out", tmp_path / "checkpoint", **options
    )
    try:
        wait_until(lambda: _read(query) >= 3, "the 3 records read")
        progress = "\n".join(update.json for update in query.recentProgress)
        capsys.readouterr()
        query.explain(True)
        kafka_stream(spark, kafka_bootstrap, topic_name, **options).explain(True)
        explained = capsys.readouterr().out
    finally:
        query.stop()
    assert "kafka-rescalable" in explained  # the plans were printed
    assert secret not in explained
    # The secrets Spark prints in a stream's plan are those the connector warns about.
    explained_only = {
        **options,
        "valueSchema": json.dumps(EVOLVED_V1),  # not read: no registry asked at load()
        "schema.registry.basic.auth.user.info": "ann:user-info-9a1",
        "kafka.sasl.password": "sasl-9a2",
        "kafka.ssl.key.pem": "pem-9a3",
    }
    kafka_stream(spark, kafka_bootstrap, topic_name, **explained_only).explain(True)
    plan = capsys.readouterr().out
    shown = shown_by_spark({"kafka.bootstrap.servers": kafka_bootstrap, **explained_only})
    assert shown == ["kafka.ssl.key.pem", "schema.registry.basic.auth.user.info"]
    secrets = ("schema.registry.basic.auth.user.info", "kafka.ssl.key.pem", "kafka.sasl.password")
    for name in secrets:
        assert (explained_only[name] in plan) == (name in shown), name
    assert secret not in plan
    assert secret not in progress
    checkpoint_text = "\n".join(
        path.read_text(errors="replace")
        for path in (tmp_path / "checkpoint").rglob("*")
        if path.is_file()
    )
    assert secret not in checkpoint_text
    rows = spark.read.parquet(str(tmp_path / "out")).select("value").collect()
    assert sorted(tuple(row.value) for row in rows) == [(0, "app"), (1, "app"), (2, "app")]


def _read(query: Any) -> int:
    return sum(update.numInputRows for update in query.recentProgress)
