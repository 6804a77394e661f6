"""A Spark home like pyspark's own, but whose ``pyspark.zip`` holds bytecode.

``--compiled-pyspark-zip`` measures what a user gets after ``kafka-rescalable-compile-pyspark``
(:mod:`kafka_rescalable.pyspark_zip`) without changing the virtualenv the tests share: every
entry of the installed pyspark is linked, except ``python/lib/pyspark.zip``, which is the
compiled copy. ``SPARK_HOME`` pointing here makes the session's JVM (``spark-submit`` uses it)
put that archive first on the path of every Python process it starts, as Spark does with its
own.
"""

from __future__ import annotations

from pathlib import Path

from kafka_rescalable.pyspark_zip import compile_archive, pyspark_zip_path

__all__ = ["compiled_spark_home"]


def compiled_spark_home(root: Path) -> Path:
    """Build the linked Spark home under ``root``; return it (``SPARK_HOME``'s value)."""
    archive = pyspark_zip_path()
    installed = archive.parents[2]
    home = root / "spark-home"
    _link_all_but(installed, home, "python")
    _link_all_but(installed / "python", home / "python", "lib")
    _link_all_but(archive.parent, home / "python" / "lib", archive.name)
    compile_archive(archive, home / "python" / "lib" / archive.name)
    return home


def _link_all_but(source: Path, target: Path, kept: str) -> None:
    target.mkdir(parents=True)
    for entry in source.iterdir():
        if entry.name != kept:
            (target / entry.name).symlink_to(entry)
