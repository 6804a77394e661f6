"""Task timings are diagnostics: a timings file that cannot be written never fails a task."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from kafka_rescalable.executor import task_timing


def test_a_timing_line_is_appended_to_the_named_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "timings.jsonl"
    monkeypatch.setenv(task_timing.TIMINGS_ENV, str(path))
    for _ in range(2):
        timing = task_timing.start()
        assert timing is not None
        timing.finish()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 2
    assert all("pid" in line and "at" in line for line in lines)


def test_a_file_in_a_removed_folder_is_a_warning_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    gone = tmp_path / "removed" / "timings.jsonl"
    monkeypatch.setenv(task_timing.TIMINGS_ENV, str(gone))
    timing = task_timing.start()
    assert timing is not None
    with caplog.at_level(logging.WARNING, logger="kafka_rescalable"):
        timing.finish()
    assert not gone.exists()
    assert any("task timings not written" in r.getMessage() for r in caplog.records)
