"""The planning process's hint about a PySpark it compiled from ``pyspark.zip``.

The real archive, compiled and not, imported by a new Python, is tried in
``tests/connector/test_pyspark_zip.py``; here the modules are stand-ins with a real loader.
"""

from __future__ import annotations

import logging
import sys
import zipfile
import zipimport
from pathlib import Path
from types import ModuleType

import pytest

from kafka_rescalable.driver import pyspark_origin
from kafka_rescalable.driver.pyspark_origin import compiled_pyspark_hint, note_pyspark_origin


def _module(loader: object, loaded: str) -> ModuleType:
    module = ModuleType("pyspark")
    module.__loader__ = loader  # type: ignore[assignment]
    module.__file__ = loaded
    return module


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    path = tmp_path / "spark" / "python" / "lib" / "pyspark.zip"
    path.parent.mkdir(parents=True)
    with zipfile.ZipFile(path, "w") as written:
        written.writestr("pyspark/__init__.py", "")
    return path


def test_no_hint_where_pyspark_had_bytecode_or_was_not_in_an_archive(
    archive: Path, tmp_path: Path
) -> None:
    importer = zipimport.zipimporter(str(archive))
    assert compiled_pyspark_hint(_module(importer, f"{archive}/pyspark/__init__.pyc")) is None
    # a virtualenv unpacked from spark.archives into a folder named *.zip: not zipimport
    unpacked = f"{tmp_path}/env.zip/lib/python3.11/site-packages/pyspark/__init__.py"
    assert compiled_pyspark_hint(_module(None, unpacked)) is None
    assert compiled_pyspark_hint(_module(None, "")) is None


def test_the_hint_names_the_archive_this_python_and_the_command(archive: Path) -> None:
    importer = zipimport.zipimporter(str(archive))
    hint = compiled_pyspark_hint(_module(importer, f"{archive}/pyspark/__init__.py"))
    assert hint is not None
    assert f"from the sources in {archive} before" in hint
    assert f"({sys.executable}, {sys.implementation.cache_tag})" in hint
    assert "kafka-rescalable-compile-pyspark with this Python" in hint


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_it_is_said_once_per_process(monkeypatch: pytest.MonkeyPatch, archive: Path) -> None:
    import pyspark

    monkeypatch.setattr(pyspark_origin, "_noted", False)
    monkeypatch.setattr(pyspark, "__loader__", zipimport.zipimporter(str(archive)))
    monkeypatch.setattr(pyspark, "__file__", f"{archive}/pyspark/__init__.py")
    kept = _Kept()
    logger = logging.getLogger("kafka_rescalable")  # does not propagate: see _logging
    logger.addHandler(kept)
    try:
        note_pyspark_origin()
        note_pyspark_origin()
    finally:
        logger.removeHandler(kept)
    assert len(kept.messages) == 1
    assert "compile-pyspark" in kept.messages[0]
