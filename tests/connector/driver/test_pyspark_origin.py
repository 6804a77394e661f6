"""The planning process's hint about a PySpark it compiled from ``pyspark.zip``.

The real archive, compiled and not, is tried in ``tests/connector/test_pyspark_zip.py``.
"""

from __future__ import annotations

import logging

import pytest

from kafka_rescalable.driver import pyspark_origin
from kafka_rescalable.driver.pyspark_origin import compiled_pyspark_hint, note_pyspark_origin


@pytest.mark.parametrize(
    "loaded",
    [
        "/venv/lib/python3.11/site-packages/pyspark/__init__.py",  # installed: has bytecode
        "/opt/spark/python/lib/pyspark.zip/pyspark/__init__.pyc",  # compiled archive
        "",
    ],
)
def test_no_hint_where_pyspark_had_bytecode(loaded: str) -> None:
    assert compiled_pyspark_hint(loaded) is None


def test_the_hint_names_the_archive_and_the_command() -> None:
    hint = compiled_pyspark_hint("/opt/spark/python/lib/pyspark.zip/pyspark/__init__.py")
    assert hint is not None
    assert "from the sources in /opt/spark/python/lib/pyspark.zip before" in hint
    assert "kafka-rescalable-compile-pyspark" in hint


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_it_is_said_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyspark

    monkeypatch.setattr(pyspark_origin, "_noted", False)
    monkeypatch.setattr(pyspark, "__file__", "/spark/python/lib/pyspark.zip/pyspark/__init__.py")
    kept = _Kept()
    logger = logging.getLogger("kafka_rescalable")  # does not propagate: see _logging
    logger.addHandler(kept)
    try:
        note_pyspark_origin()
        note_pyspark_origin()
    finally:
        logger.removeHandler(kept)
    assert [m for m in kept.messages if "compile-pyspark" in m] == [kept.messages[0]]
    assert len(kept.messages) == 1
