"""The text ``from_json`` gives a STRING field that holds another JSON value.

``from_json`` keeps an object, array, number or boolean found where a string was declared as
its JSON text, written again by Jackson on the JVM: compact (no spaces), strings escaped as
JSON requires and nothing more (non-ASCII kept), integers exactly as given, and fractional
numbers as Java's ``Double.toString`` prints them: ``1.5``, ``1000.0``, ``1.0E7``, ``1.0E-4``.
The infinities and NaN become the JSON strings ``"Infinity"``, ``"-Infinity"`` and ``"NaN"``.

Two things are not reproduced: an object's repeated keys (Jackson copies them all, Python's
parser keeps the last) and the rare doubles for which Java 17's ``Double.toString`` prints one
digit more than the shortest text that reads back the same (``2.82879384806159008E17``);
the digits here are the shortest, as Java 19 and later print them.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["NumberBeyondDecimal", "exact_number", "jackson_text", "java_double"]

_SMALLEST = 5e-324
_PLAIN_FROM, _PLAIN_TO = 1e-3, 1e7


def jackson_text(value: Any) -> str:
    """Write a parsed JSON value as ``from_json`` puts it in a STRING field."""
    kind = type(value)
    if kind is str:
        return json.dumps(value, ensure_ascii=False)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if kind is int:
        return str(value)
    if isinstance(value, float) or kind is Decimal:
        return java_double(float(value))
    if kind is list:
        return "[" + ",".join(map(jackson_text, value)) + "]"
    if kind is dict:
        items = (
            f"{json.dumps(key, ensure_ascii=False)}:{jackson_text(v)}" for key, v in value.items()
        )
        return "{" + ",".join(items) + "}"
    msg = f"not a JSON value: {kind.__name__}"
    raise TypeError(msg)


def java_double(number: float) -> str:
    """Print ``number`` as Java's ``Double.toString`` does (as Jackson writes a double)."""
    if math.isnan(number):
        return '"NaN"'
    if math.isinf(number):
        return '"Infinity"' if number > 0 else '"-Infinity"'
    if number == 0:
        return "-0.0" if math.copysign(1.0, number) < 0 else "0.0"
    magnitude = abs(number)
    if _PLAIN_FROM <= magnitude < _PLAIN_TO:
        return repr(number)  # Python prints this range plainly too, with at least '.0'
    if magnitude == _SMALLEST:
        return "-4.9E-324" if number < 0 else "4.9E-324"  # Java keeps its historic digits
    sign, digits, exponent = Decimal(repr(magnitude)).normalize().as_tuple()
    text = "".join(map(str, digits))
    power = len(text) - 1 + int(exponent)
    mantissa = f"{text[0]}.{text[1:] or '0'}"
    return f"{'-' if number < 0 else ''}{mantissa}E{power}"


class NumberBeyondDecimal(float):
    """A JSON number whose exponent no ``Decimal`` holds (``1e-99999999999999999999``).

    It is the double Jackson reads (0.0 or an infinity), so DOUBLE and STRING fields take it
    as ``from_json`` does, but its type is not ``float``: a DECIMAL field refuses it, as
    ``from_json`` nulls that field. ``text`` is the number as written, for the reason.
    """

    text: str

    def __new__(cls, text: str) -> NumberBeyondDecimal:
        """Read ``text`` as a double and keep it."""
        number = super().__new__(cls, text)
        number.text = text
        return number


def exact_number(text: str) -> Decimal | float:
    """Read a fractional JSON number exactly (a ``json`` ``parse_float`` hook).

    Python's ``Decimal`` refuses exponents beyond about 10^18; such a number anywhere in a
    record, even in a field nobody reads, must not fail the record.
    """
    try:
        return Decimal(text)
    except InvalidOperation:
        return NumberBeyondDecimal(text)
