"""``--compiled-pyspark-zip``'s Spark home: pyspark's own, its archive compiled, nothing copied."""

from __future__ import annotations

from pathlib import Path

from benchmarks.compiled_spark_home import compiled_spark_home
from kafka_rescalable.pyspark_zip import bytecode_state, pyspark_zip_path


def test_the_home_links_pysparks_installation_and_compiles_only_its_archive(
    tmp_path: Path,
) -> None:
    installed = pyspark_zip_path()
    home = compiled_spark_home(tmp_path)
    archive = pyspark_zip_path(home)
    assert bytecode_state(archive).startswith("bytecode for this Python")
    assert not archive.is_symlink()
    assert bytecode_state(installed) == "sources only"
    spark_home = installed.parents[2]
    for linked in ("bin", "jars", "python/lib/" + next(installed.parent.glob("py4j-*.zip")).name):
        assert (home / linked).resolve() == (spark_home / linked).resolve()
    assert (home / "bin" / "spark-submit").is_file()
