"""Dates and timestamps of a whole column, computed from canonical ISO text with pyarrow.compute.

The bulk JSON reader (:mod:`~kafka_rescalable.formats.json_bulk`) reads date and timestamp
fields as strings and converts them here, only in the canonical forms where Spark's lenient
grammar (:mod:`~kafka_rescalable.formats.json_times`) certainly reads the same thing:
``yyyy-mm-dd`` for a DATE, and ``yyyy-mm-dd(T| )hh:mm:ss[.f{1,9}][Z|(+|-)hh:mm]`` for a
TIMESTAMP (no zone for TIMESTAMP_NTZ; a TIMESTAMP without a zone is UTC). The calendar is
computed here, not by pyarrow's own parser, so that what counts as valid (month lengths, leap
years, hour 23 at most, offsets up to 18:00, years 1 to 9999) is written down once and tested.
Any other text, or a value out of range, is a doubt: that row is read record by record.

Each function returns ``(values, doubt)``, ``doubt`` a boolean array (no nulls) or ``None``.
"""

from __future__ import annotations

from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["to_date", "to_local_timestamp", "to_timestamp"]

_DATE: Final = r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})"
_TIME: Final = r"[T ](?P<h>[0-9]{2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]{1,9}))?"
_ZONE: Final = r"(?P<z>Z|(?P<zs>[+-])(?P<zh>[0-9]{2}):(?P<zm>[0-9]{2}))?"
_YEAR: Final = r"(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
_COMMON_DATE: Final = rf"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}"
_COMMON_TIME: Final = r"[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?"
_COMMON_ZONE: Final = r"(?:Z|[+-](?:(?:0[0-9]|1[0-7]):[0-5][0-9]|18:00))"
"""The forms most texts take: pyarrow's own parser reads them (and checks the calendar) as
Spark does, faster than the arithmetic below; when it refuses one, the arithmetic decides."""
_DAYS_IN_MONTH = pa.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], pa.int64())
_MICROS_PER_DAY: Final = 86_400_000_000
_MAX_OFFSET_MINUTES: Final = 18 * 60


def to_date(text: pa.Array) -> tuple[pa.Array, Any]:
    """Convert ``yyyy-mm-dd`` text to DATE values."""
    quick = _quick(text, f"{_COMMON_DATE}$", pa.date32())
    if quick is not None:
        return quick, None
    parts = pc.extract_regex(text, f"^{_DATE}$")
    days, valid = _days(parts)
    return _finish(days.cast(pa.int32()), valid, text, pa.date32())


def to_timestamp(text: pa.Array, target: pa.DataType) -> tuple[pa.Array, Any]:
    """Convert canonical ISO text, with a zone or in UTC, to TIMESTAMP values."""
    quick = _quick(text, f"{_COMMON_DATE}{_COMMON_TIME}{_COMMON_ZONE}$", target)
    if quick is None:
        quick = _quick(text, f"{_COMMON_DATE}{_COMMON_TIME}$", pa.timestamp("us"))
    if quick is not None:
        return quick.cast(target), None
    parts = pc.extract_regex(text, f"^{_DATE}{_TIME}{_ZONE}$")
    micros, valid = _micros(parts)
    hours, minutes = _number(parts, "zh"), _number(parts, "zm")
    offset = pc.add(pc.multiply(hours, 60), minutes)
    valid = _all(valid, pc.less_equal(minutes, 59), pc.less_equal(offset, _MAX_OFFSET_MINUTES))
    west = pc.equal(pc.struct_field(parts, "zs"), "-")
    offset = pc.if_else(west, pc.negate(offset), offset)
    micros = pc.subtract(micros, pc.multiply(offset, 60_000_000))
    return _finish(micros, valid, text, target)


def to_local_timestamp(text: pa.Array, target: pa.DataType) -> tuple[pa.Array, Any]:
    """Convert canonical ISO text without a zone to TIMESTAMP_NTZ values."""
    quick = _quick(text, f"{_COMMON_DATE}{_COMMON_TIME}$", target)
    if quick is not None:
        return quick, None
    micros, valid = _micros(pc.extract_regex(text, f"^{_DATE}{_TIME}$"))
    return _finish(micros, valid, text, target)


def _quick(text: pa.Array, pattern: str, arrow_type: pa.DataType) -> pa.Array | None:
    """Cast ``text`` with pyarrow's parser when every text has the common form, else ``None``."""
    if not pc.all(pc.match_substring_regex(text, pattern), min_count=0).as_py():
        return None
    try:
        return text.cast(arrow_type)
    except pa.ArrowInvalid:
        return None  # a date that does not exist: the arithmetic finds which


def _micros(parts: pa.Array) -> tuple[pa.Array, pa.Array]:
    days, valid = _days(parts)
    hours, minutes, seconds = (_number(parts, name) for name in ("h", "mi", "s"))
    fraction = pc.utf8_slice_codeunits(pc.utf8_rpad(pc.struct_field(parts, "f"), 6, "0"), 0, 6)
    in_day = pc.add(pc.multiply(hours, 60), minutes)
    in_day = pc.add(pc.multiply(in_day, 60), seconds)
    micros = pc.add(pc.multiply(in_day, 1_000_000), fraction.cast(pa.int64()))
    valid = _all(
        valid,
        pc.less_equal(hours, 23),
        pc.less_equal(minutes, 59),
        pc.less_equal(seconds, 59),
    )
    return pc.add(pc.multiply(days, _MICROS_PER_DAY), micros), valid


def _days(parts: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Days since 1970-01-01 of the proleptic Gregorian ``y``, ``m``, ``d``, and validity."""
    year, month, day = (_number(parts, name) for name in ("y", "m", "d"))
    good_month = pc.and_(pc.greater_equal(month, 1), pc.less_equal(month, 12))
    month = pc.if_else(good_month, month, 1)
    leap = pc.and_(_divides(4, year), pc.or_(pc.invert(_divides(100, year)), _divides(400, year)))
    longest = pc.add(_DAYS_IN_MONTH.take(month), pc.and_(leap, pc.equal(month, 2)).cast(pa.int64()))
    valid = _all(
        good_month,
        pc.greater_equal(year, 1),
        pc.greater_equal(day, 1),
        pc.less_equal(day, longest),
    )
    # Days from the civil date, counting years from March so that February comes last.
    march_year = pc.subtract(year, pc.less_equal(month, 2).cast(pa.int64()))
    era = pc.divide(march_year, 400)
    year_of_era = pc.subtract(march_year, pc.multiply(era, 400))
    from_march = pc.if_else(pc.greater(month, 2), pc.subtract(month, 3), pc.add(month, 9))
    day_of_year = pc.add(pc.divide(pc.add(pc.multiply(from_march, 153), 2), 5), pc.subtract(day, 1))
    day_of_era = pc.add(
        pc.subtract(
            pc.add(pc.multiply(year_of_era, 365), pc.divide(year_of_era, 4)),
            pc.divide(year_of_era, 100),
        ),
        day_of_year,
    )
    days = pc.subtract(pc.add(pc.multiply(era, 146_097), day_of_era), 719_468)
    return days, valid


def _number(parts: pa.Array, name: str) -> pa.Array:
    """One group as an integer; an absent group (empty text) and a row that did not match are 0."""
    text = pc.fill_null(pc.struct_field(parts, name), "")
    return pc.if_else(pc.equal(text, ""), "0", text).cast(pa.int64())


def _divides(divisor: int, number: pa.Array) -> pa.Array:
    return pc.equal(pc.subtract(number, pc.multiply(pc.divide(number, divisor), divisor)), 0)


def _all(*conditions: pa.Array) -> pa.Array:
    found = conditions[0]
    for condition in conditions[1:]:
        found = pc.and_(found, condition)
    return found


def _finish(numbers: pa.Array, valid: pa.Array, text: pa.Array, target: pa.DataType) -> Any:
    """Values where the text matched and was valid; null text stays null; the rest in doubt."""
    good = pc.and_(pc.fill_null(valid, False), pc.is_valid(numbers))
    doubt = pc.and_(text.is_valid(), pc.invert(good))
    values = pc.if_else(good, numbers, pa.scalar(None, numbers.type)).cast(target)
    return values, doubt
