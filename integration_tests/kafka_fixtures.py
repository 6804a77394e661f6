"""Pytest fixtures that give integration tests a real Kafka broker, wherever they run.

``kafka_bootstrap`` picks the first broker that is available, in this order:

1. ``$KAFKA_BOOTSTRAP_SERVERS``, a broker someone already runs (CI service, compose file);
2. a Testcontainers Kafka container, when a Docker engine answers;
3. :class:`connector.local_kafka.LocalKafka`, Kafka's own jars in a local JVM, which needs
   only Java.

A broker that cannot be started fails the test session: integration tests never skip, since a
suite that silently skips every broker test looks green while testing nothing.

Use with ``from integration_tests.kafka_fixtures import kafka_bootstrap, topic_name`` in a
``conftest.py``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from connector.local_kafka import LocalKafka

__all__ = ["BOOTSTRAP_ENV_VAR", "docker_answers", "kafka_bootstrap", "topic_name"]

BOOTSTRAP_ENV_VAR = "KAFKA_BOOTSTRAP_SERVERS"

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
