"""mkdocs hook: each command's ``--help``, taken from the command itself when the site is built.

A page holding ``<!-- cli-help: kafka-rescalable-inspect -->`` gets, in its place, a code block
with what ``kafka-rescalable-inspect --help`` prints, so the page lists the options the
command really has. An unknown command name is a warning, which fails a strict build.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

from kafka_rescalable.deploy import main as pack_main
from kafka_rescalable.inspect import cli as inspect_cli
from kafka_rescalable.pyspark_zip import main as compile_pyspark_main
from kafka_rescalable.testing.local_kafka import main as local_kafka_main

log = logging.getLogger("mkdocs.hooks.cli_help")

MARKER = re.compile(r"<!-- cli-help: ([a-z-]+) -->")



def _inspect_help(command: str) -> str:
    # Its parser names itself ``python -m kafka_rescalable.inspect``; the page shows the script.
    parser = inspect_cli._parser()
    parser.prog = command
    return parser.format_help()


def _main_help(main: Callable[[Sequence[str]], Any]) -> Callable[[str], str]:
    def text(command: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(["--help"])
        return out.getvalue()

    return text


COMMANDS: dict[str, Callable[[str], str]] = {
    "kafka-rescalable-inspect": _inspect_help,
    "kafka-rescalable-local-kafka": _main_help(local_kafka_main),
    "kafka-rescalable-pack": _main_help(pack_main),
    "kafka-rescalable-compile-pyspark": _main_help(compile_pyspark_main),
}
"""The console scripts of pyproject.toml, by name, and how to get each one's help."""


def help_text(command: str) -> str:
    """Return what ``command --help`` prints, at a fixed width, as a Markdown code block."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        text = COMMANDS[command](command)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return f"```text\n{text.rstrip()}\n```"


def _block(match: re.Match[str]) -> str:
    command = match.group(1)
    if command not in COMMANDS:
        log.warning("cli-help: no command %r (known: %s)", command, ", ".join(COMMANDS))
        return match.group(0)
    return help_text(command)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each marker with its command's help."""
    return MARKER.sub(_block, markdown)
