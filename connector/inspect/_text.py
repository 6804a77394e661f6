"""Wording shared by the reading errors and the text view: counts, id ranges, quotes, times.

Kept apart so that :mod:`kafka_rescalable.inspect.reading` (whose error messages list batch ids) and
:mod:`kafka_rescalable.inspect.rendering` (which renders the JSON model) word things the same way
without the renderer depending on the reader.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Final

QUOTE_LIMIT: Final = 120
"""Characters of a foreign offset or an extra section shown in text."""


def id_ranges(ids: Iterable[int]) -> str:
    """``0..3, 5..6`` for the ids 0, 1, 2, 3, 5, 6; ``none`` for no id."""
    ranges: list[list[int]] = []
    for batch_id in sorted(ids):
        if ranges and ranges[-1][1] + 1 == batch_id:
            ranges[-1][1] = batch_id
        else:
            ranges.append([batch_id, batch_id])
    return ", ".join(f"{a}..{b}" if a != b else str(a) for a, b in ranges) or "none"


def count(number: int, singular: str, plural: str | None = None) -> str:
    """``1 slot``, ``2 slots``; ``plural`` for nouns that do not just take an ``s``."""
    return f"{number} {singular if number == 1 else (plural or singular + 's')}"


def quote(text: str) -> str:
    """Cut ``text`` to :data:`QUOTE_LIMIT` characters, marking the cut with ``...``."""
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + "..."


def iso_time(ms: int | None) -> str | None:
    """Write epoch milliseconds as UTC ISO 8601 (``...Z``), or ``<ms> ms`` out of range.

    A timestamp no calendar can hold is still shown, as the number the log holds, rather
    than failing the whole view over one metadata field.
    """
    if ms is None:
        return None
    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
