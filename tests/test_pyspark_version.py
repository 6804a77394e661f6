"""The tests run on the pyspark they mean to test.

CI tests two pyspark lines: the newest (the README's test command) and the oldest that
``pyproject.toml`` allows (``.ci/pyspark-4.2``, with a pip constraint). A resolver that quietly
installed another version would make the second stage a copy of the first, passing while
proving nothing about 4.2. So the stage names its constraints file in
``KAFKA_RESCALABLE_PYSPARK_CONSTRAINTS`` and this test checks the installed pyspark against it;
without the variable it checks the installed pyspark against ``pyproject.toml``'s requirement.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pyspark
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS_VARIABLE = "KAFKA_RESCALABLE_PYSPARK_CONSTRAINTS"


def _pyspark_requirement(lines: list[str]) -> Requirement:
    """Return the one pyspark requirement among requirement lines (comments allowed)."""
    requirements = [Requirement(text) for line in lines if (text := line.split("#", 1)[0].strip())]
    found = [requirement for requirement in requirements if requirement.name == "pyspark"]
    assert len(found) == 1, f"expected one pyspark requirement, found {found}"
    return found[0]


def _expected() -> tuple[Requirement, str]:
    """Return the requirement this run must satisfy and where it comes from."""
    constraints = os.environ.get(CONSTRAINTS_VARIABLE)
    if constraints:
        path = ROOT / constraints
        return _pyspark_requirement(path.read_text(encoding="utf-8").splitlines()), str(path)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return _pyspark_requirement(project["project"]["dependencies"]), "pyproject.toml"


def test_the_installed_pyspark_is_the_one_this_run_tests() -> None:
    requirement, source = _expected()
    assert requirement.specifier.contains(pyspark.__version__, prereleases=True), (
        f"pyspark {pyspark.__version__} is installed, but this run tests {requirement} "
        f"(from {source}): pip resolved another version than the one this run is for"
    )


def test_a_requirement_is_read_from_constraint_lines() -> None:
    lines = ["# a comment", "", "pyarrow>=15", "pyspark~=4.2.0  # the 4.2 line"]
    requirement = _pyspark_requirement(lines)
    assert not requirement.specifier.contains("4.3.0")
    assert requirement.specifier.contains("4.2.1")
