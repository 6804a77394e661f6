"""The documentation site builds with no warning, and every code block of it is run by a test.

``mkdocs build --strict`` turns every warning into a failure: a broken link or anchor, a page
left out of the navigation, a snippet file or section that does not exist, an option of the
code without its sentence (docs/_hooks/options_table.py), a docstring griffe cannot read. The
build runs here, in the unit tests, so that CI (which runs the README's test command) builds
the site on every change.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import kafka_rescalable

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = DOCS / "snippets"
HOOKS = DOCS / "_hooks"


def test_the_site_builds_with_no_warning(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        # Material's notice about MkDocs 2.0 is printed, not logged; it is no warning of ours.
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-5000:]
    assert "WARNING" not in output, output[-5000:]
    assert (tmp_path / "reference" / "options" / "index.html").is_file()


def _hook(name: str) -> ModuleType:
    """Import a hook as mkdocs does: from its file, with its folder on the path."""
    sys.path.insert(0, str(HOOKS))
    try:
        spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", HOOKS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(HOOKS))


def test_every_option_has_its_sentence_and_its_kind() -> None:
    assert _hook("options_table").problems() == []


def test_the_generated_tables_show_the_codes_defaults_and_modes() -> None:
    hook = _hook("options_table")
    source = hook.table("source")
    assert "| `startingOffsets` | `earliest`, `latest` or JSON | `latest` (stream), " in source
    assert "| ✱ `parallelism` | integer ≥ 1 or `auto` |  | ✓ | ✓ |" in source
    assert re.search(r"\| `endingOffsets` \|[^|]*\| `latest` \|  \| ✓ \|", source)
    assert "| `topic` |" not in source
    sink = hook.table("sink")
    assert "| ✱ `deliveryGuarantee` | `at-least-once` or `exactly-once` | `at-least-once` |" in sink
    assert "| `mode` |" not in sink


def test_the_command_line_page_gets_each_commands_help() -> None:
    hook = _hook("cli_help")
    assert "--starting-offsets" in hook.help_text("kafka-rescalable-inspect")
    assert "--brokers" in hook.help_text("kafka-rescalable-local-kafka")


def _snippets_run_by_tests() -> set[str]:
    found: set[str] = set()
    for module in (ROOT / "integration_tests").glob("*.py"):
        text = module.read_text(encoding="utf-8")
        found |= set(re.findall(r'run_snippet\(\s*"([\w-]+\.py)"', text))
    return found


def test_every_snippet_file_is_run_by_an_integration_test() -> None:
    files = {path.name for path in SNIPPETS.glob("*.py")}
    run = _snippets_run_by_tests()
    assert files - run == set(), "docs/snippets files that no integration test runs"
    assert run - files == set(), "run_snippet names files that docs/snippets lacks"


def test_every_snippet_file_is_included_in_a_page() -> None:
    pages = "\n".join(path.read_text(encoding="utf-8") for path in DOCS.rglob("*.md"))
    included = set(re.findall(r'--8<-- "([^":]+\.py)(?::[\w-]+)?"', pages))
    assert {path.name for path in SNIPPETS.glob("*.py")} == included


def test_the_errors_page_covers_every_public_error() -> None:
    page = (DOCS / "reference" / "errors.md").read_text(encoding="utf-8")
    errors = [name for name in kafka_rescalable.__all__ if name.endswith("Error")]
    assert errors, "no error class in kafka_rescalable.__all__"
    missing = [name for name in errors if f"`{name}`" not in page]
    assert missing == []


def test_every_batch_write_of_the_docs_says_append() -> None:
    # Spark's default save mode, ErrorIfExists, is refused for a Python data source: a batch
    # write shown without .mode("append") fails as the reader copies it.
    for path in SNIPPETS.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        writes = len(re.findall(r"\.write\.format\(", text))
        assert len(re.findall(r'\.mode\("append"\)', text)) == writes, path.name
