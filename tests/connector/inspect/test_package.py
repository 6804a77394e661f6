"""The inspector's package: small modules, few dependencies, the same entry points."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import kafka_rescalable.inspect

PACKAGE = Path(kafka_rescalable.inspect.__file__).parent
MAX_LINES = 400
MAX_CONNECTOR_IMPORTS = 5


def imported_modules(path: Path) -> set[str]:
    """Return every module ``path`` imports (``from a import b`` counts ``a``)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add(node.module or "")
    return modules


def connector_imports(path: Path) -> set[str]:
    """Return the ``kafka_rescalable.*`` modules ``path`` imports, ``state`` aside."""
    return {
        m
        for m in imported_modules(path)
        if m.startswith("kafka_rescalable") and not m.startswith("kafka_rescalable.state")
    }


def test_inspect_is_pure_no_spark_or_kafka_imports() -> None:
    allowed = set(sys.stdlib_module_names)
    for path in sorted(PACKAGE.glob("*.py")):
        outside = {
            m
            for m in imported_modules(path)
            if m.split(".")[0] not in allowed
            and not m.startswith(("kafka_rescalable.inspect.", "kafka_rescalable.state"))
        }
        assert not outside, f"connector/inspect/{path.name} imports {outside}"


def test_every_module_is_small_and_imports_few_others() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert {p.stem for p in modules} >= {"__init__", "__main__", "reading", "diffing", "model"}
    for path in modules:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= MAX_LINES, f"{path.name}: {lines} lines"
        imported = connector_imports(path)
        assert len(imported) <= MAX_CONNECTOR_IMPORTS, f"{path.name} imports {sorted(imported)}"


def test_the_modules_depend_one_way() -> None:
    layers = ["reading", "diffing", "model", "rendering", "cli"]
    for index, name in enumerate(layers):
        later = {f"kafka_rescalable.inspect.{layer}" for layer in layers[index + 1 :]}
        imported = connector_imports(PACKAGE / f"{name}.py")
        assert not imported & later, f"{name}.py imports {sorted(imported & later)}"


def test_importing_main_module_does_not_run_the_command() -> None:
    module = importlib.import_module("kafka_rescalable.inspect.__main__")
    assert module.main is kafka_rescalable.inspect.main


def test_the_console_script_runs_main_with_pyarrow_fs_locations() -> None:
    # The pure command line, given the reader that also opens URIs (kafka_rescalable.checkpoints).
    (script,) = entry_points(group="console_scripts", name="kafka-rescalable-inspect")
    assert script.value == "kafka_rescalable.checkpoints:main"
    source = inspect.getsource(script.load())
    assert "cli.main(argv, read=read_checkpoint_at)" in source


def test_python_dash_m_prints_the_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kafka_rescalable.inspect", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m kafka_rescalable.inspect [-h]")
    assert done.stderr == ""
