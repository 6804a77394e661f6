"""Checkpoints read through ``pyarrow.fs`` (:mod:`kafka_rescalable.checkpoints`).

Here rather than beside ``connector/checkpoints.py``'s own place in the tree because the
offset logs come from this folder's fixtures. The file systems are real ones: a ``file://``
URI opened by ``FileSystem.from_uri``, and a ``SubTreeFileSystem`` over the local disk, the
shape of a bucket prefix; only the disk under them is local.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pyarrow.fs import LocalFileSystem, SubTreeFileSystem

import kafka_rescalable
from kafka_rescalable import CheckpointError, starting_offsets_from_checkpoint
from kafka_rescalable.checkpoints import main, read_checkpoint_at

MakeLog = Callable[..., Path]
BUILTIN = {
    0: ['{"orders":{"1":0,"0":0}}'],
    1: ['{"orders":{"1":40,"0":35}}'],
    2: ['{"orders":{"1":52,"0":61}}'],
}
EXPECTED = '{"orders":{"0":35,"1":40}}'  # the end of batch 1, the last committed


@pytest.fixture
def builtin_checkpoint(make_log: MakeLog) -> Path:
    return make_log(BUILTIN, committed={0, 1})


def test_a_file_uri_gives_the_starting_offsets(builtin_checkpoint: Path) -> None:
    assert starting_offsets_from_checkpoint(builtin_checkpoint.as_uri()) == EXPECTED
    assert starting_offsets_from_checkpoint(str(builtin_checkpoint)) == EXPECTED


def test_a_pyarrow_filesystem_object_reads_a_path_on_it(builtin_checkpoint: Path) -> None:
    bucket = SubTreeFileSystem(str(builtin_checkpoint.parent), LocalFileSystem())
    found = starting_offsets_from_checkpoint(builtin_checkpoint.name, filesystem=bucket)
    assert found == EXPECTED
    log = read_checkpoint_at(builtin_checkpoint.name, bucket)
    assert [b.batch_id for b in log.batches] == [0, 1, 2] and log.committed_ids == {0, 1}


def test_the_command_takes_a_uri(
    builtin_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([builtin_checkpoint.as_uri(), "--starting-offsets"]) == 0
    assert capsys.readouterr().out == EXPECTED + "\n"


def test_unreadable_locations_are_checkpoint_errors_naming_them(
    builtin_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(CheckpointError, match="nosuch://bucket/ckpt cannot be read"):
        starting_offsets_from_checkpoint("nosuch://bucket/ckpt")
    missing = builtin_checkpoint.parent / "gone"
    with pytest.raises(CheckpointError, match=f"{missing} does not exist"):
        starting_offsets_from_checkpoint(missing.as_uri())
    assert main([missing.as_uri(), "--starting-offsets"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_several_kafka_sources_need_one_picked(make_log: MakeLog) -> None:
    two = make_log({0: ['{"orders":{"0":5}}', '{"audit":{"0":7}}']}, committed={0})
    with pytest.raises(CheckpointError, match=r"several Kafka sources \(0, 1\); pass source="):
        starting_offsets_from_checkpoint(two.as_uri())
    assert starting_offsets_from_checkpoint(two.as_uri(), source="1") == '{"audit":{"0":7}}'


def test_the_root_exports_the_function_without_importing_pyarrow_until_used() -> None:
    assert "starting_offsets_from_checkpoint" in kafka_rescalable.__all__
    probe = (
        "import sys, kafka_rescalable; "
        "assert 'pyarrow' not in sys.modules and 'pyspark' not in sys.modules; "
        "kafka_rescalable.starting_offsets_from_checkpoint; "
        "assert 'pyarrow.fs' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=120)
