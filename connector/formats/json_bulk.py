"""A batch's JSON payloads decoded at once by pyarrow's JSON reader, where provably the same.

Record by record, :func:`~kafka_rescalable.formats.json_values.reader_for` costs a
``json.loads`` and a walk per payload; pyarrow's reader (C++) parses a whole column several
times faster. It also reads differently (a JSON ``null`` line, pretty-printed text, ``-0`` as a
double, ``Inf``, precision beyond a decimal's, its own date and time forms), so it is used only
where the result is provably equal, and every doubt goes back to the record-by-record reader:

- **Schemas**: a struct of integers, floats, doubles, booleans, strings, decimals, dates,
  timestamps, structs and arrays of those. Anything else (maps, binary...) pyarrow never
  reads: a top-level field of such a type is read record by record beside the others
  (:mod:`~kafka_rescalable.formats.json_partial`), and anything deeper makes its top-level
  field one of those.
- **pyarrow itself**: its reader must refuse what the record-by-record reader refuses or reads
  otherwise (``"12"`` for an integer, ``1.5`` for an integer, more decimal digits than the
  scale, a number for a string, a repeated key). :func:`_pyarrow_is_strict` checks that once
  per worker on the installed version (26 or later); if not, nothing is bulk.
- **Payloads**: only valid UTF-8 that is, around JSON's own whitespace, one line holding
  ``{...}`` goes to pyarrow (no top-level ``null``, which crashes pyarrow 26, no line break a
  JSON string could hide); the payloads are joined by newlines, so a string cannot span two of
  them, and the rows read must be exactly as many as the payloads (so each gave one object).
  A batch pyarrow refuses is split in halves to find the refused payloads, down to a few rows
  or a bounded number of reads.
- **Values**, checked vectorized after reading: doubles that are NaN, infinite or ``-0.0``,
  decimals beyond their precision (read with 18 decimal places, then rounded half up to their
  own scale, as record by record), and dates and timestamps not in the canonical ISO form
  (``2024-01-02``, ``2024-01-02T03:04:05.123456+05:30``) send their record back.

Records sent back are read record by record (the ones pyarrow is not given first, then the
refused ones as the halving finds them, depth first, then the doubts); as soon as one does
not decode, the decoder gives the batch up (``None``), and it is decoded record by record for
the reasons and ``mode``. After a batch given up or mostly read record by record, the next
batches skip the bulk reader for a while (1, 2, 4... up to 64 batches).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
import pyspark.sql.types as T

from kafka_rescalable.errors import KafkaSourceError, PayloadDecodeError
from kafka_rescalable.formats.json_bulk_times import to_date, to_local_timestamp, to_timestamp

__all__ = ["bulk_decoder", "readable_in_bulk", "unframed"]

_WHITESPACE: Final = " \t\n\r"  # JSON's, which may surround a value
_LINE_BREAKS: Final = r"[\n\r\x00]"
_DEEPEST: Final = 400
"""Payloads that may nest deeper go back: Python's parser stops near 1,000 levels, pyarrow's
does not (it read 5,000,000); a payload nests at most half its length deep."""
_SMALLEST_SPLIT: Final = 8
"""A refused segment this small is read record by record rather than split again."""
_SPLITS: Final = 32
"""At most this many segments are read per batch: refusals spread all over a batch send its
records back after a bounded cost, rather than after as many reads as it has records."""
_DECIMAL_SCALE: Final = 18
"""Decimals are read with this scale (when the precision leaves room), then rounded half up
to their own, as the record-by-record reader does; pyarrow refuses digits beyond the scale."""
_MAX_SKIP: Final = 64
_WIDE: Final = pa.decimal256(40, 0)
"""Room to compare any decimal read (38 digits) with its type's bound (up to 39 digits)."""
_LONGEST: Final = 2**31 - 1
_OLDEST_PYARROW: Final = 26
_INTEGERS = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_SAME = (*_INTEGERS, T.BooleanType, T.StringType)


def bulk_decoder(
    spark_type: T.DataType, read: Callable[[bytes], Any]
) -> Callable[[pa.Array], pa.Array | None] | None:
    """Build the whole-column decoder of ``spark_type`` over ``read``, or ``None``.

    ``read`` is the record-by-record reader of the same type: the decoder's result equals
    ``read`` applied to each payload (null payloads null), or the decoder returns ``None``.
    """
    from pyspark.sql.pandas.types import to_arrow_type  # as decoding.py builds the column

    if not isinstance(spark_type, T.StructType) or not readable_in_bulk(spark_type):
        return None
    if not _pyarrow_is_strict():
        return None
    return _BulkDecoder(spark_type, to_arrow_type(spark_type, timezone="UTC"), read)


def unframed(
    decode: Callable[[pa.Array], pa.Array | None], check: Callable[[int], None]
) -> Callable[[pa.Array], pa.Array | None]:
    """Wrap a whole-column decoder for registry-framed payloads (magic byte, 4-byte id).

    Each writer schema id in the batch is checked once with ``check`` (which raises
    :class:`~kafka_rescalable.errors.PayloadDecodeError` for an id the registry does not
    have); a payload without the framing, or an unknown id, gives the batch up, to be decoded
    record by record, where the reason names the record and the id.
    """
    magic = pa.scalar(b"\x00", pa.binary())

    def decode_framed(payloads: pa.Array) -> pa.Array | None:
        framed = pc.and_(
            pc.greater_equal(pc.binary_length(payloads), 5),
            pc.equal(pc.binary_slice(payloads, 0, 1), magic),
        )
        if not pc.all(framed, min_count=0).as_py():
            return None
        for header in pc.unique(pc.binary_slice(payloads, 1, 5)).to_pylist():
            if header is None:
                continue
            try:
                check(int.from_bytes(header, "big"))
            except PayloadDecodeError:
                return None
        # An explicit end: pyarrow 26's binary_slice without one fails on some arrays.
        return decode(pc.binary_slice(payloads, 5, _LONGEST))

    return decode_framed


def readable_in_bulk(spark_type: T.DataType) -> bool:
    """Say whether pyarrow's reader may read ``spark_type`` (all of it), as listed above."""
    if isinstance(spark_type, T.StructType):
        names = spark_type.names
        return (
            bool(names) and len(set(names)) == len(names) and all(map(readable_in_bulk, spark_type))
        )
    if isinstance(spark_type, T.StructField):
        return readable_in_bulk(spark_type.dataType)
    if isinstance(spark_type, T.ArrayType):
        return readable_in_bulk(spark_type.elementType)
    return isinstance(
        spark_type,
        (*_SAME, T.FloatType, T.DoubleType, T.DecimalType, T.DateType)
        + (T.TimestampType, T.TimestampNTZType),
    )


def _parse_type(spark_type: T.DataType) -> pa.DataType:
    """Give the type pyarrow reads a JSON value as, before the checks and conversions."""
    if isinstance(spark_type, T.StructType):
        return pa.struct([pa.field(f.name, _parse_type(f.dataType)) for f in spark_type])
    if isinstance(spark_type, T.ArrayType):
        return pa.list_(_parse_type(spark_type.elementType))
    if isinstance(spark_type, T.DecimalType):
        return pa.decimal128(38, _read_scale(spark_type))
    if isinstance(spark_type, T.FloatType | T.DoubleType):
        return pa.float64()
    if isinstance(spark_type, T.DateType | T.TimestampType | T.TimestampNTZType):
        return pa.string()  # checked and converted here, not by pyarrow's own parser
    return {
        T.ByteType: pa.int8(),
        T.ShortType: pa.int16(),
        T.IntegerType: pa.int32(),
        T.LongType: pa.int64(),
        T.BooleanType: pa.bool_(),
        T.StringType: pa.string(),
    }[type(spark_type)]


def _read_scale(spark_type: T.DecimalType) -> int:
    room = 38 - (spark_type.precision - spark_type.scale)  # the integer digits must fit
    return max(spark_type.scale, min(room, _DECIMAL_SCALE))


class _GiveUp(KafkaSourceError):  # noqa: N818 - a signal inside the decoder, never raised out
    """A record does not decode: the batch is given up, to be decoded record by record."""


class _BulkDecoder:
    """One column's decoder, kept per Python worker with the decode plan."""

    def __init__(self, spark_type: T.StructType, target: pa.DataType, read: Any) -> None:
        self._type = spark_type
        self._target = target
        self._read = read
        schema = pa.schema(list(_parse_type(spark_type)))
        self._options = pa_json.ParseOptions(
            explicit_schema=schema, newlines_in_values=False, unexpected_field_behavior="ignore"
        )
        self._skip = 0
        self._backoff = 1
        self._splits = 0
        self._redone = 0

    def __call__(self, payloads: pa.Array) -> pa.Array | None:
        if self._skip:
            self._skip -= 1
            return None
        try:
            return self._decode(payloads)
        except _GiveUp:
            self._adapt(len(payloads), len(payloads))  # the batch is read again, all of it
            return None  # a record that does not decode: record by record, where it is named
        except pa.ArrowException:
            # Not UTF-8 (record by record names it), or a case pyarrow's compute functions
            # refuse: giving the batch up is always allowed, failing the query is not.
            return None

    def _decode(self, payloads: pa.Array) -> pa.Array:
        self._redone = 0
        text = pc.utf8_trim(payloads.cast(pa.string()), _WHITESPACE)
        one = pc.fill_null(pc.and_(pc.starts_with(text, "{"), pc.ends_with(text, "}")), False)
        if _has_line_breaks(text):
            one = pc.and_(one, pc.invert(pc.match_substring_regex(text, _LINE_BREAKS)))
        if pc.any(pc.greater_equal(pc.binary_length(text), 2 * _DEEPEST)).as_py():
            brackets = pc.add(pc.count_substring(text, "["), pc.count_substring(text, "{"))
            one = pc.and_(one, pc.less(brackets, _DEEPEST))
        others = pc.indices_nonzero(pc.and_(payloads.is_valid(), pc.invert(one)))
        other_values = self._one_by_one(payloads.take(others))  # first: they may fail
        candidates = pc.indices_nonzero(one)
        parsed, doubt = self._parse(text.filter(one))
        doubted = pc.filter(candidates, doubt)
        again = self._one_by_one(payloads.take(doubted))
        self._adapt(self._redone, len(payloads))
        if len(candidates) == len(payloads) and not len(doubted):
            return parsed
        nulls = pc.indices_nonzero(payloads.is_null())
        kept = pc.invert(doubt)
        rows = pa.concat_arrays([pc.filter(candidates, kept), others, doubted, nulls])
        values = [parsed.filter(kept), other_values, again, pa.nulls(len(nulls), self._target)]
        return pa.concat_arrays(values).take(pc.sort_indices(rows))

    def _one_by_one(self, payloads: pa.Array) -> pa.Array:
        """Read ``payloads`` record by record; raise :class:`_GiveUp` if one does not decode."""
        self._redone += len(payloads)
        try:
            values = [None if p is None else self._read(p) for p in payloads.to_pylist()]
            return pa.array(values, self._target)
        except (PayloadDecodeError, pa.ArrowException, TypeError, ValueError, OverflowError):
            raise _GiveUp from None

    def _adapt(self, redone: int, count: int) -> None:
        """Skip the bulk reader for a while after a batch where it read too few records."""
        if redone * 2 <= count:
            self._backoff = 1
            return
        self._skip = self._backoff
        self._backoff = min(self._backoff * 2, _MAX_SKIP)

    def _parse(self, text: pa.Array) -> tuple[pa.Array, pa.Array]:
        """Read ``text``'s payloads: the typed values, and which rows must be read again."""
        lines = pc.binary_join_element_wise(text, "", "\n")  # each payload, then a newline
        offsets = [0, *pc.cumulative_sum(pc.binary_length(lines)).to_pylist()]
        data = lines.buffers()[2] or pa.py_buffer(b"")
        parts: list[tuple[pa.Array, pa.Array]] = []
        self._splits = _SPLITS
        self._segment(text, data, offsets, 0, len(text), parts)
        if not parts:
            return pa.nulls(0, self._target), pa.array([], pa.bool_())
        values = pa.concat_arrays([values for values, _ in parts])
        return values, pa.concat_arrays([doubt for _, doubt in parts])

    def _segment(
        self,
        text: pa.Array,
        data: pa.Buffer,
        offsets: list[int],
        start: int,
        stop: int,
        parts: list[Any],
    ) -> None:
        """Read rows ``start`` to ``stop``; where pyarrow refuses them, halves, then one by one.

        Depth first, so that a record that does not decode ends the batch after as few reads
        as its place needs.
        """
        if start == stop:
            return
        rows = stop - start
        self._splits -= 1
        read = self._read_rows(data.slice(offsets[start], offsets[stop] - offsets[start]), rows)
        if read is not None:
            values, doubt = _finish(read, self._type, self._target)
            parts.append((values, pa.repeat(False, rows) if doubt is None else doubt))
        elif rows <= _SMALLEST_SPLIT or self._splits < 2:
            parts.append((self._one_by_one(text.slice(start, rows)), pa.repeat(False, rows)))
        else:
            middle = start + rows // 2
            self._segment(text, data, offsets, start, middle, parts)
            self._segment(text, data, offsets, middle, stop, parts)

    def _read_rows(self, data: pa.Buffer, rows: int) -> pa.StructArray | None:
        options = pa_json.ReadOptions(use_threads=False, block_size=max(data.size + 1, 1 << 16))
        try:
            table = pa_json.read_json(pa.BufferReader(data), options, self._options)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        if table.num_rows != rows:
            return None  # a payload held more than one JSON value
        return table.select(self._type.names).to_struct_array().combine_chunks()


def _has_line_breaks(text: pa.Array) -> bool:
    """Say whether any payload may hold a line break (or a NUL), in one scan of the bytes."""
    data = text.buffers()[2]
    raw = b"" if data is None else data.to_pybytes()
    return b"\n" in raw or b"\r" in raw or b"\x00" in raw


def _finish(array: pa.Array, spark_type: T.DataType, target: pa.DataType) -> tuple[Any, Any]:
    """Check and convert what pyarrow read: the values, and the rows in doubt (or ``None``)."""
    if isinstance(spark_type, T.StructType):
        finished = [
            _finish(array.field(index), field.dataType, target.field(index).type)
            for index, field in enumerate(spark_type)
        ]
        children = [child for child, _ in finished]
        out = pa.StructArray.from_arrays(children, fields=list(target), mask=array.is_null())
        doubts = [doubt for _, doubt in finished if doubt is not None]
        return out, functools.reduce(pc.or_, doubts) if doubts else None
    if isinstance(spark_type, T.ArrayType):
        offsets = array.offsets
        first, last = offsets[0].as_py(), offsets[-1].as_py()
        values = array.values.slice(first, last - first)  # what the offsets point to
        values, doubt = _finish(values, spark_type.elementType, target.value_type)
        offsets = pc.subtract(offsets, first)
        out = pa.ListArray.from_arrays(offsets, values, type=target, mask=array.is_null())
        return out, None if doubt is None else _parents(offsets, doubt)
    if isinstance(spark_type, T.FloatType | T.DoubleType):
        negative_zero = pc.and_(pc.equal(array, 0), pc.less(pc.divide(1.0, array), 0))
        odd = pc.or_(pc.or_(pc.is_nan(array), pc.is_inf(array)), negative_zero)
        out = array if isinstance(spark_type, T.DoubleType) else array.cast(pa.float32(), False)
        return out, pc.fill_null(odd, False)
    if isinstance(spark_type, T.DecimalType):
        if array.type.scale > spark_type.scale:
            array = pc.round(array, spark_type.scale, round_mode="half_towards_infinity")
        bound = pa.scalar(Decimal(10) ** (spark_type.precision - spark_type.scale), _WIDE)
        wide = pc.abs(array).cast(pa.decimal256(40, array.type.scale))
        doubt = pc.fill_null(pc.greater_equal(wide, bound), False)
        return pc.if_else(doubt, pa.scalar(None, array.type), array).cast(target), doubt
    if isinstance(spark_type, T.DateType):
        return to_date(array)
    if isinstance(spark_type, T.TimestampType):
        return to_timestamp(array, target)
    if isinstance(spark_type, T.TimestampNTZType):
        return to_local_timestamp(array, target)
    return array, None  # integers, booleans, strings: pyarrow's reading is the same


def _parents(offsets: pa.Array, doubt: pa.Array) -> pa.Array:
    """Find the lists holding an element in doubt (rare: worked out in Python)."""
    count = len(offsets) - 1
    if not pc.any(doubt).as_py():
        return pa.repeat(False, count)
    marks, bounds = doubt.to_pylist(), offsets.to_pylist()
    return pa.array([any(marks[bounds[i] : bounds[i + 1]]) for i in range(count)], pa.bool_())


@functools.cache
def _pyarrow_is_strict() -> bool:
    """Check that the installed pyarrow refuses what the record-by-record reader refuses.

    These are the differences the JSON readers of pyarrow (in some versions), arrow-rs and
    polars have been seen to make: a number read from a string, a fraction cut off to an
    integer or a decimal's scale, a number or boolean read as a string, a repeated key. And
    the version must be one the bulk reader's property tests ran on (26): an older reader
    may differ, or crash, in ways no probe shows.
    """
    if int(pa.__version__.split(".")[0]) < _OLDEST_PYARROW:
        return False
    probes = [
        ('{"a":"12"}', pa.int64()),
        ('{"a":1.5}', pa.int64()),
        ('{"a":1.0}', pa.int64()),
        ('{"a":12.345}', pa.decimal128(10, 2)),
        ('{"a":12}', pa.string()),
        ('{"a":true}', pa.string()),
        ('{"a":1}', pa.bool_()),
        ('{"a":"1.5"}', pa.float64()),
        ('{"a":true}', pa.float64()),
        ('{"a":128}', pa.int8()),
        ('{"a":1,"a":2}', pa.int64()),
        ('{"a":[1,"2"]}', pa.list_(pa.int64())),
        ('{"a":{"b":"1"}}', pa.struct([("b", pa.int64())])),
    ]
    for text, arrow_type in probes:
        options = pa_json.ParseOptions(explicit_schema=pa.schema([("a", arrow_type)]))
        try:
            pa_json.read_json(pa.BufferReader(text.encode() + b"\n"), parse_options=options)
        except pa.ArrowInvalid:
            continue
        return False
    return True
