"""Where the benchmark broker keeps its topic data (``benchmarks.broker``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import broker
from benchmarks.broker import broker_data_properties


def test_the_data_is_in_memory_while_the_broker_runs_and_gone_after() -> None:
    with broker_data_properties() as properties:
        folder = Path(properties["log.dirs"])
        assert folder.parent == broker.MEMORY_ROOT and folder.is_dir()
    assert not folder.exists()


def test_on_disk_when_asked_leaves_the_brokers_own_folder() -> None:
    with broker_data_properties(on_disk=True) as properties:
        assert properties == {}


def test_without_a_memory_folder_it_stays_on_disk_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(broker, "MEMORY_ROOT", tmp_path / "no-such-folder")
    with broker_data_properties() as properties:
        assert properties == {}
    assert "stays on disk" in capsys.readouterr().out
