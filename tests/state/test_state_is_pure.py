"""``state`` is pure Python: no Spark, no Kafka client, no Arrow, nothing outside stdlib.

Checked on the source with ``ast`` rather than by importing, so an import hidden in a
function body or under ``TYPE_CHECKING`` is caught too.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import kafka_rescalable.state as state

STATE_DIR = Path(state.__file__).resolve().parent
FORBIDDEN = {"pyspark", "py4j", "confluent_kafka", "kafka", "pyarrow", "pandas", "numpy"}


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: use absolute imports"
            module = node.module or ""
            own = module == "kafka_rescalable.state" or module.startswith("kafka_rescalable.state.")
            if not own:
                roots.add(module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            raise AssertionError(f"{path.name}: dynamic import")
    return roots


def test_state_imports_only_the_standard_library_and_itself() -> None:
    sources = sorted(STATE_DIR.glob("*.py"))
    assert {p.name for p in sources} >= {"__init__.py", "partitions.py", "rebalancer.py"}
    for path in sources:
        roots = _imported_roots(path)
        assert not roots & FORBIDDEN, f"{path.name} imports {roots & FORBIDDEN}"
        outside = {r for r in roots if r not in sys.stdlib_module_names}
        assert not outside, f"{path.name} imports {outside}"


def test_public_api_is_exported() -> None:
    expected = {
        "TopicPartition",
        "PartitionOffset",
        "OffsetRange",
        "OffsetState",
        "SlotsDocument",
        "Rebalance",
        "rebalance",
        "PlannedTask",
        "plan_tasks",
        "StateError",
        "OffsetDocumentError",
        "ForeignCheckpointError",
        "DuplicatePartitionError",
        "UnknownPartitionError",
        "OffsetRegressionError",
    }
    assert expected <= set(state.__all__)
    assert all(hasattr(state, name) for name in state.__all__)


def _defined_here(tree: ast.Module) -> set[str]:
    """Names the module defines, at its top level and in its classes (methods, fields)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _private_reaches(tree: ast.Module) -> list[str]:
    """Private names of other modules that ``tree`` imports, or reads as attributes.

    A private module (``kafka_rescalable.state._json``) may export public names; an attribute named
    as
    something the module itself defines (``state._index()`` in ``offset_state``) is its own.
    """
    own = _defined_here(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            dunder = node.attr.startswith("__") and node.attr.endswith("__")
            if not dunder and node.attr not in own:
                found.append(f"{ast.unparse(node.value)}.{node.attr}")
    return found


def test_no_module_reaches_into_another_modules_private_names() -> None:
    reaches = {}
    for path in sorted(STATE_DIR.glob("*.py")):
        found = _private_reaches(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        if found:
            reaches[path.name] = found
    assert reaches == {}
