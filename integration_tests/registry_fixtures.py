"""A pytest fixture that gives integration tests a real Confluent-compatible schema registry.

``schema_registry_url`` is the base URL for confluent-kafka's ``SchemaRegistryClient``:

1. ``$SCHEMA_REGISTRY_URL``, a registry someone already runs (a CI service, a compose file);
2. otherwise :class:`kafka_rescalable.testing.schema_registry.LocalSchemaRegistry`, Apicurio
   Registry
   in a local JVM, built once from Maven Central (which needs ``mvn`` the first time).

A registry that cannot be started fails the tests that use it, with the reason: integration
tests never skip. The registry starts only in a session that has such a test, and once.

Use with ``from integration_tests.registry_fixtures import schema_registry_url`` in a
``conftest.py``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence

import pytest

from kafka_rescalable.testing._registry.build import registry_app
from kafka_rescalable.testing.schema_registry import LocalSchemaRegistry

__all__ = ["SCHEMA_REGISTRY_ENV_VAR", "schema_registry_url", "start_registry_build"]

SCHEMA_REGISTRY_ENV_VAR = "SCHEMA_REGISTRY_URL"

_builds: list[threading.Thread] = []


def start_registry_build(items: Sequence[pytest.Item]) -> None:
    """Build the local registry in the background when a collected test will need it.

    On a clean machine the build (Maven, about 2 minutes) would otherwise hold up the first
    test that asks for the registry; started when collection ends, it runs while the unit
    tests and the first integration tests do, which leave most of the CPU idle. A failed
    build is not reported here: the fixture builds again and fails with the reason.
    """
    if os.environ.get(SCHEMA_REGISTRY_ENV_VAR, "").strip() or _builds:
        return
    if not any("schema_registry_url" in getattr(item, "fixturenames", ()) for item in items):
        return
    build = threading.Thread(target=_build_quietly, name="registry-build", daemon=True)
    _builds.append(build)
    build.start()


def _build_quietly() -> None:
    try:
        registry_app()
    except Exception:  # noqa: BLE001, S110 - the fixture's own build reports it
        pass


@pytest.fixture(scope="session")
def schema_registry_url() -> Iterator[str]:
    """Yield the base URL of a schema registry shared by the whole session (see module doc).

    Tests share its subjects, so each names its own (from the ``topic_name`` fixture, say).
    """
    configured = os.environ.get(SCHEMA_REGISTRY_ENV_VAR, "").strip()
    if configured:
        yield configured.rstrip("/")
        return
    for build in _builds:
        # The cache's lock is a process lock, which threads of one process share: wait for
        # the background build instead of starting a second one beside it.
        build.join()
    with LocalSchemaRegistry() as registry:
        yield registry.url
