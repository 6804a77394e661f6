"""Date and timestamp text read as Spark's ``from_json`` reads it, without a JVM.

``from_json`` (with no ``dateFormat`` / ``timestampFormat``) tries its default pattern and then
falls back to Spark's own lenient grammar, which takes every text the pattern takes and more:
``2024-1-2``, ``2024-01``, ``2024``, a time of day cut short (``2024-01-02T03:04``), a space
instead of ``T``, up to nine fractional digits (truncated to microseconds), and a zone written
``Z``, ``+05:30``, ``+0530``, ``+5``, ``UTC+1``, ``PST`` or ``Europe/Paris``. A date takes the
same date part and ignores anything after a space or a ``T``. This module follows that grammar
(Spark's ``stringToDate`` / ``stringToTimestamp``), and refuses what a Python worker cannot
hold or what would not give the same value twice:

- years outside 1 to 9999 (Python's ``date`` range), which pyspark cannot collect either;
- a time with no date (``03:04:05``), which Spark reads as a time of today;
- a zone that is not in the time zone database of the worker (``tzdata``).

Texts are refused by returning ``None``: the caller says which field and why.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["parse_date", "parse_local_timestamp", "parse_timestamp"]

_SHORT_IDS = {  # java.time.ZoneId.SHORT_IDS, which Spark passes to ZoneId.of
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo",
    "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare",
    "CNT": "America/St_Johns",
    "CST": "America/Chicago",
    "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia",
    "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00",
    "MST": "-07:00",
    "HST": "-10:00",
}
_ONE_DIGIT_HOUR = re.compile(r"([+-])([0-9]):")
_ONE_DIGIT_MINUTE = re.compile(r"([+-])([0-9][0-9]):([0-9])$")
_REGION = re.compile(r"[A-Za-z][A-Za-z0-9~/._+-]+")
_MAX_OFFSET = 18 * 3600
_TRIMMED = "".join(map(chr, range(0x21))) + "\x7f"
_CANONICAL_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_CANONICAL = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?"
)
"""The common ISO forms, read at once; the grammar below reads them the same way, slower."""


def _trim(text: str) -> str:
    """Strip what Spark strips: whitespace and ASCII control characters at both ends."""
    return text.strip(_TRIMMED)


def parse_date(text: str) -> date | None:
    """Read a DATE as ``from_json`` does; ``None`` when it does not, or beyond years 1-9999.

    Spark also reads a bare integer text that is not a year (``"123"``) as days since the
    epoch, for Spark 1.5's files; that is refused here.
    """
    if _CANONICAL_DATE.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return None
    s = _trim(text.replace("GMT", ""))
    if not s:
        return None
    start = 1 if s[0] in "+-" else 0
    negative = s[0] == "-"
    segments = [1, 1, 1]
    index = value = digits = 0
    at = start
    while at < len(s) and s[at] not in " T":
        char = s[at]
        if char == "-" and index < 2:
            if not _date_digits(index, digits):
                return None
            segments[index], value, digits, index = value, 0, 0, index + 1
        elif "0" <= char <= "9":
            value, digits = value * 10 + ord(char) - 48, digits + 1
        else:
            return None
        at += 1
    if not _date_digits(index, digits) or (index < 2 and at < len(s)):
        return None
    segments[index] = value
    if negative:
        return None  # a year before 1
    return _date(*segments)


def _date_digits(segment: int, digits: int) -> bool:
    return 4 <= digits <= 7 if segment == 0 else 1 <= digits <= 2


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def parse_timestamp(text: str) -> datetime | None:
    """Read a TIMESTAMP as ``from_json`` does, a time without a zone as UTC (aware result)."""
    canonical = _CANONICAL.fullmatch(text)
    if canonical is not None:
        parsed = _canonical(text, canonical.group(1))
        return parsed if parsed is None or parsed.tzinfo else parsed.replace(tzinfo=UTC)
    parts = _timestamp_parts(_trim(text.replace("GMT", "")))
    if parts is None:
        return None
    fields, zone_text = parts
    zone = UTC if zone_text is None else zone_of(zone_text)
    local = _local(fields)
    if zone is None or local is None:
        return None
    return local.replace(tzinfo=zone)


def parse_local_timestamp(text: str) -> datetime | None:
    """Read a TIMESTAMP_NTZ as ``from_json`` does: no zone at all."""
    canonical = _CANONICAL.fullmatch(text)
    if canonical is not None and canonical.group(1) is None:
        return _canonical(text, None)
    parts = _timestamp_parts(_trim(text))
    if parts is None or parts[1] is not None:
        return None
    return _local(parts[0])


def _canonical(text: str, zone: str | None) -> datetime | None:
    """Read a text :data:`_CANONICAL` matched: Python's ISO parser agrees with Spark on those.

    Both cut the fraction to microseconds; only the offset's range is Java's own (18 hours).
    """
    if zone is not None and zone != "Z":
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if minutes > 59 or hours * 3600 + minutes * 60 > _MAX_OFFSET:
            return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _local(fields: list[int]) -> datetime | None:
    try:
        return datetime(*fields)
    except ValueError:
        return None


def _timestamp_parts(s: str) -> tuple[list[int], str | None] | None:
    """Split ``[+-]yyyy-[m]m-[d]d[( |T)[h]h:[m]m:[s]s[.f...][zone]]`` (and its shorter forms).

    Returns the year to microsecond fields and the zone's text (or ``None``); ``None`` when it
    does not parse, and for a time with no date (``T03:04:05``, ``03:04:05``), which Spark
    reads as a time of the day the query runs.
    """
    if not s or s[0] == "T":
        return None
    fields = [1, 1, 1, 0, 0, 0, 0]
    index = value = digits = fraction_digits = 0
    sign = {"-": -1, "+": 1}.get(s[0])
    at = 0 if sign is None else 1
    zone = None
    while at < len(s):
        char = s[at]
        at += 1
        if "0" <= char <= "9":
            if index == 6:
                fraction_digits += 1
            if index != 6 or digits < 6:  # digits past microseconds are cut off
                value = value * 10 + ord(char) - 48
            digits += 1
            continue
        if not _timestamp_digits(index, digits):
            return None
        fields[index], value, digits = value, 0, 0
        if (index < 2 and char == "-") or (index == 2 and char in " T"):
            index += 1
        elif (index in (3, 4) and char == ":") or (index == 5 and char == "."):
            index += 1
        elif index in (5, 6):
            zone, index = s[at - 1 :], 7
            break
        else:
            return None  # also a leading 'hh:' (a time alone)
    if index < 7:
        if not _timestamp_digits(index, digits):
            return None
        fields[index] = value
    fields[6] *= 10 ** max(0, 6 - fraction_digits)
    if sign is not None:
        fields[0] *= sign
    return fields, zone


def _timestamp_digits(segment: int, digits: int) -> bool:
    if segment == 6:
        return True
    if segment == 0:
        return 4 <= digits <= 6
    return 1 <= digits <= 2


@cache
def zone_of(text: str) -> tzinfo | None:
    """Make the zone Spark's ``getZoneId`` makes of ``text``; ``None`` where it fails.

    Java's ``ZoneId.of`` with the short ids: ``Z``, offsets (``+5``, ``+05``, ``+05:30``,
    ``+0530``, ``+05:30:15``, up to 18 hours), ``UTC`` / ``GMT`` / ``UT`` with or without an
    offset, and region ids from the time zone database.
    """
    name = _ONE_DIGIT_HOUR.sub(r"\g<1>0\2:", text.strip(), count=1)
    name = _ONE_DIGIT_MINUTE.sub(r"\1\2:0\3", name, count=1)
    name = _SHORT_IDS.get(name, name)
    if name == "Z" or name[:1] in ("+", "-"):
        return _offset(name) if name != "Z" else UTC
    for prefix in ("UTC", "GMT", "UT"):
        if name == prefix:
            return UTC
        if name.startswith(prefix) and name[len(prefix)] in "+-":
            return _offset(name[len(prefix) :])
    if not _REGION.fullmatch(name):
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def _offset(text: str) -> tzinfo | None:
    """``java.time.ZoneOffset.of``: ``±h``, ``±hh``, ``±hhmm``, ``±hh:mm`` and with seconds."""
    body = text[1:]
    if len(body) in (5, 8):  # hh:mm, hh:mm:ss
        if body[2::3] != ":" * (len(body) // 3):
            return None
        body = body.replace(":", "")
    elif len(body) not in (1, 2, 4, 6):
        return None
    if not (body.isascii() and body.isdigit()):
        return None
    hours, minutes, seconds = int(body[:2]), int(body[2:4] or 0), int(body[4:] or 0)
    total = hours * 3600 + minutes * 60 + seconds
    if minutes > 59 or seconds > 59 or total > _MAX_OFFSET:
        return None
    sign = -1 if text[0] == "-" else 1
    return UTC if total == 0 else timezone(timedelta(seconds=sign * total))
