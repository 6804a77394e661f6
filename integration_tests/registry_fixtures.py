"""A pytest fixture that gives integration tests a real Confluent-compatible schema registry.

``schema_registry_url`` is the base URL for confluent-kafka's ``SchemaRegistryClient``:

1. ``$SCHEMA_REGISTRY_URL``, a registry someone already runs (a CI service, a compose file);
2. otherwise :class:`connector.testing.schema_registry.LocalSchemaRegistry`, Apicurio Registry
   in a local JVM, built once from Maven Central (which needs ``mvn`` the first time).

A registry that cannot be started fails the tests that use it, with the reason: integration
tests never skip. The registry starts only in a session that has such a test, and once.

Use with ``from integration_tests.registry_fixtures import schema_registry_url`` in a
``conftest.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from connector.testing.schema_registry import LocalSchemaRegistry

__all__ = ["SCHEMA_REGISTRY_ENV_VAR", "schema_registry_url"]

SCHEMA_REGISTRY_ENV_VAR = "SCHEMA_REGISTRY_URL"


@pytest.fixture(scope="session")
def schema_registry_url() -> Iterator[str]:
    """Yield the base URL of a schema registry shared by the whole session (see module doc).

    Tests share its subjects, so each names its own (from the ``topic_name`` fixture, say).
    """
    configured = os.environ.get(SCHEMA_REGISTRY_ENV_VAR, "").strip()
    if configured:
        yield configured.rstrip("/")
        return
    with LocalSchemaRegistry() as registry:
        yield registry.url
