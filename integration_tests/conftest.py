"""Fixtures shared by the integration tests: a real broker and a real Spark session.

The broker fixture lives in ``kafka_fixtures``; the Spark session here puts Spark's built-in
Kafka source (``spark-sql-kafka-0-10`` from Maven Central, see ``reference_source``) on the
classpath, so tests can run it side by side with ours as the reference. Ours is not
registered by hand: the checkout is installed (the README's ``pip install``), so PySpark finds
``kafka-rescalable`` by name through ``pyspark_kafka_rescalable``, as in a user's session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from integration_tests.kafka_fixtures import kafka_bootstrap, topic_name  # noqa: F401
from integration_tests.reference_source import builtin_kafka_source_jars
from integration_tests.registry_fixtures import (  # noqa: F401
    schema_registry_url,
    start_registry_build,
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark everything here as an integration test, so ``-m 'not integration'`` works."""
    for item in items:
        if "integration_tests" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start what slow set-up the selected tests will need (see ``start_registry_build``)."""
    start_registry_build(session.items)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """One ``local[2]`` session for the whole run, with both Kafka sources available."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    warehouse = tmp_path_factory.mktemp("warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kafka-rescalable-tests")
        .config("spark.jars", ",".join(str(jar) for jar in builtin_kafka_source_jars()))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.ui.enabled", "true")  # parallelism=auto reads cores from its REST API
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()
