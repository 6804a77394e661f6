"""The schema registry's build cache: a complete build of the same recipe is reused, no other.

The folders here are made by hand, so no Maven runs: with ``mvn`` off the ``PATH``, a call
that would build fails at once, naming it, which is how these tests tell reuse from a rebuild.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kafka_rescalable.testing._registry import build
from kafka_rescalable.testing.errors import SchemaRegistryBuildError
from kafka_rescalable.testing.jars import find_java


@pytest.fixture
def no_maven(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leave only ``java`` on the ``PATH``."""
    monkeypatch.setenv("PATH", os.path.dirname(os.path.realpath(find_java())))
    monkeypatch.delenv("JAVA_HOME", raising=False)


def _built_folder(tmp_path: Path) -> Path:
    app = tmp_path / "quarkus-app"
    (app / "lib").mkdir(parents=True)
    (app / "quarkus-run.jar").write_bytes(b"")
    build._write_marker(tmp_path)
    return app / "quarkus-run.jar"


@pytest.mark.usefixtures("no_maven")
def test_a_complete_build_is_reused_without_maven(tmp_path: Path) -> None:
    run_jar = _built_folder(tmp_path)
    assert build.registry_app(tmp_path) == run_jar


@pytest.mark.usefixtures("no_maven")
def test_a_build_of_another_recipe_is_not_reused(tmp_path: Path) -> None:
    _built_folder(tmp_path)
    marker = tmp_path / "built.json"
    document = json.loads(marker.read_text(encoding="utf-8"))
    marker.write_text(json.dumps({**document, "recipe": "0" * 16}), encoding="utf-8")
    with pytest.raises(SchemaRegistryBuildError, match="no 'mvn' executable"):
        build.registry_app(tmp_path)


@pytest.mark.usefixtures("no_maven")
def test_a_build_missing_its_jars_is_not_reused(tmp_path: Path) -> None:
    run_jar = _built_folder(tmp_path)
    (run_jar.parent / "lib").rmdir()
    with pytest.raises(SchemaRegistryBuildError, match="no 'mvn' executable"):
        build.registry_app(tmp_path)
