"""Fixtures shared by the integration tests: a real broker and a real Spark session.

The broker fixture lives in ``kafka_fixtures``; the Spark session here puts Spark's built-in
Kafka source (``spark-sql-kafka-0-10`` for the installed Spark, from Maven Central) on the
classpath, so tests can run it side by side with ours as the reference.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pyspark
import pytest
from pyspark.sql import SparkSession

from connector import KafkaSource
from integration_tests.kafka_fixtures import kafka_bootstrap, topic_name  # noqa: F401

SPARK_KAFKA_PACKAGE = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark everything here as an integration test, so ``-m 'not integration'`` works."""
    for item in items:
        if "integration_tests" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """One ``local[2]`` session for the whole run, with both Kafka sources available."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    warehouse = tmp_path_factory.mktemp("warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kafka-rescalable-tests")
        .config("spark.jars.packages", SPARK_KAFKA_PACKAGE)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("WARN")
    session.dataSource.register(KafkaSource)
    yield session
    session.stop()
