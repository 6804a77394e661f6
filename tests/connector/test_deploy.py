"""``kafka-rescalable-pack``: what it packs (the archive itself is built by the cluster test).

Packing copies pyarrow (about 170 MB): integration_tests/test_cluster_deploy.py does it once,
through the guide's recipe, and runs a read with the result. Here only what decides the
content: which distributions, which files, and the settings printed for Spark.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from kafka_rescalable import EnvironmentPackError
from kafka_rescalable.deploy import (
    ARCHIVE_NAME,
    PackedEnvironment,
    _closure,
    _skipped,
    pack_environment,
)


def test_the_closure_is_the_package_and_its_run_time_requirements_without_spark() -> None:
    names = set(_closure("kafka-rescalable", frozenset()))
    assert {"kafka-rescalable", "confluent-kafka", "pyarrow"} <= names
    assert not {"pyspark", "py4j"} & names, "Spark gives every Python worker its own"
    assert "fastavro" not in names, "an extra's dependencies only when asked for"


def test_an_extra_adds_its_libraries() -> None:
    names = set(_closure("kafka-rescalable", frozenset({"avro"})))
    assert "fastavro" in names


def test_what_no_executor_imports_is_left_out() -> None:
    for kept in ("pyarrow/lib.cpython-311-x86_64-linux-gnu.so", "kafka_rescalable/source.py"):
        assert not _skipped(PurePosixPath(kept))
    for dropped in ("pyarrow/tests/test_io.py", "pyarrow/include/arrow/api.h", "x/__pycache__"):
        assert _skipped(PurePosixPath(dropped))


def test_the_spark_settings_name_the_archive_and_the_folder() -> None:
    packed = PackedEnvironment(Path("/jobs/env.tar.gz"), ("pyarrow==1",), "CPython 3.11")
    assert packed.spark_conf() == {
        "spark.archives": f"/jobs/env.tar.gz#{ARCHIVE_NAME}",
        "spark.executorEnv.PYTHONPATH": ARCHIVE_NAME,
    }


def test_a_requirement_that_is_not_installed_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kafka_rescalable.deploy._ROOT_DISTRIBUTION", "no-such-distribution-x")
    with pytest.raises(EnvironmentPackError, match="no-such-distribution-x is not installed"):
        pack_environment(Path("unused.tar.gz"))
