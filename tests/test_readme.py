"""The README is a front page: short, with the two commands CI and users run, verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

MAIN_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q --config-settings editable_mode=strict "
    "-e . && .venv/bin/python examples/etl_pipeline.py"
)
TEST_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q --config-settings editable_mode=strict "
    "-e '.[test]' ./native && .venv/bin/python -m pytest"
)


def _lines() -> list[str]:
    return README.read_text(encoding="utf-8").splitlines()


def test_the_readme_is_at_most_200_lines() -> None:
    assert len(_lines()) <= 200


def test_the_readme_holds_both_commands_verbatim_on_a_line_of_their_own() -> None:
    lines = _lines()
    assert MAIN_COMMAND in lines
    assert TEST_COMMAND in lines


def _section(path: Path, name: str) -> str:
    text = path.read_text(encoding="utf-8")
    match = re.search(
        rf"# --8<-- \[start:{name}\]\n(.*?)# --8<-- \[end:{name}\]\n", text, re.DOTALL
    )
    assert match is not None, f"{path.name} has no section {name!r}"
    return match.group(1)


def test_the_readme_quickstart_is_the_tested_snippet() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    quickstart = ROOT / "docs" / "snippets" / "quickstart.py"
    assert blocks == [_section(quickstart, "setup") + "\n" + _section(quickstart, "stream")]


def test_the_readme_links_to_files_that_exist() -> None:
    targets = re.findall(r"\]\(([^)#]+)\)", README.read_text(encoding="utf-8"))
    local = [target for target in targets if "://" not in target]
    assert local, "no local link found"
    assert [target for target in local if not (ROOT / target).exists()] == []


def test_the_readme_names_every_example() -> None:
    text = README.read_text(encoding="utf-8")
    examples = sorted(path.name for path in (ROOT / "examples").glob("*.py"))
    assert [name for name in examples if f"examples/{name}" not in text] == []
