"""The layout stays readable: small modules, few siblings each, the roles apart.

In ``connector/``, where modules do I/O, a module imports at most five modules of its own
package (a package's ``__init__`` re-exports, and is not counted). ``state/`` is pure and its
planner composes its other modules by design.

A module that must be longer than the limit says why in its docstring (the words "is long
because"), so the exception is a decision someone wrote down, not drift.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("connector", "state")
MAX_LINES = 400
MAX_SIBLINGS = 5


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


# The installed name of each repository folder (pyproject.toml's package-dir).
INSTALLED = {"connector": ("kafka_rescalable",), "state": ("kafka_rescalable", "state")}


def _dotted(path: Path) -> str:
    folder, *rest = path.relative_to(ROOT).with_suffix("").parts
    parts = (*INSTALLED[folder], *rest)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Modules ``path`` imports; ``from package import name`` counts as ``package.name``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _siblings(path: Path) -> set[str]:
    """Return the other modules of the same package that ``path`` imports."""
    package = _dotted(path.parent / "__init__.py")
    own = _dotted(path)
    names = {p.stem for p in path.parent.glob("*.py") if p.stem != "__init__"}
    return {
        name
        for name in _imports(path)
        if name.rsplit(".", 1)[0] == package and name.rsplit(".", 1)[1] in names and name != own
    }


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_is_short_or_says_why(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert lines <= MAX_LINES or "is long because" in docstring, (
        f"{path.relative_to(ROOT)} has {lines} lines; split it by job, or say in its "
        "docstring why it is long"
    )


@pytest.mark.parametrize(
    "path",
    [p for p in _modules() if p.parts[len(ROOT.parts)] == "connector" and p.stem != "__init__"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_a_connector_module_imports_few_siblings(path: Path) -> None:
    siblings = _siblings(path)
    assert len(siblings) <= MAX_SIBLINGS, (
        f"{path.relative_to(ROOT)} imports {len(siblings)} modules of its package: "
        f"{sorted(siblings)}"
    )


def test_the_sibling_count_sees_from_imports(tmp_path: Path) -> None:
    package = ROOT / "connector" / "driver"
    assert "kafka_rescalable.driver.slots" in _siblings(package / "stream_reader.py")
    assert "kafka_rescalable.driver.stream_reader" not in _siblings(package / "stream_reader.py")


def test_state_never_imports_the_connector() -> None:
    for path in (ROOT / "state").rglob("*.py"):
        outside = {
            m
            for m in _imports(path)
            if m.startswith("kafka_rescalable") and not m.startswith("kafka_rescalable.state")
        }
        assert not outside, path


def _connector_imports(path: Path) -> set[str]:
    """Modules of ``connector/`` that ``path`` imports, anywhere in it (a function body too)."""
    return {
        m
        for m in _imports(path)
        if (m == "kafka_rescalable" or m.startswith("kafka_rescalable."))
        and not m.startswith("kafka_rescalable.state")
    }


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "connector" / "driver").rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_the_driver_never_imports_the_executor(path: Path) -> None:
    # What crosses to the executors (an input partition, its read settings) lives in
    # kafka_rescalable.task, which both sides import; the readers get the executor's task-reading
    # function from kafka_rescalable.source.
    executor = {
        m for m in _connector_imports(path) if m.split(".")[:2] == ["kafka_rescalable", "executor"]
    }
    assert not executor, f"{path.relative_to(ROOT)} imports {sorted(executor)}"


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "connector" / "task").rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_the_task_package_imports_neither_side(path: Path) -> None:
    sides = {
        m
        for m in _connector_imports(path)
        if m.split(".")[:2] in (["kafka_rescalable", "executor"], ["kafka_rescalable", "driver"])
    }
    assert not sides, f"{path.relative_to(ROOT)} imports {sorted(sides)}"


def test_the_driver_check_sees_an_executor_import(tmp_path: Path) -> None:
    module = tmp_path / "planner.py"
    module.write_text(
        "def plan():\n    from kafka_rescalable.executor.tasks import read_input_partition\n",
        encoding="utf-8",
    )
    assert "kafka_rescalable.executor.tasks" in _connector_imports(module)


_WHO_IMPORTS_WHOM = re.compile(
    r"\b(driver|executors?)\b[^.;]{0,40}\bimports?\b|\bimports? this module"
)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_is_placed_late_to_dodge_the_other_side(path: Path) -> None:
    # An import inside a function whose comment says who imports this module is a layering
    # problem hidden by the import's position; fix the layering instead.
    lines = path.read_text(encoding="utf-8").splitlines()
    for node in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if not isinstance(inner, (ast.Import, ast.ImportFrom)):
                continue
            # the import's own line and the comment lines just above it
            nearby = [lines[inner.lineno - 1]]
            above = inner.lineno - 2
            while above >= 0 and lines[above].strip().startswith("#"):
                nearby.insert(0, lines[above])
                above -= 1
            text = " ".join(line.replace("#", " ") for line in nearby).lower()
            assert not _WHO_IMPORTS_WHOM.search(" ".join(text.split())), (
                f"{path.relative_to(ROOT)}:{inner.lineno}: {lines[inner.lineno - 1].strip()}"
            )
