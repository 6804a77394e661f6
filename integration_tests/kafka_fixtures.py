"""Pytest fixtures that give integration tests a real Kafka broker, wherever they run.

``kafka_bootstrap`` picks the first broker that is available, in this order:

1. ``$KAFKA_BOOTSTRAP_SERVERS``, a broker someone already runs (CI service, compose file);
2. a Testcontainers Kafka container, when a Docker engine answers;
3. :class:`kafka_rescalable.testing.local_kafka.LocalKafka`, Kafka's own jars in a local JVM, which
   needs
   only Java.

A broker that cannot be started fails the test session: integration tests never skip, since a
suite that silently skips every broker test looks green while testing nothing.

Use with ``from integration_tests.kafka_fixtures import kafka_bootstrap, topic_name`` in a
``conftest.py``.

Fault tests, which kill and restart brokers, use ``kafka_cluster`` instead: a real 3-node
:class:`kafka_rescalable.testing.LocalKafkaCluster`, one per test module, healed after every test.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from integration_tests.kafka_helpers import first_line
from kafka_rescalable.testing import LocalKafkaCluster
from kafka_rescalable.testing.local_kafka import LocalKafka

__all__ = [
    "BOOTSTRAP_ENV_VAR",
    "docker_answers",
    "kafka_bootstrap",
    "kafka_cluster",
    "kafka_cluster_for_module",
    "local_kafka_program",
    "topic_name",
]

BOOTSTRAP_ENV_VAR = "KAFKA_BOOTSTRAP_SERVERS"
_REPO_ROOT = Path(__file__).resolve().parent.parent

# The settings LocalKafka uses that tests may depend on, for the container broker too.
_CONTAINER_ENV = {
    "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_LOG_RETENTION_MS": "-1",
    "KAFKA_LOG_RETENTION_CHECK_INTERVAL_MS": "1000",
    "KAFKA_LOG_CLEANER_BACKOFF_MS": "500",
}


def docker_answers(timeout_s: float = 3.0) -> bool:
    """Return whether a Docker engine answers a ping within ``timeout_s`` seconds.

    Any failure (no SDK, no socket, a daemon that hangs, a permission error) means "no
    Docker": the caller then falls back to a local broker instead of failing.
    """
    try:
        from docker import DockerClient

        client = DockerClient.from_env(timeout=timeout_s)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # every kind of failure means the same here: no Docker
        return False


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """Bootstrap servers of a broker shared by the whole session (see the module doc)."""
    configured = os.environ.get(BOOTSTRAP_ENV_VAR, "").strip()
    if configured:
        yield configured
        return
    if docker_answers():
        try:
            from testcontainers.community.kafka import KafkaContainer
        except ImportError:  # testcontainers before 4.10 kept it here
            from testcontainers.kafka import KafkaContainer
        container = KafkaContainer()
        for name, value in _CONTAINER_ENV.items():
            container.with_env(name, value)
        with container:
            yield container.get_bootstrap_server()
        return
    with LocalKafka() as kafka:
        yield kafka.bootstrap_servers


@pytest.fixture
def topic_name() -> str:
    """Return a topic name no other test uses, so tests never see each other's records."""
    return f"t-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def kafka_cluster_for_module() -> Iterator[LocalKafkaCluster]:
    """Yield a 3-node :class:`LocalKafkaCluster` for one test module; see ``kafka_cluster``.

    Module-scoped so that a module of fault tests pays one start (some 8 s on two cores), and
    no more: a cluster per module keeps one module's damage (a deleted internal topic, a
    changed config) from reaching another.
    """
    with LocalKafkaCluster(brokers=3) as cluster:
        yield cluster


@pytest.fixture
def kafka_cluster(kafka_cluster_for_module: LocalKafkaCluster) -> Iterator[LocalKafkaCluster]:
    """Yield a real 3-node Kafka cluster for fault tests, every node up when the test starts.

    Nodes are ``1, 2, 3``; each is broker and controller. A test may ``kill``, ``stop_node``
    and ``restart`` nodes: whatever it leaves stopped is restarted after it (``heal``), so the
    next test of the module again starts on a whole, ready cluster. Topics default to 3
    replicas; set ``min.insync.replicas`` on a topic to make ``acks=all`` need more than the
    leader. Use ``kafka_cluster.bootstrap_servers`` (all three nodes) in clients and Spark
    options, so that they survive any single node going down.

    Use with ``from integration_tests.kafka_fixtures import kafka_cluster,
    kafka_cluster_for_module`` in a test module or a ``conftest.py``. It starts JVMs of its
    own even when ``$KAFKA_BOOTSTRAP_SERVERS`` names a broker: fault tests need nodes they can
    kill.
    """
    yield kafka_cluster_for_module
    kafka_cluster_for_module.heal()


@contextlib.contextmanager
def local_kafka_program(
    module: str, *arguments: str, ready_timeout_s: float
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Run ``python -m module arguments`` (the local broker's program); yield it and its first line.

    The program announces readiness on its first stdout line; the caller checks that line and
    signals the process. Whatever the test does, the process is killed on exit if it still runs.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", module, *arguments],
        cwd=_REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        yield process, first_line(process, timeout_s=ready_timeout_s)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
