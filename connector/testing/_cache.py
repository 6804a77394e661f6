"""What the tools' download caches share: a lock between processes and a marker written last.

The jar folders (:mod:`kafka_rescalable.testing.jars`) and the schema registry's build
(:mod:`kafka_rescalable.testing._registry.build`) each fill a cache folder once, under a lock so
that a
second process waits for the first, and record a complete result in a JSON marker that is
written atomically and last: a folder without its marker is never used.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["exclusive_lock", "write_marker"]


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the ``with`` block."""
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def write_marker(path: Path, document: Mapping[str, Any]) -> None:
    """Write ``document`` as JSON to ``path`` atomically: readers see no file or all of it."""
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp_name, path)
