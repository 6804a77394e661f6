"""Checkpoints on any file system ``pyarrow.fs`` opens, for the inspector and for Python code.

Moving a query from Spark's built-in ``kafka`` source (or between checkpoints of ours) needs
the ``startingOffsets`` where the old query stopped. Checkpoints often live on S3, HDFS or GCS,
not on the machine at hand; ``pyarrow.fs`` (a dependency already) reads all of them, with
the credentials and settings pyarrow finds in the environment.

>>> from kafka_rescalable import starting_offsets_from_checkpoint  # doctest: +SKIP
>>> start = starting_offsets_from_checkpoint("s3://bucket/checkpoints/orders")  # doctest: +SKIP
>>> spark.readStream.format("kafka-rescalable").option("startingOffsets", start)  # doctest: +SKIP

:mod:`kafka_rescalable.inspect` stays pure (no dependency but the standard library); this
module gives it :class:`ArrowFiles`, and ``kafka-rescalable-inspect`` runs the inspector's
command line with :func:`read_checkpoint_at`, so the command takes the same URIs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import pyarrow.fs as pafs

from kafka_rescalable.inspect import cli
from kafka_rescalable.inspect.continuing import continuation
from kafka_rescalable.inspect.files import LocalFiles, PathKind
from kafka_rescalable.inspect.reading import CheckpointError, CheckpointLog, read_checkpoint

__all__ = ["ArrowFiles", "main", "read_checkpoint_at", "starting_offsets_from_checkpoint"]

_KINDS = {pafs.FileType.Directory: PathKind.DIRECTORY, pafs.FileType.File: PathKind.FILE}


class ArrowFiles:
    """The inspector's view (``CheckpointFiles``) of a ``pyarrow.fs.FileSystem``."""

    def __init__(self, filesystem: pafs.FileSystem) -> None:
        self.filesystem = filesystem

    def kind(self, path: str) -> PathKind:
        """Say whether ``path`` is a file, a directory, or nothing."""
        return _KINDS.get(self.filesystem.get_file_info(path).type, PathKind.MISSING)

    def names(self, directory: str) -> list[str]:
        """Return the names of the entries of ``directory``."""
        selector = pafs.FileSelector(directory, recursive=False)
        return [info.base_name for info in self.filesystem.get_file_info(selector)]

    def read_text(self, path: str) -> str:
        """Return the file's content, decoded as UTF-8."""
        with self.filesystem.open_input_stream(path) as stream:
            return stream.read().decode("utf-8")


def read_checkpoint_at(location: str, filesystem: pafs.FileSystem | None = None) -> CheckpointLog:
    """Read a checkpoint's offset log from a local path, a URI, or a path on ``filesystem``.

    Parameters
    ----------
    location
        A local path; a URI ``pyarrow.fs.FileSystem.from_uri`` opens (``s3://bucket/ckpt``,
        ``hdfs://namenode/ckpt``, ``file:///tmp/ckpt``); or, with ``filesystem``, a path on it.
    filesystem
        A ``pyarrow.fs.FileSystem`` built with your own settings (credentials, region, a
        ``SubTreeFileSystem``).

    Raises
    ------
    CheckpointError
        When the location cannot be opened or read, or is no checkpoint with offsets.
    """
    try:
        if filesystem is not None:
            return read_checkpoint(location, ArrowFiles(filesystem))
        if "://" not in location:
            return read_checkpoint(location, LocalFiles())
        opened, path = pafs.FileSystem.from_uri(location)
        return read_checkpoint(path, ArrowFiles(opened))
    except (OSError, ValueError) as error:  # pyarrow's: ArrowInvalid is a ValueError
        if isinstance(error, CheckpointError):
            raise
        raise CheckpointError(f"{location} cannot be read: {error}") from error


def starting_offsets_from_checkpoint(
    location: str, source: str | None = None, filesystem: pafs.FileSystem | None = None
) -> str:
    """Return the ``startingOffsets`` JSON that continues a checkpointed query.

    It is the end of the query's last committed batch, for Spark's built-in ``kafka`` source
    or for ours: what ``kafka-rescalable-inspect CHECKPOINT --starting-offsets`` prints.

    Parameters
    ----------
    location, filesystem
        Where the checkpoint is, as for :func:`read_checkpoint_at`.
    source
        Which source of the query (its key in the offset log: ``"0"``, ``"1"``, or its name);
        needed only when the query read several Kafka sources.

    Raises
    ------
    CheckpointError
        When the checkpoint cannot be read, has no committed batch, or holds several Kafka
        sources and ``source`` does not pick one.
    """
    log = read_checkpoint_at(location, filesystem)
    found = continuation(log, source)
    if len(found.sources) > 1:
        keys = ", ".join(start.source_key for start in found.sources)
        msg = f"{location}: the query read several Kafka sources ({keys}); pass source=KEY"
        raise CheckpointError(msg)
    return json.dumps(found.sources[0].starting_offsets(), separators=(",", ":"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kafka-rescalable-inspect``: the inspector's command line, URIs included."""
    return cli.main(argv, read=read_checkpoint_at)


if __name__ == "__main__":  # python -m kafka_rescalable.checkpoints CHECKPOINT ...
    sys.exit(main())
