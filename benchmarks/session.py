"""The one Spark session every Spark benchmark runs in, and the names of the two Kafka sources.

Whole queries, running queries and the memory benchmark's query process all start their
session here, so that every contender of every benchmark sees the same settings: ``local[2]``,
Spark's built-in Kafka source on the jars (from Maven Central, as the integration tests get
it), ours and the Python-source ceiling registered.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["BUILTIN", "OURS", "SESSION_CONFIG", "compile_our_package", "spark_session"]

OURS = "kafka-rescalable"
BUILTIN = "kafka"

SESSION_CONFIG: Mapping[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "4g",
    "spark.sql.streaming.numRecentProgressUpdates": "1000",
}
"""Settings of the one session every contender runs in (``local[2]`` and the jars come on top)."""


def spark_session(
    warehouse: Path,
    extra_config: Mapping[str, str] | None = None,
    extra_jars: Sequence[Path] = (),
):
    """Start the ``local[2]`` session: ours and the ceiling registered, the built-in on the jars.

    ``extra_config`` adds Spark settings to :data:`SESSION_CONFIG` (or overrides them);
    ``extra_jars`` go on ``spark.jars`` after the built-in source's.

    The Python workers inherit this process's environment; the repository root goes on their
    ``PYTHONPATH`` so that they can import the benchmarks' own sources (the ceiling, the task
    floor), which are not installed. Our package is byte-compiled first
    (:func:`compile_our_package`).
    """
    compile_our_package()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    root = str(Path(__file__).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    )
    from pyspark.sql import SparkSession

    from benchmarks.whole_queries.ceiling_source import CeilingSource
    from integration_tests.reference_source import builtin_kafka_source_jars
    from kafka_rescalable import KafkaSource

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("kafka-rescalable-benchmarks")
        .config(
            "spark.jars",
            ",".join(str(jar) for jar in [*builtin_kafka_source_jars(), *extra_jars]),
        )
        .config("spark.sql.warehouse.dir", str(warehouse))
    )
    for key, value in {**SESSION_CONFIG, **(extra_config or {})}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    session.dataSource.register(KafkaSource)
    session.dataSource.register(CeilingSource)
    return session


def compile_our_package() -> None:
    """Write the bytecode cache of our package's modules, as pip does when it installs a wheel.

    The benchmarks run an editable install, which pip does not compile, and where
    ``PYTHONDONTWRITEBYTECODE`` is set (this machine sets it) Python never writes the cache
    itself: every Python process Spark starts (the streaming source's process of each query,
    each new worker) would compile our 80-odd modules again, some 0.07 s, which an installed
    wheel never costs. pyspark and the other dependencies are wheels, compiled at install.
    """
    import compileall

    import kafka_rescalable

    for folder in kafka_rescalable.__path__:
        compileall.compile_dir(folder, quiet=1)
