"""JSON text to Spark's Python values, by the rules of ``from_json`` (and back, re-exported).

:func:`reader_for` builds, once per Spark type, a function from a payload's JSON text to the
value ``pa.array`` takes for that type. It reads as ``from_json`` does: a missing field is null,
an unknown field is ignored, names match case-sensitively, a string field takes any JSON value
as its JSON text (:mod:`~kafka_rescalable.formats.json_text`), dates and timestamps are read by
Spark's own lenient grammar (:mod:`~kafka_rescalable.formats.json_times`), a decimal takes a
number or a numeric string (commas dropped), rounded half up to its scale, an empty payload is
null. Where ``from_json`` gives null for a value it cannot read (``"12"`` for a ``BIGINT``, an
integer out of the type's range, text that is not JSON), this raises
:class:`~kafka_rescalable.errors.PayloadDecodeError` naming every field that failed, so ``mode``
decides, and carrying in ``partial`` what ``from_json`` keeps under ``PERMISSIVE``: the fields
that were read, the failed ones null (all of them when the text is not a JSON object).

:func:`column_reader_for` decodes a whole column at once where it provably gives the same
values (:mod:`~kafka_rescalable.formats.json_bulk`), or all its fields but those pyarrow cannot
read, these then record by record (:mod:`~kafka_rescalable.formats.json_partial`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa
import pyspark.sql.types as T

from kafka_rescalable.errors import PayloadDecodeError
from kafka_rescalable.formats.json_bulk import bulk_decoder, unframed
from kafka_rescalable.formats.json_leaves import Convert, Mismatch, leaf_reader
from kafka_rescalable.formats.json_partial import SendBack, partial_decoder
from kafka_rescalable.formats.json_text import exact_number
from kafka_rescalable.formats.json_writer import has_decimal, writer_for

__all__ = ["column_reader_for", "reader_for", "writer_for"]

_Salvage = Callable[[Any, str, list[str]], Any]
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def column_reader_for(
    spark_type: T.DataType, check_id: Callable[[int], None] | None = None
) -> Callable[[pa.Array], pa.Array | None] | None:
    """Build the whole-column decoder of ``spark_type``, or ``None`` where there is none.

    It returns the column it decoded, equal to what :func:`reader_for` gives record by record,
    or ``None`` when the batch has a record that does not decode (then decode it record by
    record, for the reasons and ``mode``). With ``check_id``, the payloads are registry-framed
    and ``check_id`` checks each writer schema id they name.
    """
    read = reader_for(spark_type)
    decode = bulk_decoder(spark_type, read)
    if decode is None:
        decode = partial_decoder(spark_type, read, _fields_reader)
    if decode is None or check_id is None:
        return decode
    return unframed(decode, check_id)


def reader_for(spark_type: T.DataType) -> Callable[[bytes | str], Any]:
    """Build the reader of one payload's JSON text as a value of ``spark_type``.

    Raises
    ------
    ValueError
        At build time, for a type ``from_json`` does not read either (a map with non-string
        keys, an interval).
    """
    convert, fast, bounds = _converter(spark_type)
    if bounds is not None:
        fast = None  # an integer at the top is checked against its range too
    salvage = _salvager(spark_type)
    container = isinstance(spark_type, T.StructType | T.ArrayType | T.MapType)
    empty = dict.fromkeys(spark_type.names) if isinstance(spark_type, T.StructType) else None
    one_struct = isinstance(spark_type, T.ArrayType) and isinstance(
        spark_type.elementType, T.StructType
    )
    decimals = has_decimal(spark_type)

    def read(payload: bytes | str) -> Any:
        try:
            text = payload if isinstance(payload, str) else payload.decode("utf-8")
        except UnicodeDecodeError as error:
            raise PayloadDecodeError(f"not JSON: {error}", partial=empty) from None
        try:
            value = (_exact_loads if decimals else json.loads)(text)
        except ValueError as error:
            if not text.strip(" \t\n\r"):
                return None  # an empty payload, as from_json reads it
            raise PayloadDecodeError(f"not JSON: {error}", partial=empty) from None
        except RecursionError:
            raise PayloadDecodeError("not JSON: nested too deeply", partial=empty) from None
        if value is None and not container:
            return None
        if one_struct and type(value) is dict:
            value = [value]  # from_json reads one object as an array of one struct
        try:
            result = value if type(value) is fast else convert(value)
        except Mismatch as mismatch:
            reasons: list[str] = []
            try:
                result = salvage(value, "", reasons)
            except Mismatch as whole:
                result, reasons = empty, [whole.describe()]
            result = _check_strings(text, result, reasons)
            reason = "; ".join(reasons) or mismatch.describe()
            raise PayloadDecodeError(reason, partial=result) from None
        if "\\u" in text and _SURROGATE_ESCAPE.search(text):
            reasons = []
            result = _check_strings(text, result, reasons)
            if reasons:
                raise PayloadDecodeError("; ".join(reasons), partial=result)
        return result

    return read


def _fields_reader(spark_type: T.StructType, names: list[str]) -> Callable[[bytes], dict[str, Any]]:
    """Build the reader of some top-level fields of ``spark_type``, for the partial bulk reader.

    It gives what :func:`reader_for` gives for those fields, by the same parser (exact decimals
    if the struct has any, so that every value parses alike) and the same converters, or
    raises :class:`~kafka_rescalable.formats.json_partial.SendBack` wherever that is in doubt:
    the whole reader then reads the record, for its value or its reasons.
    """
    convert = _struct(T.StructType([field for field in spark_type if field.name in names]))
    loads = _exact_loads if has_decimal(spark_type) else json.loads

    def read(payload: bytes) -> dict[str, Any]:
        try:
            text = payload.decode("utf-8")
            if "\\u" in text and _SURROGATE_ESCAPE.search(text):
                raise SendBack  # the whole reader checks every string for a lone surrogate
            return convert(loads(text))
        except Exception:  # noqa: BLE001 - any doubt: the whole reader reads it, as today
            raise SendBack from None

    return read


_DECIMAL_DECODER = json.JSONDecoder(parse_float=exact_number)


def _exact_loads(text: str) -> Any:
    """Parse with fractional numbers as Decimal: a decimal column needs their exact digits."""
    return _DECIMAL_DECODER.decode(text)


def _check_strings(text: str, value: Any, reasons: list[str], path: str = "") -> Any:
    r"""Null the strings holding a lone surrogate (``"\\ud800"``), which no UTF-8 column holds.

    ``from_json`` writes ``?`` in their place; here the field fails, named in ``reasons``.
    """
    if not _SURROGATE_ESCAPE.search(text):
        return value
    if type(value) is str:
        if _SURROGATE.search(value):
            reasons.append(f"{path.lstrip('.') or 'the value'}: a lone UTF-16 surrogate escape")
            return None
        return value
    if type(value) is list:
        return [_check_strings(text, v, reasons, f"{path}[{i}]") for i, v in enumerate(value)]
    if type(value) is dict:
        return {k: _check_strings(text, v, reasons, f"{path}.{k}") for k, v in value.items()}
    return value


def _converter(spark_type: T.DataType) -> tuple[Convert, type | None, tuple[int, int] | None]:
    """Return ``(convert, fast, bounds)``: a value of type ``fast`` (within ``bounds``) is kept."""
    if isinstance(spark_type, T.StructType):
        return _struct(spark_type), None, None
    if isinstance(spark_type, T.ArrayType):
        return _array(spark_type), None, None
    if isinstance(spark_type, T.MapType):
        return _map(spark_type), None, None
    return leaf_reader(spark_type)


def _struct(spark_type: T.StructType) -> Convert:
    fields, ints = [], []
    for field in spark_type.fields:
        convert, fast, bounds = _converter(field.dataType)
        if bounds is None:
            fields.append((field.name, convert, fast))
        else:
            ints.append((field.name, convert, *bounds))

    def convert(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise Mismatch("an object", value)
        get = value.get
        out = {}
        for name, field_convert, fast in fields:
            item = get(name)
            fits = item is None or type(item) is fast  # _fits inline: once per field and record
            out[name] = item if fits else _nested(field_convert, item, ".{}", name)
        for name, field_convert, low, high in ints:
            item = get(name)
            fits = item is None or (type(item) is int and low <= item <= high)
            out[name] = item if fits else _nested(field_convert, item, ".{}", name)
        return out

    return convert


def _array(spark_type: T.ArrayType) -> Convert:
    element, fast, bounds = _converter(spark_type.elementType)

    def convert(value: Any) -> list[Any]:
        if type(value) is not list:
            raise Mismatch("an array", value)
        if _all_fit(value, fast, bounds):
            return value
        keep = None if bounds is not None else fast
        return [
            item if item is None or type(item) is keep else _nested(element, item, "[{}]", index)
            for index, item in enumerate(value)
        ]

    return convert


def _map(spark_type: T.MapType) -> Convert:
    if not isinstance(spark_type.keyType, T.StringType):
        msg = f"a JSON object's keys are strings: {spark_type.simpleString()} cannot be read"
        raise ValueError(msg)
    element, fast, bounds = _converter(spark_type.valueType)

    def convert(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise Mismatch("an object", value)
        if _all_fit(value.values(), fast, bounds):
            return value
        keep = None if bounds is not None else fast
        return {
            key: item
            if item is None or type(item) is keep
            else _nested(element, item, "[{!r}]", key)
            for key, item in value.items()
        }

    return convert


def _all_fit(items: Iterable[Any], fast: type | None, bounds: tuple[int, int] | None) -> bool:
    """Say whether every item is null or of type ``fast``: the container needs no conversion."""
    if fast is None or not all(type(item) is fast or item is None for item in items):
        return False
    if bounds is None:
        return True
    numbers = [item for item in items if item is not None]
    return not numbers or (bounds[0] <= min(numbers) and max(numbers) <= bounds[1])


def _nested(convert: Convert, item: Any, place: str, key: Any) -> Any:
    """Convert a field's, element's or map value's ``item``; a mismatch learns where it was.

    ``place`` formats ``key`` as the path step (``.name``, ``[3]``, ``['k']``), only on a
    mismatch, so that values that fit pay nothing for it.
    """
    try:
        return convert(item)
    except Mismatch as mismatch:
        mismatch.path.append(place.format(key))
        raise


def _salvager(spark_type: T.DataType) -> _Salvage:
    """Build what keeps of a value that failed what ``from_json`` keeps (``PERMISSIVE``).

    A struct keeps the fields that were read and nulls the others; an array or a map keeps its
    elements when every failed one is itself a struct that kept something, else it fails whole
    (raises). Each failure's reason is appended to the list it is given.
    """
    convert, _, _ = _converter(spark_type)
    if isinstance(spark_type, T.StructType):
        fields = [(f.name, _converter(f.dataType)[0], _salvager(f.dataType)) for f in spark_type]

        def salvage_struct(value: Any, path: str, reasons: list[str]) -> dict[str, Any]:
            if type(value) is not dict:
                raise Mismatch("an object", value)
            return {
                name: _kept(convert, salvage, value.get(name), f"{path}.{name}", reasons)
                for name, convert, salvage in fields
            }

        return salvage_struct
    if isinstance(spark_type, T.ArrayType | T.MapType):
        is_array = isinstance(spark_type, T.ArrayType)
        inner = spark_type.elementType if is_array else spark_type.valueType
        element, salvage = _converter(inner)[0], _salvager(inner)
        kind, expected = (list, "an array") if is_array else (dict, "an object")

        def salvage_container(value: Any, path: str, reasons: list[str]) -> Any:
            if type(value) is not kind:
                raise Mismatch(expected, value)
            kept = {}
            for key, item in enumerate(value) if is_array else value.items():
                try:
                    kept[key] = _element(element, salvage, item, f"{path}[{key!r}]", reasons)
                except Mismatch as mismatch:
                    mismatch.path.append(f"[{key!r}]")
                    raise
            return list(kept.values()) if is_array else kept

        return salvage_container

    def salvage_leaf(value: Any, path: str, reasons: list[str]) -> Any:
        return convert(value)

    return salvage_leaf


def _kept(convert: Convert, salvage: _Salvage, item: Any, path: str, reasons: list[str]) -> Any:
    """Read a struct field's value, or what it keeps, or null it and record the reason."""
    if item is None:
        return None
    known = len(reasons)
    try:
        return _element(convert, salvage, item, path, reasons)
    except Mismatch as mismatch:
        del reasons[known:]  # the field fails whole: its parts' reasons say less than this one
        reasons.append(mismatch.describe(path))
        return None


def _element(convert: Convert, salvage: _Salvage, item: Any, path: str, reasons: list[str]) -> Any:
    """Read an element's value, or what it keeps; raise when it keeps nothing."""
    if item is None:
        return None
    try:
        return convert(item)
    except Mismatch:
        return salvage(item, path, reasons)
