"""Build the spark-protobuf jar that ``--spark-protobuf-jar`` wants, from Spark's own sources.

Maven Central (as reached from this project's machines) has no ``spark-protobuf`` artifact, so
the typed benchmark cannot fetch ``from_protobuf`` the way it fetches ``from_avro``. Spark's
``connector/protobuf`` module is a handful of Scala files; this compiles them with the Scala
compiler pyspark itself ships (``pyspark/jars/scala-compiler-*.jar``) against pyspark's jars
and protobuf-java from Maven Central, and packs the classes and the module's resources::

    git clone --depth 1 --branch v4.3.0 https://github.com/apache/spark /tmp/spark
    .venv/bin/python -m benchmarks.spark_protobuf_jar /tmp/spark --out /tmp/spark-protobuf.jar
    .venv/bin/python -m benchmarks.run --only typed --spark-protobuf-jar /tmp/spark-protobuf.jar

Take the sources of the Spark version pyspark is (the internal APIs they call change between
versions). The jar is not shaded, unlike Spark's release: protobuf-java and
protobuf-java-util must sit beside it on ``spark.jars``, which the benchmark does
(:data:`~benchmarks.whole_queries.typed_contenders.PROTOBUF_JAVA`). Compiling takes under
half a minute on two cores.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MODULE", "SparkSourcesError", "build_jar", "main", "module_sources"]

MODULE = Path("connector/protobuf/src/main")
"""Where spark-protobuf's sources sit in a Spark checkout."""


class SparkSourcesError(ValueError):
    """The folder given is not a Spark checkout with the protobuf connector's sources."""


def module_sources(spark_checkout: Path) -> tuple[list[Path], Path | None]:
    """Return the module's Scala files, sorted, and its resources folder (if it has one).

    Raises
    ------
    SparkSourcesError
        If ``spark_checkout`` holds no Scala file under :data:`MODULE`.
    """
    module = spark_checkout / MODULE
    scala = sorted((module / "scala").rglob("*.scala"))
    if not scala:
        msg = (
            f"{spark_checkout} has no Scala sources under {MODULE}/scala: give the root of a "
            "checkout of apache/spark at the version of the installed pyspark"
        )
        raise SparkSourcesError(msg)
    resources = module / "resources"
    return scala, resources if resources.is_dir() else None


def build_jar(spark_checkout: Path, out: Path) -> Path:
    """Compile the module with pyspark's Scala compiler and write the jar to ``out``."""
    import pyspark

    from benchmarks.whole_queries.typed_contenders import PROTOBUF_JAVA
    from kafka_rescalable.testing.jars import find_java, resolve_jars

    scala, resources = module_sources(spark_checkout)
    pyspark_jars = sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    compiler = [
        j
        for j in pyspark_jars
        if j.name.startswith(("scala-compiler", "scala-library", "scala-reflect"))
    ]
    classpath = [*resolve_jars(PROTOBUF_JAVA, transitive=False), *pyspark_jars]
    with tempfile.TemporaryDirectory(prefix="spark-protobuf-") as scratch:
        classes = Path(scratch)
        command = [
            find_java(),
            "-cp",
            ":".join(map(str, compiler)),
            "scala.tools.nsc.Main",
            "-release",
            "17",
            "-classpath",
            ":".join(map(str, classpath)),
            "-d",
            str(classes),
            *map(str, scala),
        ]
        subprocess.run(command, check=True)
        if resources is not None:
            shutil.copytree(resources, classes, dirs_exist_ok=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as jar:
            for path in sorted(classes.rglob("*")):
                if path.is_file():
                    jar.write(path, path.relative_to(classes).as_posix())
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m benchmarks.spark_protobuf_jar SPARK_CHECKOUT --out JAR``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("spark_checkout", type=Path, help="root of an apache/spark checkout")
    parser.add_argument("--out", type=Path, default=Path("spark-protobuf.jar"))
    args = parser.parse_args(argv)
    try:
        jar = build_jar(args.spark_checkout, args.out)
    except SparkSourcesError as error:
        print(error, file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as error:
        print(f"the Scala compiler failed (exit {error.returncode}): see above", file=sys.stderr)
        return 1
    print(f"built {jar}: pass it as --spark-protobuf-jar")
    return 0


if __name__ == "__main__":
    sys.exit(main())
