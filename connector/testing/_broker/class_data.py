"""Application class-data archives (AppCDS) that let the Kafka JVMs start in half the time.

Class loading dominates every start of these JVMs, so the first clean exit of a tool records
an archive beside the jars, which later starts map instead of loading and verifying the
classes again. It is an optimisation only: without an archive, a JVM starts as usual.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PendingArchive", "archive_options"]


@dataclass(frozen=True)
class PendingArchive:
    """An archive a JVM writes at its exit, and the cache file it becomes after a clean one.

    Attributes
    ----------
    written
        Where the JVM dumps it, inside the node's data folder.
    cached
        Where later JVMs look for it, beside the jars.
    """

    written: Path
    cached: Path

    def adopt(self) -> None:
        """Move a complete archive into the cache; drop an empty or missing one quietly."""
        if not self.written.is_file() or self.written.stat().st_size == 0:
            return
        self.cached.parent.mkdir(parents=True, exist_ok=True)
        # Copy beside the target, then rename: readers see the old file or the whole new one.
        fd, temp_name = tempfile.mkstemp(dir=self.cached.parent, prefix=f".{self.cached.name}.")
        os.close(fd)
        try:
            shutil.copyfile(self.written, temp_name)
            os.replace(temp_name, self.cached)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp_name)
        with contextlib.suppress(OSError):
            self.written.unlink()


def archive_options(
    *,
    java: str,
    jvm_options: Sequence[str],
    classpath: str,
    data_dir: Path,
    tool: str,
    record: bool,
) -> tuple[list[str], PendingArchive | None]:
    """Return JVM flags to use a class-data archive, or to record one at exit.

    The archive is only valid for the same JVM build, options and classpath, so its name
    carries a digest of them. A new archive is first written inside the data folder and
    moved into the cache only after a clean exit (:meth:`PendingArchive.adopt`): a JVM killed
    while dumping, or two brokers dumping at once, can then never leave a torn file where
    others read it.

    Parameters
    ----------
    java
        The ``java`` executable; its build is part of the archive's identity.
    jvm_options
        The JVM flags, also part of it.
    classpath
        The jars, ``os.pathsep``-separated; the archive lives in a ``cds`` folder beside them.
    data_dir
        The node's folder, where a new archive is first written.
    tool
        ``"broker"`` or ``"storage-tool"``: each main class has its own archive.
    record
        Whether to record a missing archive; ``False`` runs without one.

    Returns
    -------
    tuple[list[str], PendingArchive | None]
        The flags, and the archive to adopt after a clean exit when one is being recorded.
    """
    java_path = Path(java).resolve()
    stat = java_path.stat()
    key = "\n".join(
        [str(java_path), str(stat.st_size), str(stat.st_mtime_ns), *jvm_options, classpath]
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    # Beside the jars: deleting a jar cache deletes its archives too.
    jars_dir = Path(classpath.split(os.pathsep)[0]).parent
    archive = jars_dir / "cds" / f"{tool}-{digest}.jsa"
    if archive.is_file():
        return [f"-XX:SharedArchiveFile={archive}"], None
    if not record:
        return [], None
    pending = data_dir / f"{tool}.jsa"
    return [f"-XX:ArchiveClassesAtExit={pending}"], PendingArchive(pending, archive)
