"""Byte-compile Spark's ``pyspark.zip``: the Python processes Spark starts skip compiling PySpark.

Usage::

    kafka-rescalable-compile-pyspark [--spark-home DIR] [--out FILE [--imported-as PATH]]
    kafka-rescalable-compile-pyspark --check

Why: Spark starts each streaming query's Python source process, and each planning process of a
Python data source, with ``$SPARK_HOME/python/lib/pyspark.zip`` first on ``PYTHONPATH``. The
zip holds sources only and Python's zipimport never writes a bytecode cache, so every such
process compiles the PySpark modules it imports again. On the benchmark machine that is
0.6-0.9 s at the start of every query, more than the rest of our start-up together
(``benchmarks/RESULTS.md``). An installed pyspark (site-packages) has its bytecode; the zip is
what Spark's processes import, and it comes first.

zipimport does read a ``module.pyc`` stored beside ``module.py`` in the archive. This tool adds
one for every module, as a *checked-hash* pyc: before using it, the interpreter compares it
with the hash of the source beside it in the same archive, so an edited source is compiled as
before, and an interpreter of another Python version skips it (its magic number differs). The
archive keeps every entry it had; a source that does not compile (PySpark ships some that
only some Python versions parse) stays source only. Running it again replaces the bytecode it
added, for the interpreter that runs it.

It changes a file of the Spark installation (or writes ``--out``): run it with the Python that
Spark's workers run, while no Spark application uses that installation, and again after an
upgrade of pyspark replaced the zip. ``--check`` says whether the archive holds bytecode for
this Python and exits 1 when it does not; a path that cannot be read or written exits 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import marshal
import os
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from kafka_rescalable.errors import PysparkZipError

__all__ = [
    "CompiledArchive",
    "PysparkZipError",
    "bytecode_state",
    "compile_archive",
    "main",
    "pyspark_zip_path",
]

PROG: Final = "kafka-rescalable-compile-pyspark"

_CHECKED_HASH: Final = (0b11).to_bytes(4, "little")
"""A pyc's flags word: hash-based (bit 0) and checked against its source (bit 1), PEP 552."""


@dataclass(frozen=True)
class CompiledArchive:
    """What :func:`compile_archive` wrote."""

    path: Path
    """The archive written."""
    compiled: int
    """Modules that now have bytecode beside their source."""
    left_as_source: tuple[str, ...]
    """Entries this Python cannot compile (a syntax of another version); imported as before."""


def pyspark_zip_path(spark_home: str | os.PathLike[str] | None = None) -> Path:
    """Find the ``pyspark.zip`` Spark puts on its Python processes' path, as Spark finds it.

    Spark uses ``$SPARK_HOME/python/lib/pyspark.zip``; without ``SPARK_HOME``, pyspark's own
    installation (what ``pyspark`` sets ``SPARK_HOME`` to when it starts Spark).
    """
    home = spark_home if spark_home is not None else os.environ.get("SPARK_HOME")
    if home is None:
        from pyspark.find_spark_home import _find_spark_home

        home = _find_spark_home()
    path = Path(home) / "python" / "lib" / "pyspark.zip"
    if not path.is_file():
        raise PysparkZipError(
            f"{path} does not exist: {home} is not a Spark installation with PySpark's archive. "
            "Pass the Spark installation whose workers run your queries (--spark-home, or "
            "SPARK_HOME)."
        )
    return path


def compile_archive(
    source: Path, target: Path | None = None, imported_as: str | None = None
) -> CompiledArchive:
    """Write ``source`` with a checked-hash pyc beside each module to ``target`` (or in place).

    The new archive is written next to ``target`` (next to the file a symbolic link names) and
    then renamed over it, so a reader never sees half an archive. Code objects carry the path
    zipimport gives a module's source, ``<imported_as>/<entry>``, where ``imported_as`` is the
    archive's path as it stands on the Python processes' ``PYTHONPATH`` (default: ``target``
    as given, unresolved, as Spark writes ``$SPARK_HOME/python/lib/pyspark.zip``). PySpark
    compares frames' file names with its own ``__file__`` to shorten tracebacks, so that path
    must be the one Spark imports from.
    """
    given = Path(target if target is not None else source).absolute()
    written_at = Path(os.path.realpath(given))
    prefix = imported_as if imported_as is not None else str(given)
    temporary: str | None = None
    try:
        with zipfile.ZipFile(source) as entries:
            handle, temporary = tempfile.mkstemp(
                prefix=f".{written_at.name}.", dir=written_at.parent
            )
            os.close(handle)
            with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as written:
                compiled, left = _copy_with_bytecode(entries, written, prefix)
            os.chmod(temporary, source.stat().st_mode & 0o777)
            os.replace(temporary, written_at)
            temporary = None
    except (OSError, zipfile.BadZipFile) as exc:
        raise PysparkZipError(
            f"cannot compile {source} into {written_at}: {exc}. Give a readable zip archive and "
            "a folder this user may write (run it as the Spark installation's owner)."
        ) from exc
    finally:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
    return CompiledArchive(given, compiled, tuple(left))


def _copy_with_bytecode(
    entries: zipfile.ZipFile, written: zipfile.ZipFile, prefix: str
) -> tuple[int, list[str]]:
    added = _added_bytecode(entries.namelist())
    compiled = 0
    left: list[str] = []
    for info in entries.infolist():
        if info.filename in added:
            continue  # bytecode an earlier run added, perhaps for another Python: replaced
        data = entries.read(info)
        written.writestr(info, data)
        if not info.filename.endswith(".py"):
            continue
        pyc = _checked_hash_pyc(data, os.path.join(prefix, info.filename.replace("/", os.sep)))
        if pyc is None:
            left.append(info.filename)
            continue
        entry = zipfile.ZipInfo(info.filename + "c", date_time=info.date_time)
        entry.compress_type = zipfile.ZIP_DEFLATED
        written.writestr(entry, pyc)
        compiled += 1
    return compiled, left


def _added_bytecode(names: Sequence[str]) -> frozenset[str]:
    """Return the entries that are a module's bytecode beside its source, as this tool adds."""
    present = frozenset(names)
    return frozenset(name for name in present if name.endswith(".pyc") and name[:-1] in present)


def _checked_hash_pyc(source: bytes, filename: str) -> bytes | None:
    """Return the pyc zipimport takes for ``source``; ``None`` if this Python cannot compile it."""
    # zipimport compiles a module's source with its line endings normalized; do the same.
    text = source.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a SyntaxWarning PySpark's own import would show
            # optimize=0: asserts and docstrings kept, whatever -O this Python runs with
            code = compile(text, filename, "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError):
        return None
    return b"".join(
        [
            importlib.util.MAGIC_NUMBER,
            _CHECKED_HASH,
            importlib.util.source_hash(source),
            marshal.dumps(code),
        ]
    )


def bytecode_state(path: Path) -> str:
    """One line: whether the archive at ``path`` holds bytecode this Python would use."""
    try:
        with zipfile.ZipFile(path) as archive:
            pycs = _added_bytecode(archive.namelist())
            if not pycs:
                return "sources only"
            magic = archive.read(min(pycs))[:4]
    except (OSError, zipfile.BadZipFile) as exc:
        raise PysparkZipError(f"cannot read {path} as a zip archive: {exc}") from exc
    if magic == importlib.util.MAGIC_NUMBER:
        return f"bytecode for this Python ({sys.implementation.cache_tag}), {len(pycs)} modules"
    return f"bytecode for another Python, not {sys.implementation.cache_tag}"


def main(argv: Sequence[str] | None = None) -> int:
    """Compile (or ``--check``) the archive; return the exit code."""
    parser = argparse.ArgumentParser(prog=PROG, description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--spark-home", help="the Spark installation (default: SPARK_HOME)")
    parser.add_argument("--out", type=Path, help="write here instead of over the archive")
    parser.add_argument(
        "--imported-as",
        help="with --out: the path Spark's processes will import the archive from "
        "(tracebacks name it; default: where it is written)",
    )
    parser.add_argument(
        "--check", action="store_true", help="only say what the archive holds; 1 if no bytecode"
    )
    args = parser.parse_args(argv)
    try:
        path = pyspark_zip_path(args.spark_home)
        if args.check:
            state = bytecode_state(path)
            print(f"{path}: {state}")
            return 0 if state.startswith("bytecode for this Python") else 1
        done = compile_archive(path, args.out, args.imported_as)
    except PysparkZipError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(
        f"{done.path}: {done.compiled} modules compiled for {sys.implementation.cache_tag}"
        + (f"; left as source: {', '.join(done.left_as_source)}" if done.left_as_source else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
