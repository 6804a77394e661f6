"""How the inspector sees a checkpoint's files: three questions, asked of any file system.

:func:`~kafka_rescalable.inspect.reading.read_checkpoint` needs to know what a path is (a
file, a directory, nothing), which names a directory holds, and a file's text. That is
:class:`CheckpointFiles`. :class:`LocalFiles` answers for this machine's disk with the
standard library; :mod:`kafka_rescalable.checkpoints` answers for any file system
``pyarrow.fs`` opens (``s3://``, ``hdfs://``, ``gs://``, ``file://``), so this package itself
imports nothing but the standard library and the pure state package.
"""

from __future__ import annotations

import posixpath
from enum import Enum
from pathlib import Path
from typing import Protocol

__all__ = [
    "CheckpointFiles",
    "LocalFiles",
    "PathKind",
    "batch_ids",
    "is_directory",
    "join",
    "why_no_offsets",
]


class PathKind(Enum):
    """What a path names."""

    FILE = "file"
    DIRECTORY = "directory"
    MISSING = "missing"


class CheckpointFiles(Protocol):
    """Read-only access to one file system, with ``/``-separated paths."""

    def kind(self, path: str) -> PathKind:
        """Say whether ``path`` is a file, a directory, or nothing."""
        ...

    def names(self, directory: str) -> list[str]:
        """Return the names (not paths) of the entries of ``directory``."""
        ...

    def read_text(self, path: str) -> str:
        """Return the file's content, decoded as UTF-8."""
        ...


def join(directory: str, name: str) -> str:
    """Join with ``/``, as every file system the inspector reads spells its paths."""
    return posixpath.join(directory, name)


class LocalFiles:
    """:class:`CheckpointFiles` for this machine's file system."""

    def kind(self, path: str) -> PathKind:
        """Say whether ``path`` is a file, a directory, or nothing."""
        target = Path(path)
        if target.is_dir():
            return PathKind.DIRECTORY
        return PathKind.FILE if target.exists() else PathKind.MISSING

    def names(self, directory: str) -> list[str]:
        """Return the names of the entries of ``directory``."""
        return [entry.name for entry in Path(directory).iterdir()]

    def read_text(self, path: str) -> str:
        """Return the file's content, decoded as UTF-8."""
        return Path(path).read_text(encoding="utf-8")


def is_directory(files: CheckpointFiles, path: str) -> bool:
    """Say whether ``path`` is a directory of ``files``."""
    return files.kind(path) is PathKind.DIRECTORY


def batch_ids(names: list[str]) -> list[int]:
    """Return the batch ids among a log directory's names, sorted (``.crc`` files are not)."""
    return sorted(int(name) for name in names if name.isascii() and name.isdigit())


def why_no_offsets(files: CheckpointFiles, root: str) -> str:
    """Say why ``root``, a directory without ``offsets/``, has no offset log to read.

    A checkpoint whose query has not planned a batch yet says so; any other directory is no
    checkpoint, and a checkpoint directly inside it (a parent given by mistake) is named.
    """
    if files.kind(join(root, "metadata")) is PathKind.FILE or is_directory(
        files, join(root, "commits")
    ):
        return f"{root}: no offsets yet: the query has not planned its first batch"
    msg = f"{root} is not a Spark streaming checkpoint: it has no offsets/ directory"
    children = (join(root, name) for name in files.names(root))
    nested = sorted(child for child in children if is_directory(files, join(child, "offsets")))
    if nested:
        msg += f"; did you mean {', '.join(nested[:3])}?"
    return msg
