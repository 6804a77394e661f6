"""A struct with maps is read partly in bulk, with exactly the record-by-record reader's result.

Random schemas mixing fields pyarrow reads with fields it cannot (maps, binary, arrays and
structs holding a map), and random documents for them, written as in ``test_json_bulk.py``
(its strategies, with repeated keys, wrong types, malformed and partial payloads): the partial
bulk column must equal the record-by-record one, bit for bit, or be ``None``, and ``None``
whenever a record does not decode. Valid documents in the common forms must be read partly in
bulk, so that the property cannot hold by never using it. Then the benchmark's order records,
and the modes' reasons and messages through the executor's decoding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DecimalType,
    DoubleType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafka_rescalable.errors import PayloadDecodeError, RecordDecodeError
from kafka_rescalable.formats import decoding
from kafka_rescalable.formats.codec import ReaderSchema, codec_for
from kafka_rescalable.formats.decoding import DecodePlan, decode_batch
from kafka_rescalable.formats.json_bulk import readable_in_bulk
from kafka_rescalable.formats.json_partial import _PartialDecoder
from kafka_rescalable.formats.json_values import column_reader_for, reader_for
from kafka_rescalable.formats.options import DecodeMode, PayloadFormat, PayloadOptions
from tests.connector.formats.avro_batches import batch
from tests.connector.formats.test_json_bulk import (
    LEAVES,
    NAMES,
    SETTINGS,
    Obj,
    _same,
    _struct,
    payloads,
    values,
    write,
)

_TEXT = StringType()


def _bulk_types() -> st.SearchStrategy[DataType]:
    return st.recursive(
        st.sampled_from(LEAVES),
        lambda children: st.one_of(children.map(ArrayType), _struct(children)),
        max_leaves=4,
    )


def _refused_types() -> st.SearchStrategy[DataType]:
    """Draw a type pyarrow's reader cannot take: a map somewhere, or binary."""
    inner = st.recursive(
        st.sampled_from(LEAVES),
        lambda children: st.one_of(
            children.map(ArrayType), _struct(children), children.map(lambda t: MapType(_TEXT, t))
        ),
        max_leaves=3,
    )
    maps = inner.map(lambda t: MapType(_TEXT, t))
    holding = st.one_of(
        maps, maps.map(ArrayType), maps.map(lambda m: StructType([StructField("m", m)]))
    )
    return st.one_of(maps, maps, holding, st.just(BinaryType()))


def mixed_types(
    refused: st.SearchStrategy[DataType] | None = None,
) -> st.SearchStrategy[StructType]:
    """Draw a struct with at least one field of each kind, in any order.

    ``refused`` draws the types pyarrow's reader cannot take (default: any of them).
    """
    refused_types = _refused_types() if refused is None else refused
    counts = st.tuples(st.integers(1, 3), st.integers(1, 2))
    return counts.flatmap(
        lambda n: st.tuples(
            st.lists(st.sampled_from(NAMES), min_size=sum(n), max_size=sum(n), unique=True),
            st.lists(_bulk_types(), min_size=n[0], max_size=n[0]),
            st.lists(refused_types, min_size=n[1], max_size=n[1]),
        ).flatmap(
            lambda drawn: st.permutations(drawn[1] + drawn[2]).map(
                lambda types: StructType(
                    [StructField(n, t) for n, t in zip(drawn[0], types, strict=True)]
                )
            )
        )
    )


def _both(spark_type: StructType, texts: list[bytes | None]) -> tuple[Any, Any]:
    """Return the partial bulk column and the record-by-record one (``None`` if one fails)."""
    read = reader_for(spark_type)
    try:
        expected = [None if p is None else read(p) for p in texts]
        column = pa.array(expected, to_arrow_type(spark_type, timezone="UTC"))
    except (PayloadDecodeError, pa.ArrowException, TypeError, ValueError, OverflowError):
        column = None  # decode_batch reads such a batch record by record, with the reasons
    decode = column_reader_for(spark_type)
    assert isinstance(decode, _PartialDecoder)
    return decode(pa.array(texts, pa.binary())), column


def _assert_equal(partial: pa.Array, expected: pa.Array) -> None:
    assert partial.type == expected.type
    assert partial.is_null().to_pylist() == expected.is_null().to_pylist()
    assert _same(partial.to_pylist()) == _same(expected.to_pylist())


def partial_or_given_up(spark_type: StructType, texts: list[bytes | None]) -> pa.Array | None:
    """Hold the partial column equal to record by record's, or ``None`` where that fails."""
    partial, expected = _both(spark_type, texts)
    if expected is None:
        assert partial is None
    elif partial is not None:
        _assert_equal(partial, expected)
    return partial


@SETTINGS
@given(st.data())
def test_partial_bulk_equals_record_by_record_or_gives_up(data: st.DataObject) -> None:
    spark_type = data.draw(mixed_types())
    texts = data.draw(st.lists(payloads(spark_type, nasty=True), min_size=1, max_size=10))
    partial_or_given_up(spark_type, texts)


@SETTINGS
@given(st.data())
def test_valid_documents_in_the_common_forms_are_read_partly_in_bulk(
    data: st.DataObject,
) -> None:
    spark_type = data.draw(mixed_types())
    texts = data.draw(st.lists(payloads(spark_type, nasty=False), min_size=1, max_size=10))
    partial, expected = _both(spark_type, texts)
    assert expected is not None
    assert partial is not None
    _assert_equal(partial, expected)


def _bad_maps_only(spark_type: StructType) -> st.SearchStrategy[bytes | None]:
    """Draw documents whose bulk fields are clean and whose other fields are anything.

    So that the batch's fate is the per-record part's: nasty values everywhere make the bulk
    part give most batches up first.
    """
    fields = [
        st.tuples(
            st.just(f.name),
            st.one_of(st.none(), values(f.dataType, nasty=not readable_in_bulk(f.dataType))),
        )
        for f in spark_type.fields
    ]
    document = st.tuples(*fields).flatmap(st.permutations).map(Obj)
    text = st.builds(write, document, st.booleans(), st.just(False)).map(str.encode)
    return st.one_of(text, text, text, st.sampled_from([None, b"", b"null", b"{}"]))


@SETTINGS
@given(st.data())
def test_a_record_whose_other_fields_do_not_decode_gives_the_batch_up(
    data: st.DataObject,
) -> None:
    spark_type = data.draw(mixed_types())
    texts = data.draw(st.lists(_bad_maps_only(spark_type), min_size=1, max_size=6))
    partial, expected = _both(spark_type, texts)
    if expected is None:
        assert partial is None
    else:
        assert partial is not None
        _assert_equal(partial, expected)


# -- the order record ---------------------------------------------------------------------------

ORDER = StructType(
    [
        StructField("order_id", LongType()),
        StructField("amount", DecimalType(12, 2)),
        StructField("unit_price", DoubleType()),
        StructField("created_at", TimestampType()),
        StructField("tags", ArrayType(_TEXT)),
        StructField("attributes", MapType(_TEXT, _TEXT)),
        StructField("coupon", _TEXT),
    ]
)
GOOD = b'{"order_id":1,"amount":8.08,"unit_price":2.02,"created_at":"2026-01-01T00:00:00.111Z",'


def _orders() -> Iterator[bytes]:
    from benchmarks.whole_queries.order_encodings import encoded_orders

    for _, value in encoded_orders("json", 0, 200):
        yield value


def test_the_benchmark_orders_are_read_partly_in_bulk_as_record_by_record() -> None:
    from benchmarks.micro.json_decode import MAP_ORDER

    partial, expected = _both(MAP_ORDER, list(_orders()))
    assert partial is not None and expected is not None
    _assert_equal(partial, expected)
    assert partial.equals(expected)


ODD_BUT_GOOD = [
    GOOD + b'"tags":["a"]}',  # no attributes
    GOOD + b'"attributes":null}',  # an explicit null
    b'{"attributes":{"b":"2","a":"1"},"coupon":"C","order_id":2}',  # any key order
    GOOD + b'"attributes":{"a":"1","a":"2","b":null}}',  # a repeated key: the last one
    GOOD + b'"attributes":{"a":"1"},"attributes":{"b":"2"}}',  # a repeated field too
    GOOD + b'"attributes":{"n":1.50,"o":{"x":[1,true]},"e":1e400}}',  # as their JSON text
    b'{\n  "order_id": 3,\n  "attributes": {"p": "pretty"}\n}',  # not one line: sent back
    b'{"order_id": 4, "created_at": 1700000000, "attributes": {"q": "epoch"}}',  # sent back
    b"{}",
    b"   ",  # an empty payload is null
    None,
]


def test_odd_but_good_orders_read_as_record_by_record() -> None:
    partial, expected = _both(ORDER, ODD_BUT_GOOD * 3)
    assert partial is not None and expected is not None
    _assert_equal(partial, expected)
    rows = partial.to_pylist()
    assert rows[3]["attributes"] == [("a", "2"), ("b", None)]
    assert rows[4]["attributes"] == [("b", "2")]
    assert rows[5]["attributes"] == [("n", "1.5"), ("o", '{"x":[1,true]}'), ("e", '"Infinity"')]
    assert rows[9] is None and rows[10] is None


@pytest.mark.parametrize(
    "bad",
    [
        GOOD + b'"attributes":["a"]}',  # not an object
        GOOD + b'"attributes":"a=1"}',
        GOOD + b'"attributes":{"s":"\\ud800"}}',  # a lone surrogate
        GOOD + b'"attributes":{"a":"1"},"order_id":"2"}',  # the bulk part fails
        b'{"attributes":{"a":"1"}} x',
        b"null",
        b"[]",
        b"{\xff}",
    ],
)
def test_a_record_that_does_not_decode_gives_the_batch_up(bad: bytes) -> None:
    partial, expected = _both(ORDER, [GOOD + b'"attributes":{"a":"1"}}', bad])
    assert expected is None
    assert partial is None


def _decode(texts: list[bytes | None], mode: DecodeMode, bulk: bool) -> Any:
    payload = PayloadOptions("value", PayloadFormat.JSON, schema="ddl")
    reader = ReaderSchema(payload, "ddl", f"STRUCT<{ORDER.simpleString()}>")
    plan = DecodePlan((reader,), (ORDER.json(),), mode, None)
    codec = type(codec_for(PayloadFormat.JSON))
    shipped = codec.column_decoder
    if not bulk:
        codec.column_decoder = lambda *args: None  # type: ignore[method-assign]
    decoding._columns.cache_clear()
    try:
        return decode_batch(batch(texts), plan)
    finally:
        codec.column_decoder = shipped  # type: ignore[method-assign]
        decoding._columns.cache_clear()


BAD_ONES = [
    GOOD + b'"attributes":{"a":1,"b":[2]},"tags":"x"}',
    GOOD + b'"attributes":{"a":"1"},"order_id":"2"}',
    GOOD + b'"attributes":[1]}',
    GOOD + b'"attributes":{"a":"\\udc00"}}',
]


@pytest.mark.parametrize("bad", BAD_ONES)
def test_permissive_keeps_the_same_partial_values_and_reasons(bad: bytes) -> None:
    texts = [*ODD_BUT_GOOD, bad, *ODD_BUT_GOOD]
    partly = _decode(texts, DecodeMode.PERMISSIVE, bulk=True)
    whole = _decode(texts, DecodeMode.PERMISSIVE, bulk=False)
    assert partly.equals(whole)
    assert partly.column("decodeError").to_pylist()[len(ODD_BUT_GOOD)] is not None


@pytest.mark.parametrize("bad", BAD_ONES)
def test_failfast_says_the_same(bad: bytes) -> None:
    texts = [*ODD_BUT_GOOD, bad]
    with pytest.raises(RecordDecodeError) as partly:
        _decode(texts, DecodeMode.FAILFAST, bulk=True)
    with pytest.raises(RecordDecodeError) as whole:
        _decode(texts, DecodeMode.FAILFAST, bulk=False)
    assert str(partly.value) == str(whole.value)


def test_a_clean_batch_goes_through_the_partial_decoder() -> None:
    decoding._columns.cache_clear()
    payload = PayloadOptions("value", PayloadFormat.JSON, schema="ddl")
    reader = ReaderSchema(payload, "ddl", f"STRUCT<{ORDER.simpleString()}>")
    plan = DecodePlan((reader,), (ORDER.json(),), DecodeMode.FAILFAST, None)
    decode_batch(batch([GOOD + b'"attributes":{"a":"1"}}']), plan)
    assert isinstance(decoding._columns(plan)[0].decode_column, _PartialDecoder)
    decoding._columns.cache_clear()
