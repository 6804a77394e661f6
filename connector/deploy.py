"""Ship kafka-rescalable to workers that do not have it: one archive for ``spark.archives``.

Usage::

    kafka-rescalable-pack [OUTPUT] [--extra avro ...]

Run in the Python environment where kafka-rescalable is installed (the driver's). It copies
the installed package and what it needs at run time (confluent-kafka, pyarrow, the chosen
extras' dependencies) into one ``.tar.gz`` whose root is a plain ``site-packages``-like
folder, and prints the two Spark settings that use it::

    --archives kafka-rescalable-env.tar.gz#kafka-rescalable-env
    --conf spark.executorEnv.PYTHONPATH=kafka-rescalable-env

Each executor unpacks the archive into its working directory and its Python workers find
the folder through that relative ``PYTHONPATH``. Not packed: pyspark and py4j (the workers'
Spark gives its own Python code to every Python worker; leaving them out keeps the archive
around 65 MB instead of half a gigabyte) and no interpreter: the executors run their own
``python3``, which must be the same Python minor version on the same platform as here
(docs/deploy/cluster.md says why and what to set).

Why not a packed virtualenv (venv-pack, conda-pack, PEX) with ``PYSPARK_PYTHON`` pointing
into it, as Spark's guide shows: a source found by name runs the *same* interpreter path on
the driver's planning process and on the executors, so a path that exists only inside the
unpacked archive also had to exist in the driver's working directory. A folder on the
executors' ``PYTHONPATH`` leaves the interpreter alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import re
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import Distribution, PackageNotFoundError, distribution
from pathlib import Path, PurePosixPath
from typing import Final

from kafka_rescalable.errors import EnvironmentPackError

__all__ = [
    "ARCHIVE_NAME",
    "EnvironmentPackError",
    "PackedEnvironment",
    "main",
    "pack_environment",
]

ARCHIVE_NAME: Final = "kafka-rescalable-env"
"""The folder each executor unpacks the archive into (the ``#`` fragment of spark.archives)."""

PROG: Final = "kafka-rescalable-pack"
_ROOT_DISTRIBUTION: Final = "kafka-rescalable"
_OPTIONAL_DISTRIBUTIONS: Final = ("kafka-rescalable-native",)  # shipped when installed
_PROVIDED_BY_SPARK: Final = frozenset({"pyspark", "py4j"})
# What no executor imports: tests, C headers and Cython sources, compiled caches.
_SKIPPED_PARTS: Final = frozenset({"__pycache__", "tests", "include"})
_SKIPPED_SUFFIXES: Final = (".pyc", ".pyx", ".pxd", ".pxi", ".h", ".hpp")
_REQUIREMENT: Final = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
_EXTRA_MARKER: Final = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class PackedEnvironment:
    """What :func:`pack_environment` wrote.

    Parameters
    ----------
    archive : Path
        The ``.tar.gz`` file.
    distributions : tuple of str
        ``name==version`` of every distribution packed, sorted.
    python : str
        The Python minor version and platform the compiled parts were built for: the
        executors' ``python3`` must match.
    """

    archive: Path
    distributions: tuple[str, ...]
    python: str

    def spark_conf(self, name: str = ARCHIVE_NAME) -> dict[str, str]:
        """Return the Spark settings that ship the archive and put it on the executors' path."""
        return {
            "spark.archives": f"{self.archive}#{name}",
            "spark.executorEnv.PYTHONPATH": name,
        }


def pack_environment(output: str | Path, extras: Iterable[str] = ()) -> PackedEnvironment:
    """Pack the installed kafka-rescalable and its run-time requirements into ``output``.

    Parameters
    ----------
    output
        The ``.tar.gz`` to write (replaced if it exists).
    extras
        kafka-rescalable extras whose dependencies executors need too (``avro``,
        ``protobuf``, ``json``), as installed here.

    Raises
    ------
    EnvironmentPackError
        When kafka-rescalable, or a requirement without an environment marker, is not
        installed in this Python.
    """
    dists = _closure(_ROOT_DISTRIBUTION, frozenset(extras))
    for name in _OPTIONAL_DISTRIBUTIONS:
        try:
            dists[name] = distribution(name)
        except PackageNotFoundError:
            pass
    archive = Path(output)
    with tempfile.TemporaryDirectory(prefix="kafka-rescalable-pack-") as scratch:
        staging = Path(scratch)
        for dist in dists.values():
            _copy_distribution(dist, staging)
        archive.parent.mkdir(parents=True, exist_ok=True)
        # Level 1: a third of the time of the default level for a tenth more bytes.
        with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
            for child in sorted(staging.iterdir()):
                tar.add(child, arcname=child.name)
    names = tuple(sorted(f"{d.metadata['Name']}=={d.version}" for d in dists.values()))
    python = f"CPython {sys.version_info.major}.{sys.version_info.minor} on "
    python += f"{platform.system().lower()} {platform.machine()}"
    return PackedEnvironment(archive, names, python)


def _closure(root: str, extras: frozenset[str]) -> dict[str, Distribution]:
    """Return the installed distributions ``root`` needs, Spark's own left out."""
    found: dict[str, Distribution] = {}
    pending: list[tuple[str, frozenset[str], str | None]] = [(root, extras, None)]
    while pending:
        name, wanted, marker = pending.pop()
        key = _normalize(name)
        if key in found or key in _PROVIDED_BY_SPARK:
            continue
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            if marker is not None:  # e.g. `python_version < "3.11"`: not needed here
                continue
            msg = (
                f"{name} is not installed in this Python ({sys.executable}); run "
                f"{PROG} in the environment where kafka-rescalable is installed"
            )
            raise EnvironmentPackError(msg) from None
        found[key] = dist
        for requirement in dist.requires or ():
            spec, _, condition = requirement.partition(";")
            match = _REQUIREMENT.match(spec)
            if match is None:
                continue
            needed_extra = _EXTRA_MARKER.search(condition)
            if needed_extra is not None and needed_extra.group(1) not in wanted:
                continue
            own_extras = frozenset(e.strip() for e in (match.group(2) or "").split(",") if e)
            rest = _EXTRA_MARKER.sub("", condition).strip(" ()andor")
            pending.append((match.group(1), own_extras, rest or None))
    return found


def _copy_distribution(dist: Distribution, staging: Path) -> None:
    if _is_editable(dist):
        _copy_importable(dist, staging)
        return
    site = Path(str(dist.locate_file(""))).resolve()
    for record in dist.files or ():
        relative = PurePosixPath(str(record))
        if ".." in relative.parts or _skipped(relative):
            continue  # console scripts live outside site-packages
        source = site / relative
        if source.is_file():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _copy_importable(dist: Distribution, staging: Path) -> None:
    """Copy an editable install's top-level modules from where the import system finds them."""
    for name in _top_level_names(dist):
        spec = importlib.util.find_spec(name)
        if spec is None:
            continue
        if spec.submodule_search_locations:
            source = Path(next(iter(spec.submodule_search_locations)))
            shutil.copytree(
                source,
                staging / name,
                ignore=lambda _dir, names: [n for n in names if _skipped(PurePosixPath(n))],
                dirs_exist_ok=True,
            )
        elif spec.origin:
            shutil.copy2(Path(spec.origin).resolve(), staging / Path(spec.origin).name)


def _top_level_names(dist: Distribution) -> list[str]:
    listed = dist.read_text("top_level.txt")
    if listed:
        return [line.strip() for line in listed.splitlines() if line.strip()]
    # kafka-rescalable's own: the import root and the by-name lookup module.
    return ["kafka_rescalable", "pyspark_kafka_rescalable"]


def _is_editable(dist: Distribution) -> bool:
    text = dist.read_text("direct_url.json")
    if not text:
        return False
    return bool(json.loads(text).get("dir_info", {}).get("editable"))


def _skipped(path: PurePosixPath) -> bool:
    return bool(_SKIPPED_PARTS.intersection(path.parts)) or path.name.endswith(_SKIPPED_SUFFIXES)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def main(argv: Sequence[str] | None = None) -> int:
    """Pack the environment and print the Spark settings that ship it; 2 on an error."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Pack kafka-rescalable and its run-time requirements for spark.archives.",
    )
    parser.add_argument("output", nargs="?", default=f"{ARCHIVE_NAME}.tar.gz")
    parser.add_argument(
        "--extra", action="append", default=[], help="an extra the executors need (avro, ...)"
    )
    args = parser.parse_args(argv)
    try:
        packed = pack_environment(args.output, args.extra)
    except EnvironmentPackError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    size_mb = packed.archive.stat().st_size / 1e6
    print(f"{packed.archive}: {size_mb:.0f} MB, {len(packed.distributions)} distributions")
    print(f"built for {packed.python}: the executors' python3 must be the same")
    conf = packed.spark_conf()
    print(f"spark-submit --archives {conf['spark.archives']} \\")
    print(f"  --conf spark.executorEnv.PYTHONPATH={conf['spark.executorEnv.PYTHONPATH']} ...")
    return 0
