"""Spark's date and time grammar, and the shortcut taken for the common ISO forms.

The common forms (``2024-01-02``, ``2024-01-02T03:04:05.123+05:30``) are read with Python's
ISO parser; everything else walks Spark's grammar. A leading space makes any text take the
grammar (Spark trims it), so both roads are compared on the same texts. The grammar itself is
checked against Spark's ``from_json`` in test_json_values.py and the integration tests.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rescalable.formats.json_times import (
    parse_date,
    parse_local_timestamp,
    parse_timestamp,
    zone_of,
)

DIGITS = st.text("0123456789", min_size=1, max_size=2)


def _part(low: int, high: int) -> st.SearchStrategy[str]:
    """Mostly a valid field, sometimes any one or two digits."""
    return st.one_of(st.integers(low, high).map(str), DIGITS).map(lambda text: text.zfill(2))


@st.composite
def iso_like(draw: st.DrawFn) -> str:
    """Texts near the common forms, valid or not: odd digits, fractions, zones."""
    year = draw(st.sampled_from(["0000", "0001", "1970", "2024", "9999", "2023"]))
    text = f"{year}-{draw(_part(1, 12))}-{draw(_part(1, 31))}"
    if draw(st.booleans()):
        hour, minute, second = draw(_part(0, 23)), draw(_part(0, 59)), draw(_part(0, 59))
        text += draw(st.sampled_from("T ")) + f"{hour}:{minute}:{second}"
        fraction = draw(st.text("0123456789", max_size=10))
        text += f".{fraction}" if fraction else ""
        text += draw(st.sampled_from(["", "Z", "+05:30", "-18:00", "+18:01", "+17:60", "-00:00"]))
    return text


@settings(max_examples=300, deadline=None)
@given(iso_like())
def test_the_common_forms_read_as_spark_s_grammar_reads_them(text: str) -> None:
    assert parse_timestamp(text) == parse_timestamp(f" {text}")
    assert parse_local_timestamp(text) == parse_local_timestamp(f" {text}")
    assert parse_date(text) == parse_date(f" {text}")


def test_zones_as_java_reads_them() -> None:
    assert zone_of("Z") is UTC
    assert zone_of("+5") == timezone(timedelta(hours=5))
    assert zone_of("+05:30:15") == timezone(timedelta(hours=5, minutes=30, seconds=15))
    assert zone_of("-0530") == timezone(-timedelta(hours=5, minutes=30))
    assert zone_of("UT-5") == timezone(timedelta(hours=-5))
    assert zone_of("EST") == timezone(timedelta(hours=-5))
    for refused in ("+19", "+05:60", "z", "UTCx", "Mars/Olympus", "+5:3:2", ""):
        assert zone_of(refused) is None, refused


def test_a_zone_in_summer_time_is_the_region_s() -> None:
    summer = parse_timestamp("2024-07-01T12:00:00 Europe/Paris")
    assert summer is not None
    assert summer.astimezone(UTC) == datetime(2024, 7, 1, 10, tzinfo=UTC)
    assert parse_date("2024-07-01 Europe/Paris") == date(2024, 7, 1)
