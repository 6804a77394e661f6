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
from integration_tests.oidc_fixtures import oidc_kafka, start_oidc_install  # noqa: F401
from integration_tests.reference_source import builtin_kafka_source_jars, spark_avro_jars
from integration_tests.registry_fixtures import (  # noqa: F401
    schema_registry_url,
    start_registry_build,
)

# The JVMs of Spark's own processes that the tests start (the query processes, the examples,
# the Connect server) compile with C1 only: they live a minute or two on 2 shared cores, where
# C2's compiler threads cost more CPU than its faster code gives back (a Spark start and two
# small jobs: 15.5 s against 19.6 s alone; the sink kill test, five Spark starts: 220 s against
# 243-250 s). The session fixture's JVM, which runs the whole suite, keeps the default.
_SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1"
os.environ.setdefault("SPARK_SUBMIT_OPTS", _SHORT_LIVED_JVM)

# The suite runs on two pytest-xdist workers (``-n 2 --dist loadgroup``, pyproject.toml's
# addopts), each a process with session fixtures of its own: one broker, one Spark session.
# Tests go one by one to whichever worker is free, except a group, which runs whole on one
# worker: the tests of a module- or class-scoped broker, so that it starts once. The two
# modules of 3-node clusters share a group, so that two such clusters never run at once.
_XDIST_GROUPS = {
    "test_faults.py": "three-node-clusters",
    "test_local_cluster.py": "three-node-clusters",
    "test_security.py": "secured-broker",
    "test_oauthbearer.py": "oidc-broker",
    "test_local_kafka.py": "local-kafka",
}
# Modules whose tests take a minute or more (their own Spark processes, Spark clusters or a
# Connect server), longest first: they start first, so that no worker is left alone with one
# of them at the end while the other has nothing to do.
_LONGEST_FIRST = (
    "test_sink_faults.py",
    "test_connect.py",
    "test_sink_speculation.py",
    "test_cluster_deploy.py",
    "test_examples.py",
    "test_auto_parallelism.py",
    "test_by_name.py",
    "test_crash_recovery.py",
    "test_event_time.py",
    "test_oauthbearer.py",
)


def _start_rank(item: pytest.Item) -> int:
    name = item.path.name
    return _LONGEST_FIRST.index(name) if name in _LONGEST_FIRST else len(_LONGEST_FIRST)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark integration tests (so ``-m 'not integration'`` works), group them, longest first.

    ``tryfirst``: a pytest-xdist worker reads the ``xdist_group`` marks in its own hook of the
    same name, registered after this conftest is loaded and so called first: without it the
    worker read the marks before they were set, and ``--dist loadgroup`` sent a group's tests to
    both workers (two 3-node clusters at once). ``xdist_groups_applied`` makes that a failure.
    The sort is stable and by module, so every module's tests stay together and in order.
    """
    for item in items:
        if "integration_tests" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
            group = _XDIST_GROUPS.get(item.path.name)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=_start_rank)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start what slow set-up the selected tests will need (the registry's build, Keycloak's)."""
    start_registry_build(session.items)
    start_oidc_install(session.items)


@pytest.fixture(scope="session", autouse=True)
def xdist_groups_applied(request: pytest.FixtureRequest) -> None:
    """Fail every integration test when pytest-xdist did not apply the ``xdist_group`` marks.

    A worker applies a group by appending ``@group`` to the test's id; when it cannot (pytest
    9.2 moved the id where pytest-xdist 3.8 does not reach it) the tests run anyway, spread
    over both workers, slower and flakier, and nothing says so. A fixture, not a collection
    hook, so that the message reaches the report instead of an xdist internal error.
    """
    session = request.session
    # Only an xdist worker applies groups, and has the option; ``-n 0`` runs in one process.
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        mark = item.get_closest_marker("xdist_group")
        if mark is not None and not item.nodeid.endswith(f"@{mark.args[0]}"):
            msg = (
                f"pytest-xdist did not apply the group {mark.args[0]!r} to {item.nodeid}: "
                "install the pytest and pytest-xdist versions pyproject.toml's test extra pins"
            )
            raise AssertionError(msg)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """One ``local[2]`` session for the whole run: both Kafka sources, and ``from_avro``."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    warehouse = tmp_path_factory.mktemp("warehouse")
    # This JVM runs for the whole suite: full JIT, unless the runner chose other options.
    ours = os.environ.get("SPARK_SUBMIT_OPTS") == _SHORT_LIVED_JVM
    if ours:
        del os.environ["SPARK_SUBMIT_OPTS"]
    try:
        session = _session(warehouse)
    finally:
        if ours:
            os.environ["SPARK_SUBMIT_OPTS"] = _SHORT_LIVED_JVM
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


def _session(warehouse: object) -> SparkSession:
    return (
        SparkSession.builder.master("local[2]")
        .appName("kafka-rescalable-tests")
        # Spark's own Avro functions too: from_avro is the reference our Avro rows are held to.
        .config(
            "spark.jars",
            ",".join(str(jar) for jar in [*builtin_kafka_source_jars(), *spark_avro_jars()]),
        )
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.ui.enabled", "true")  # parallelism=auto reads cores from its REST API
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
