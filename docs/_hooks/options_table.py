"""mkdocs hook: the option reference, generated from the option table when the site is built.

A page holding ``<!-- options: source -->`` or ``<!-- options: sink -->`` gets, in its place,
one row per option of that side of :data:`kafka_rescalable.config.table.TABLE`: the name, the
kind of value (from the option's parser), the default, the read modes that take it, and what it
does (``option_meanings.py``). Nothing about an option is copied by hand but that sentence, so
the page cannot drift from the code; an option, a parser or a sentence the other side does not
know is a warning, which fails ``mkdocs build --strict`` (tests/test_docs_site.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

import option_meanings

from kafka_rescalable.config import parsers, token_provider
from kafka_rescalable.config.table import Option, side_options

log = logging.getLogger("mkdocs.hooks.options_table")

MARKER = re.compile(r"<!-- options: (source|sink) -->")

KINDS: dict[Any, str] = {
    parsers.parse_topics: "comma-separated topics",
    parsers.parse_pattern: "regular expression",
    parsers.parse_assign: "JSON",
    parsers.parse_epoch_millis: "ms since the epoch",
    parsers.parse_timestamps: "JSON",
    parsers.parse_offsets: "`earliest`, `latest` or JSON",
    parsers.parse_boolean: "`true` or `false`",
    parsers.parse_parallelism: "integer ≥ 1 or `auto`",
    parsers.parse_optional_text: "text",
    parsers.parse_positive_int: "integer ≥ 1",
    parsers.parse_non_negative_int: "integer ≥ 0",
    parsers.parse_duration: "duration",
    parsers.parse_positive_duration: "duration > 0",
    parsers.parse_byte_size: "size > 0 (`1048576`, `64m`)",
    parsers.parse_delivery_guarantee: "`at-least-once` or `exactly-once`",
    token_provider.parse_token_provider: "`module:function`",
}
"""The kind of value each parser reads, in words; a parser missing here is a build warning."""

MEANINGS: Mapping[str, Mapping[str, str]] = {
    "source": option_meanings.SOURCE,
    "sink": option_meanings.SINK,
}


def kind_of(option: Option) -> str | None:
    """Say what kind of value ``option`` takes, or ``None`` for a parser this page cannot name."""
    parse = option.parse
    if isinstance(parse, parsers.Choice):
        return re.sub(r"'([^']*)'", r"`\1`", parse.hint)
    if isinstance(parse, parsers.NonBlank):
        return "non-empty text"
    return KINDS.get(parse)


def default_of(option: Option) -> str:
    """Give the default as the page shows it: per read mode where the modes differ."""
    if isinstance(option.default, Mapping):
        per_mode = sorted(option.default.items(), reverse=True)  # stream first, then batch
        return ", ".join(f"`{value}` ({mode})" for mode, value in per_mode)
    return "" if option.default is None else f"`{option.default}`"


def problems() -> list[str]:
    """Everything the generated page could not say: options, parsers or sentences unmatched."""
    found = []
    for side, meanings in MEANINGS.items():
        names = {option.name for option in side_options(side)}  # type: ignore[arg-type]
        for name in sorted(names - set(meanings)):
            found.append(f"{side} option {name!r} has no sentence in option_meanings.py")
        for name in sorted(set(meanings) - names):
            found.append(f"option_meanings.py describes {name!r}, which is no {side} option")
        for option in side_options(side):  # type: ignore[arg-type]
            if kind_of(option) is None:
                found.append(f"option {option.name!r}: docs/_hooks/options_table.py KINDS lacks "
                             f"its parser {option.parse!r}")
    every = {option.name for option in side_options("source") + side_options("sink")}
    for name in sorted(option_meanings.OURS - every):
        found.append(f"option_meanings.OURS names {name!r}, which is no option")
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(side: str) -> str:
    """Give the Markdown table of ``side``'s options, in the table's order."""
    meanings = MEANINGS[side]
    if side == "source":
        lines = ["| option | value | default | stream | batch | what it does |",
                 "|---|---|---|:-:|:-:|---|"]
    else:
        lines = ["| option | value | default | what it does |", "|---|---|---|---|"]
    for option in side_options(side):  # type: ignore[arg-type]
        meaning = meanings.get(option.name, "")
        if option.overridden_by:
            winners = ", ".join(f"`{name}`" for name in option.overridden_by)
            meaning += f" Not read when {winners} is given."
        mark = "✱ " if option.name in option_meanings.OURS else ""
        cells = [f"{mark}`{option.name}`", kind_of(option) or "", default_of(option)]
        if side == "source":
            cells += ["✓" if mode in option.modes else "" for mode in ("stream", "batch")]
        cells.append(meaning)
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each marker with its side's table; warn about whatever does not match."""
    if not MARKER.search(markdown):
        return markdown
    for problem in problems():
        log.warning("options reference: %s", problem)
    return MARKER.sub(lambda match: table(match.group(1)), markdown)
