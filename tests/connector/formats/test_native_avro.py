"""The native core against the pure-Python codecs: the same rows, or the same failure.

Random reader schemas within our type mapping, random records and random writer-to-reader
evolutions are decoded by :func:`kafka_rescalable.formats.decoding.decode_batch` on both
paths; the batches must be equal, and where the slow path decodes every record the native
core must have decoded the batch itself (not handed it to the slow path).
"""

from __future__ import annotations

import itertools
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_rescalable.formats import avro_codec
from kafka_rescalable.formats import native_core as core_choice
from kafka_rescalable.formats.avro.parity import (
    promotion_first,
    resolution_differs,
    union_names_a_type,
)
from kafka_rescalable.formats.avro.types import without_ignored_logical_types
from kafka_rescalable.formats.avro_codec import CODEC
from kafka_rescalable.formats.decoding import DecodePlan
from kafka_rescalable.formats.native_core import native_core
from kafka_rescalable.formats.options import DecodeMode, Framing, RegistrySettings
from kafka_rescalable.formats.registry import frame
from tests.connector.formats.avro_batches import (
    batch,
    decode_both,
    decode_on,
    decoding_path,
    plan,
    write,
)
from tests.connector.formats.avro_strategies import evolutions, reader_schemas, records_of

if native_core() is None:
    msg = (
        "the native core is not installed (or KAFKA_RESCALABLE_NATIVE=0): "
        "pip install ./native, as the README's test command does"
    )
    raise ImportError(msg)

_registries = itertools.count()

_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _rows(result: pa.RecordBatch) -> list[Any]:
    """Rows as text: NaN equals NaN, -0.0 differs from 0.0, types are kept."""
    return [repr(row) for row in result.to_pylist()]


def _bulk(decode_plan: DecodePlan, source: pa.RecordBatch) -> pa.Array | None:
    """Give the native core's column for ``source``; ``None``: it handed the batch over."""
    (reader,) = decode_plan.readers
    assert reader.spark_type is not None
    from pyspark.sql.pandas.types import to_arrow_type

    arrow_type = to_arrow_type(reader.spark_type, timezone="UTC")
    bulk = CODEC.column_decoder(reader, reader.spark_type, arrow_type, decode_plan.registry)
    assert bulk is not None
    with decoding_path("native"):
        return bulk(source.column(1))


def _assert_same(decode_plan: DecodePlan, source: pa.RecordBatch, native: bool = True) -> None:
    """Hold both paths' batches equal; ``native``: the core must have decoded it itself."""
    fast, fallback = decode_both(decode_plan, source)
    if isinstance(fallback, BaseException):
        assert type(fast) is type(fallback)
        assert str(fast) == str(fallback)
        return
    assert isinstance(fast, pa.RecordBatch), fast
    assert fast.schema == fallback.schema
    assert _rows(fast) == _rows(fallback)
    assert fast.equals(fallback)
    failed = decode_plan.mode is DecodeMode.PERMISSIVE and fallback.column(7).null_count < len(
        fallback
    )
    if native and not failed:
        assert _bulk(decode_plan, source) is not None, "the native core handed the batch over"


@_SETTINGS
@given(st.data(), reader_schemas(), st.sampled_from(list(DecodeMode)))
def test_random_schemas_and_records_decode_alike(
    data: st.DataObject, schema: tuple[Any, Any], mode: DecodeMode
) -> None:
    reader, records = schema
    values = data.draw(st.lists(st.one_of(st.none(), records), max_size=12), label="records")
    payloads = [None if value is None else write(reader, value) for value in values]
    native = not union_names_a_type(reader)  # arrow-avro misreads those: the slow path reads
    _assert_same(plan(reader, mode=mode), batch(payloads), native)


@_SETTINGS
@given(data=st.data(), evolution=evolutions(), mode=st.sampled_from(list(DecodeMode)))
def test_random_evolutions_decode_alike(
    data: st.DataObject, evolution: tuple[Any, Any, Any], mode: DecodeMode
) -> None:
    reader, writer, writer_records = evolution
    values = data.draw(
        st.lists(
            st.one_of(
                st.none(),
                writer_records.map(lambda value: (1, value)),
                records_of(reader).map(lambda value: (2, value)),
            ),
            max_size=12,
        ),
        label="records",
    )
    schemas = {1: writer, 2: reader}
    payloads = [
        None if item is None else frame(item[0], write(schemas[item[0]], item[1]))
        for item in values
    ]
    # A new registry URL for each example: decoders are cached per worker and plan.
    registry = RegistrySettings((("url", f"http://registry-{next(_registries)}.invalid"),))
    # Where fastavro resolves a union differently, the core hands such writers over.
    native = not union_names_a_type(reader) and (
        writer == reader
        or not (
            promotion_first(reader)
            or union_names_a_type(writer)
            or resolution_differs(
                without_ignored_logical_types(writer), without_ignored_logical_types(reader)
            )
        )
    )
    with _registry({key: json.dumps(schema) for key, schema in schemas.items()}):
        _assert_same(plan(reader, Framing.CONFLUENT, mode, registry), batch(payloads), native)


@contextmanager
def _registry(writers: dict[int, str]) -> Iterator[None]:
    """Writer schemas by id, as the registry would give them, without a registry."""
    with pytest.MonkeyPatch.context() as patch:

        def parsed(_registry: object, schema_id: int) -> Any:
            if schema_id not in writers:
                return avro_codec._Unknown(f"the registry has no schema with id {schema_id}")
            return avro_codec._parsed(writers[schema_id])

        patch.setattr(avro_codec, "_writer_schema", parsed)
        patch.setattr(avro_codec, "_writer_text", lambda _registry, key: writers.get(key))
        yield


@pytest.fixture
def fresh_log(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Capture the package logger, as if the process had not said which decoders run."""
    monkeypatch.setattr(core_choice, "_said", set())
    logger = logging.getLogger("kafka_rescalable")
    logger.addHandler(caplog.handler)
    yield
    logger.removeHandler(caplog.handler)


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "kafka_rescalable"]


def test_the_decoders_in_use_are_logged_once_per_process_and_choice(
    fresh_log: None, caplog: pytest.LogCaptureFixture
) -> None:
    for _ in range(3):
        with decoding_path("native"):
            assert native_core() is not None
    with decoding_path("fallback"):
        assert native_core() is None
        assert native_core() is None
    version = native_core().__version__  # type: ignore[union-attr]
    assert _lines(caplog) == [
        "typed records are decoded and encoded with the native core "
        f"(kafka_rescalable_native {version})",
        "typed records are decoded and encoded with the pure-Python codecs: "
        "KAFKA_RESCALABLE_NATIVE=0",
    ]


def test_without_the_native_core_the_fallback_decodes_and_says_why(
    fresh_log: None, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "kafka_rescalable_native", None)  # import fails
    reader = _record("long")
    decoded = decode_on("native", plan(reader), batch([write(reader, {"x": 7}), None]))
    assert decoded.column(1).to_pylist() == [{"x": 7}, None]
    (line,) = _lines(caplog)
    assert line.startswith(
        "typed records are decoded and encoded with the pure-Python codecs: "
        "kafka_rescalable_native is not installed"
    )


def test_sliced_batches_and_batches_past_one_piece_decode_alike() -> None:
    reader = _record(["null", "long"])
    framed = plan(reader, Framing.CONFLUENT)  # no registry: every id reads with the reader
    rows = 70_000  # past the core's 65,536 rows per piece
    payloads = [
        None if i % 5 == 0 else frame(i % 3, write(reader, {"x": None if i % 7 else i}))
        for i in range(rows)
    ]
    source = batch(payloads)
    _assert_same(framed, source)
    _assert_same(framed, source.slice(33, 1_000))
    plain = [None if i % 5 == 0 else write(reader, {"x": i}) for i in range(rows)]
    _assert_same(plan(reader), batch(plain))
    _assert_same(plan(reader), batch(plain).slice(65_530, 100))


def test_a_record_of_no_fields_decodes_alike() -> None:
    reader = {"type": "record", "name": "Empty", "fields": []}
    _assert_same(plan(reader), batch([b"", None, b""]))


def _record(field_type: Any) -> dict[str, Any]:
    return {"type": "record", "name": "R", "fields": [{"name": "x", "type": field_type}]}


_DECIMAL = {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}
_PAIRS = {
    "type": "array",
    "items": {
        "type": "record",
        "name": "Pair",
        "fields": [{"name": "k", "type": "string"}, {"name": "v", "type": "long"}],
    },
}
"""Written as a map of longs would be: a map's entries are encoded as such records."""

_REFUSED = [
    # What the core reads but the slow path refuses: each batch goes to the slow path.
    pytest.param(_record(_DECIMAL), _record("bytes"), {"x": b"\x01\x86\xa0"}, id="decimal-digits"),
    pytest.param(
        _record({"type": "long", "logicalType": "timestamp-millis"}),
        _record("long"),
        {"x": 2**62},
        id="timestamp-range",
    ),
    pytest.param(
        _record({"type": "int", "logicalType": "date"}), _record("int"), {"x": 2**30}, id="date"
    ),
    pytest.param(
        _record({"type": "map", "values": "long"}),
        _record(_PAIRS),
        {"x": [{"k": "a", "v": 1}, {"k": "a", "v": 2}]},
        id="repeated-map-key",
    ),
    pytest.param(_record("string"), _record("bytes"), {"x": b"\xff\xfe"}, id="invalid-utf8"),
    pytest.param(_record("boolean"), _record("int"), {"x": 1}, id="boolean-byte-2"),
]


@pytest.mark.parametrize("mode", list(DecodeMode))
@pytest.mark.parametrize(("reader", "writer", "value"), _REFUSED)
def test_what_the_slow_path_refuses_is_refused_alike(
    reader: Any, writer: Any, value: Any, mode: DecodeMode
) -> None:
    good = write(reader, _good(reader))
    payloads = [good, None, write(writer, value), good]
    _assert_same(plan(reader, mode=mode), batch(payloads), native=False)


def _good(reader: Any) -> Any:
    kind = reader["fields"][0]["type"]
    if kind == "boolean":
        return {"x": True}
    if kind == "string":
        return {"x": "ok"}
    if isinstance(kind, dict) and kind["type"] == "map":
        return {"x": {"a": 1, "b": 2}}
    if isinstance(kind, dict) and kind.get("logicalType") == "decimal":
        return {"x": Decimal("12.34")}
    return {"x": 0}


@pytest.mark.parametrize("mode", list(DecodeMode))
@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(b"\x01\x00\x00\x00\x01\x02", id="magic-byte"),
        pytest.param(b"\x00\x00", id="short-header"),
        pytest.param(frame(1, b"\x80"), id="truncated"),
        pytest.param(frame(77, b"\x02"), id="unknown-id"),
    ],
)
def test_malformed_framed_payloads_fail_alike(bad: bytes, mode: DecodeMode) -> None:
    reader = _record("long")
    good = frame(1, write(reader, {"x": 5}))
    registry = RegistrySettings((("url", f"http://registry-{next(_registries)}.invalid"),))
    with _registry({1: json.dumps(reader)}):
        _assert_same(
            plan(reader, Framing.CONFLUENT, mode, registry),
            batch([good, bad, None, good]),
            native=False,
        )


def test_bytes_after_the_record_are_ignored_on_both_paths() -> None:
    reader = _record("long")
    _assert_same(plan(reader), batch([write(reader, {"x": 5}) + b"\x00\x07", None]))


@pytest.mark.parametrize("mode", list(DecodeMode))
@pytest.mark.parametrize(
    ("written", "read", "native"),
    [
        ("int", "float", True),
        ("int", "double", True),
        ("long", "double", True),
        ("long", "float", False),
    ],
)
def test_integers_written_for_floats_read_alike(
    written: str, read: str, native: bool, mode: DecodeMode
) -> None:
    reader = {"type": "record", "name": "R", "fields": [{"name": "x", "type": read}]}
    writer = {**reader, "fields": [{"name": "x", "type": written}]}
    top = 2**31 - 1 if written == "int" else 2**60 + 2**36 + 1  # rounds twice via a double
    values = [3, -(2**24) - 1, top, -top]
    payloads = [frame(1, write(writer, {"x": value})) for value in values]
    payloads.append(frame(2, write(reader, {"x": 0.5})))
    registry = RegistrySettings((("url", f"http://registry-{next(_registries)}.invalid"),))
    with _registry({1: json.dumps(writer), 2: json.dumps(reader)}):
        _assert_same(plan(reader, Framing.CONFLUENT, mode, registry), batch(payloads), native)


def _with(fields: list[Any], name: str = "A") -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": fields}


_X = {"name": "x", "type": "int"}
_MILLIS = {"type": "long", "logicalType": "timestamp-millis"}
_DEC = {"type": "bytes", "logicalType": "decimal", "precision": 6}

_EVOLVED = [
    # (reader, writer, writer's records, read natively): both paths must give the same rows.
    pytest.param(_with([_X]), _with([_X], "B"), [{"x": 1}], False, id="record-renamed"),
    pytest.param(
        _with([_X, {"name": "b", "type": "bytes", "default": "\u00ff"}]),
        _with([_X]),
        [{"x": 1}],
        False,  # fastavro encodes a bytes default's text as UTF-8
        id="bytes-default",
    ),
    pytest.param(
        _with([{"name": "d", "type": {**_DEC, "scale": 3}}]),
        _with([{"name": "d", "type": {**_DEC, "scale": 2}}]),
        [{"d": Decimal("1.25")}],
        False,  # fastavro reads with the writer's scale, the core with the reader's
        id="decimal-scale",
    ),
    pytest.param(
        _with([_X, {"name": "t", "type": _MILLIS, "default": 1000}]),
        _with([_X]),
        [{"x": 1}],
        False,  # fastavro reads a timestamp-millis default as microseconds
        id="timestamp-default",
    ),
    pytest.param(
        _with([{"name": "t", "type": "long"}]),
        _with([{"name": "t", "type": _MILLIS}]),
        [{"t": 1000}],
        False,  # fastavro applies the writer's logical type: the slow path refuses the row
        id="logical-type-dropped",
    ),
    pytest.param(
        _with([{"name": "y", "type": "int", "aliases": ["x"]}]), _with([_X]), [{"x": 1}], True
    ),
    pytest.param(
        _with(
            [
                _X,
                {
                    "name": "r",
                    "type": _with([{"name": "z", "type": "long"}], "In"),
                    "default": {"z": 5},
                },
            ]
        ),
        _with([_X]),
        [{"x": 1}],
        True,
        id="record-default",
    ),
    pytest.param(
        _with([_X, {"name": "m", "type": {"type": "map", "values": "long"}, "default": {"a": 1}}]),
        _with([_X]),
        [{"x": 1}],
        True,
        id="map-default",
    ),
    pytest.param(
        _with([{"name": "x", "type": ["null", "string", "int"]}]), _with([_X]), [{"x": 3}], True
    ),
    pytest.param(
        _with([{"name": "x", "type": "long"}]),
        _with([{"name": "x", "type": ["int", "long"]}]),
        [{"x": 3}, {"x": 2**40}],
        True,
        id="union-to-long",
    ),
    pytest.param(
        _with([{"name": "x", "type": "bytes"}]),
        _with([{"name": "x", "type": "string"}]),
        [{"x": "é"}],
        True,
        id="string-to-bytes",
    ),
]


@pytest.mark.parametrize("mode", list(DecodeMode))
@pytest.mark.parametrize(("reader", "writer", "values", "native"), _EVOLVED)
def test_evolutions_where_the_libraries_differ_read_alike(
    reader: Any, writer: Any, values: list[Any], native: bool, mode: DecodeMode
) -> None:
    payloads = [frame(1, write(writer, value)) for value in values]
    registry = RegistrySettings((("url", f"http://registry-{next(_registries)}.invalid"),))
    with _registry({1: json.dumps(writer)}):
        _assert_same(plan(reader, Framing.CONFLUENT, mode, registry), batch(payloads), native)
