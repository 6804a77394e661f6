"""The development tools (local brokers, jar resolution, CLIs) stand apart from the source.

The source's modules never import :mod:`kafka_rescalable.testing`, checked on their text with
``ast``
so an import inside a function is caught too; the tools are reached through their own modules
and console scripts.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import kafka_rescalable

CONNECTOR_DIR = Path(kafka_rescalable.__file__).resolve().parent
TOOLS_PACKAGE = "kafka_rescalable.testing"
# Kept so that ``python -m kafka_rescalable.local_kafka`` still works; it only re-exports the tool.
COMPATIBILITY_SHIMS = {"local_kafka.py"}
CONSOLE_SCRIPTS = ("kafka-rescalable-local-kafka", "kafka-rescalable-inspect")


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, ``from package import name`` counted as ``package.name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: use absolute imports"
            base = node.module or ""
            modules.add(base)
            modules.update(f"{base}.{alias.name}" for alias in node.names)
    return modules


def _is_tools(module: str) -> bool:
    return module == TOOLS_PACKAGE or module.startswith(f"{TOOLS_PACKAGE}.")


def _source_modules() -> list[Path]:
    """Every module of the source, in every subpackage but the tools' own."""
    tools_dir = CONNECTOR_DIR / "testing"
    return sorted(
        p
        for p in CONNECTOR_DIR.rglob("*.py")
        if tools_dir not in p.parents and p.relative_to(CONNECTOR_DIR).as_posix()
        not in COMPATIBILITY_SHIMS
    )


def test_the_source_never_imports_the_development_tools() -> None:
    sources = _source_modules()
    names = {p.relative_to(CONNECTOR_DIR).as_posix() for p in sources}
    assert names >= {"__init__.py", "source.py", "errors.py", "driver/stream_reader.py"}
    for path in sources:
        tools = sorted(m for m in _imported_modules(path) if _is_tools(m))
        assert not tools, f"{path.relative_to(CONNECTOR_DIR.parent)} imports {tools}"


def test_the_check_sees_every_spelling_of_the_import(tmp_path: Path) -> None:
    spellings = [
        "import kafka_rescalable.testing.jars",
        "from kafka_rescalable.testing import jars",
        "from kafka_rescalable import testing",
        "def later():\n    from kafka_rescalable.testing.errors import BrokerStartError",
    ]
    for number, text in enumerate(spellings):
        path = tmp_path / f"module_{number}.py"
        path.write_text(text + "\n", encoding="utf-8")
        assert any(_is_tools(m) for m in _imported_modules(path)), text


def test_the_compatibility_module_is_the_tool() -> None:
    from kafka_rescalable import local_kafka as shim
    from kafka_rescalable.testing import local_kafka

    assert set(shim.__all__) == set(local_kafka.__all__)
    for name in shim.__all__:
        assert getattr(shim, name) is getattr(local_kafka, name), name
    assert "compatibility" in (shim.__doc__ or "")


def test_tool_errors_are_not_exported_as_the_source_errors() -> None:
    assert not {"BrokerStartError", "JarResolutionError"} & set(kafka_rescalable.__all__)


@pytest.mark.parametrize("script", CONSOLE_SCRIPTS)
def test_console_script_is_installed_and_prints_its_help(script: str) -> None:
    executable = Path(sys.executable).parent / script
    assert executable.is_file(), f"{script} is not installed next to {sys.executable}"
    completed = subprocess.run(
        [str(executable), "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert "usage:" in completed.stdout
