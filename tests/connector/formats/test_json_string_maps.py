"""The native core reads a struct's string maps with the Python path's values, or declines.

``MAP<STRING, STRING>`` fields are what keeps pyarrow's reader from the benchmark's JSON
order; the partial reader takes them from ``kafka_rescalable_native.json_string_maps`` when
the core is installed. Random structs of bulk fields and string maps, random documents with
the nasty forms of ``test_json_bulk.py`` (repeated keys, wrong types, malformed payloads):
the partial column must be the record-by-record reader's, or ``None`` where that fails, and
the same with the core switched off. Valid documents must be read by the core, declining
only the records Python's own rule sends back (a surrogate escape), so that the property
cannot hold by declining everything.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql.types import MapType, StringType, StructField, StructType

from kafka_rescalable.formats.json_partial import _PartialDecoder
from kafka_rescalable.formats.json_values import column_reader_for
from kafka_rescalable.formats.native_core import NATIVE_ENV, native_core
from tests.connector.formats.test_json_bulk import SETTINGS, payloads
from tests.connector.formats.test_json_partial import (
    _assert_equal,
    _both,
    mixed_types,
    partial_or_given_up,
)

core = native_core()
if core is None or not hasattr(core, "json_string_maps"):
    pytest.fail(
        "the native core is not installed (or KAFKA_RESCALABLE_NATIVE=0): "
        "pip install ./native, as the README's test command does",
        pytrace=False,
    )

_MAP = MapType(StringType(), StringType())
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def string_map_structs() -> st.SearchStrategy[StructType]:
    """Draw a struct of one to three bulk fields and one or two string maps, in any order."""
    return mixed_types(st.just(_MAP))


def _python_only(spark_type: StructType, texts: list[bytes | None]) -> pa.Array | None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(NATIVE_ENV, "0")
        decode = column_reader_for(spark_type)
        assert isinstance(decode, _PartialDecoder)
        return decode(pa.array(texts, pa.binary()))


@SETTINGS
@given(st.data())
def test_the_core_reads_string_maps_as_the_python_path_or_declines(data: st.DataObject) -> None:
    spark_type = data.draw(string_map_structs())
    texts = data.draw(st.lists(payloads(spark_type, nasty=True), min_size=1, max_size=10))
    partial = partial_or_given_up(spark_type, texts)
    python = _python_only(spark_type, texts)
    assert (partial is None) == (python is None)
    if partial is not None and python is not None:
        _assert_equal(partial, python)


@SETTINGS
@given(st.data())
def test_valid_documents_are_read_by_the_core(data: st.DataObject) -> None:
    spark_type = data.draw(string_map_structs())
    texts = data.draw(st.lists(payloads(spark_type, nasty=False), min_size=1, max_size=10))
    maps = [f.name for f in spark_type.fields if f.dataType == _MAP]
    arrays, declined = core.json_string_maps(pa.array(texts, pa.binary()), maps)
    assert [row for row in declined if not _SURROGATE_ESCAPE.search(texts[row])] == []
    assert [a.type for a in arrays] == [pa.map_(pa.string(), pa.string())] * len(maps)
    decode = column_reader_for(spark_type)
    assert isinstance(decode, _PartialDecoder)
    decode._read_rest = _never  # the maps must come from the core
    partial, expected = decode(pa.array(texts, pa.binary())), _both(spark_type, texts)[1]
    assert partial is not None and expected is not None
    _assert_equal(partial, expected)


def _never(payload: bytes) -> dict[str, object]:
    raise AssertionError(f"the Python path read the maps of {payload!r}")


@pytest.mark.parametrize(
    ("text", "declined"),
    [
        (b'{"m": {"k": "v", "n": null}, "id": 1}', False),
        (b'{"id": 1}', False),
        (b'{"m": null}', False),
        (b'{"m": {"k": 1}}', True),  # Spark and the Python path write the number as text
        (b'{"m": {"k": "v", "k": "w"}}', True),
        (b'{"m": {}, "m": {"k": "v"}}', True),
        (b'{"m": {"k": "\\ud83d\\ude00"}}', True),
        (b'{"m": {"k": "v"}, "id": NaN}', True),
        (b'{"m": {"k": "\xff"}}', True),
        (b"[]", True),
    ],
)
def test_what_the_core_declines_the_python_path_reads(text: bytes, declined: bool) -> None:
    spark_type = StructType([StructField("id", StringType()), StructField("m", _MAP)])
    _, rows = core.json_string_maps(pa.array([text], pa.binary()), ["m"])
    assert rows == ([0] if declined else [])
    partial, expected = _both(spark_type, [text, b'{"m": {"a": "b"}}'])
    python = _python_only(spark_type, [text, b'{"m": {"a": "b"}}'])
    if expected is None:
        assert partial is None and python is None
    else:
        assert partial is not None and python is not None
        _assert_equal(partial, expected)
        _assert_equal(python, expected)
