"""The typed-records benchmark's pure parts: its encodings, contenders, UDF, rounds and table."""

from __future__ import annotations

import datetime
import decimal
import json
import sys
import types
from pathlib import Path

import pyarrow as pa
import pytest

from benchmarks.whole_queries.avro_records import order, order_bodies
from benchmarks.whole_queries.order_encodings import (
    ORDER_DDL,
    encoded_orders,
    expected_rows,
)
from benchmarks.whole_queries.spark_throughput import QueryRun, rotating_rounds
from benchmarks.whole_queries.typed_contenders import (
    JVM,
    NATIVE_ENV,
    OURS_SIDE,
    Contender,
    decode_orders,
    spark_protobuf_jars,
    worker_decoders,
)
from benchmarks.whole_queries.typed_decode import (
    TypedResults,
    TypedRun,
    contenders_of,
    typed_section,
)


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


def test_framed_avro_is_the_plain_body_behind_the_magic_byte_and_the_schema_id() -> None:
    plain = dict(encoded_orders("avro", 0, 20))
    framed = dict(encoded_orders("avro-framed", 0, 20, schema_id=258))

    assert all(framed[i] == b"\x00\x00\x00\x01\x02" + plain[i] for i in range(20))
    with pytest.raises(ValueError, match="schema_id"):
        next(encoded_orders("avro-framed", 0, 1))


def test_json_values_read_back_as_the_records_written() -> None:
    for (index, value), want in zip(
        encoded_orders("json", 0, 60), expected_rows("json", 60), strict=True
    ):
        got = json.loads(value, parse_float=decimal.Decimal)
        got["created_at"] = datetime.datetime.fromisoformat(got["created_at"])
        got["unit_price"] = float(got["unit_price"])
        assert got == want, index
    assert ORDER_DDL.startswith("order_id bigint, customer_id bigint, created_at timestamp")
    assert "amount decimal(12,2)" in ORDER_DDL


def test_protobuf_messages_read_back_as_the_records_written() -> None:
    from benchmarks.whole_queries.order_encodings import _message_class

    message = _message_class()
    for (index, value), want in zip(
        encoded_orders("protobuf", 0, 60), expected_rows("protobuf", 60), strict=True
    ):
        parsed = message.FromString(value)
        got = {field.name: getattr(parsed, field.name) for field in parsed.DESCRIPTOR.fields}
        got["created_at"] = parsed.created_at.ToDatetime(tzinfo=datetime.timezone.utc)
        got["status"] = parsed.DESCRIPTOR.enum_types_by_name["Status"].values[parsed.status].name
        got["coupon"] = parsed.coupon if parsed.HasField("coupon") else None
        got["tags"], got["attributes"] = list(parsed.tags), dict(parsed.attributes)
        assert got == want, index
    assert want["amount"] == str(order(59)["amount"])


def test_an_unknown_encoding_or_format_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="'avro', 'avro-framed', 'json', 'protobuf'"):
        next(encoded_orders("xml", 0, 1))
    with pytest.raises(ValueError, match="choose from binary, avro, avro-registry"):
        contenders_of(["avro", "xml"])


def test_each_format_has_our_side_and_a_jvm_side_shared_where_the_decoder_is() -> None:
    contenders = contenders_of(["binary", "avro", "avro-udf", "protobuf"])

    assert contenders == [
        Contender("binary", OURS_SIDE),
        Contender("avro", OURS_SIDE),
        Contender("avro-udf", OURS_SIDE),
        Contender("protobuf", OURS_SIDE),
        Contender("binary", JVM),
        Contender("avro", JVM),
        Contender("protobuf", JVM),
    ]


def test_the_rounds_rotate_the_order_and_keep_the_first_and_the_best_run() -> None:
    calls: list[str] = []
    seconds = iter([10.0, 20.0, 5.0, 8.0, 4.0, 9.0])

    def run_one(contender: str) -> QueryRun:
        calls.append(contender)
        return QueryRun(rows=100, seconds=next(seconds), batches=1, batch_seconds=1.0)

    first, best = rotating_rounds(["a", "b"], 2, run_one, lambda _line: None)

    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert (first["a"].seconds, first["b"].seconds) == (10.0, 20.0)
    assert (best["a"].seconds, best["b"].seconds) == (4.0, 5.0)


def _run(seconds: float) -> QueryRun:
    return QueryRun(rows=1_000, seconds=seconds, batches=1, batch_seconds=seconds / 2)


def test_the_table_names_our_decoder_gives_ratios_and_says_what_did_not_run() -> None:
    runs = [
        TypedRun(1_000, Contender("binary", OURS_SIDE), _run(1.0), _run(1.0)),
        TypedRun(1_000, Contender("avro", OURS_SIDE), _run(2.0), _run(1.0)),
        TypedRun(1_000, Contender("protobuf", OURS_SIDE), _run(4.0), _run(4.0)),
        TypedRun(1_000, Contender("binary", JVM), _run(1.0), _run(0.5)),
        TypedRun(1_000, Contender("avro", JVM), _run(4.0), _run(2.0)),
        TypedRun(1_000, Contender("protobuf", JVM), None, None, "no jar"),
    ]

    decoders = {"avro": "native", "protobuf": "python", "json": "python"}
    heading, table = typed_section(TypedResults(decoders, runs), 2)
    lines = table.splitlines()

    assert heading.endswith(
        "(order records, best of 2 timed runs; our decoders: Avro native, Protobuf python)"
    )

    assert lines[2] == (
        "| 1,000 | binary (no decoding) | ours | 1,000 | 1.0 (0.5) | built-in, bytes | "
        "2,000 | 0.5 (0.2) | 0.50 | 0.50 |"
    )
    assert lines[3].startswith("| 1,000 | Avro, schema inline | ours (native) | 1,000 |")
    assert lines[3].endswith("| built-in + from_avro | 500 | 2.0 (1.0) | 2.00 | 2.00 |")
    assert lines[4].startswith("| 1,000 | Protobuf | ours (python) | 250 |")
    avro_only = TypedResults(decoders, runs[1:2])
    assert (avro_only.summary(), TypedResults(decoders, []).summary()) == (
        "Avro native",
        "Avro native, Protobuf python, JSON python",
    )
    assert "| built-in + from_protobuf | not run: no jar |" in lines[4]
    assert lines[4].endswith("| - | - |")


def test_a_family_is_native_only_where_the_core_and_the_connector_have_it_and_not_forced_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from benchmarks.whole_queries import typed_contenders

    core = types.ModuleType("kafka_rescalable_native")
    core.AvroDecoder = core.JsonDecoder = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kafka_rescalable_native", core)
    glue = {"avro", "protobuf"}  # the connector's native_avro, native_protobuf modules
    monkeypatch.setattr(typed_contenders, "_has_glue", lambda family: family in glue)
    python = {"avro": "python", "protobuf": "python", "json": "python"}

    assert worker_decoders() == {**python, "avro": "native"}
    monkeypatch.setenv(NATIVE_ENV, "0")
    assert worker_decoders() == python
    monkeypatch.delenv(NATIVE_ENV)
    monkeypatch.setitem(sys.modules, "kafka_rescalable_native", None)  # import fails
    assert worker_decoders() == python
    core.json_string_maps = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kafka_rescalable_native", core)
    assert worker_decoders()["json"] == "python, maps native"


def test_without_a_spark_protobuf_jar_the_reason_says_how_to_give_one(tmp_path: Path) -> None:
    assert spark_protobuf_jars(None) == (
        [],
        "spark-protobuf is not on Maven Central: give --spark-protobuf-jar",
    )
    missing = tmp_path / "nothing.jar"
    assert spark_protobuf_jars(missing) == ([], f"--spark-protobuf-jar {missing} is not a file")
