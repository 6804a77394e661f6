"""A broker that signs clients in with SASL/OAUTHBEARER tokens of a real OIDC provider.

:func:`oidc_kafka` starts Keycloak
(:class:`kafka_rescalable.testing.oidc_provider.LocalOidcProvider`) with two
client-credentials clients and a short token lifespan, then one broker whose
``SASL_PLAINTEXT`` listener takes only OAUTHBEARER and checks every token's signature and
expiry against Keycloak's JWKS; ``connections.max.reauth.ms`` makes the broker close a
connection whose session outlives it without signing in again, so a query that runs longer
than a token lives must renew its tokens. Set-up (topics) and checks go over the PLAINTEXT
listener.

Keycloak's first install (a download and a build, about a minute and a half) starts in the
background when collection ends (:func:`start_oidc_install`), as the registry's build does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest

from kafka_rescalable.testing import LocalKafkaCluster
from kafka_rescalable.testing._broker.config import CLUSTER_JVM_OPTIONS
from kafka_rescalable.testing._keycloak import keycloak_home
from kafka_rescalable.testing.oidc_provider import LocalOidcProvider
from kafka_rescalable.testing.security import SecurityConfig

__all__ = ["OidcKafka", "oidc_kafka", "start_oidc_install"]

READER = "spark-reader"
READER_SECRET = "reader-Secret-7c41e"  # noqa: S105 - a test secret, grepped for in outputs
PROVIDED = "spark-provided"
PROVIDED_SECRET = "provided-Secret-93d0a"  # noqa: S105
TOKEN_LIFESPAN_S = 15
"""Short, so that a query of half a minute outlives two tokens."""
REAUTH_MS = 10_000
"""The broker's ``connections.max.reauth.ms``: a session lasts at most this, or its token."""

_installs: list[threading.Thread] = []


def start_oidc_install(items: Sequence[pytest.Item]) -> None:
    """Download and build Keycloak in the background when a collected test needs it."""
    if _installs or not any("oidc_kafka" in getattr(i, "fixturenames", ()) for i in items):
        return
    install = threading.Thread(target=_install_quietly, name="keycloak-install", daemon=True)
    _installs.append(install)
    install.start()


def _install_quietly() -> None:
    try:
        keycloak_home()
    except Exception:  # noqa: BLE001, S110 - the fixture installs again and reports it
        pass


@dataclass(frozen=True)
class OidcKafka:
    """The provider and the broker, with the source options that sign in through them."""

    idp: LocalOidcProvider
    cluster: LocalKafkaCluster

    @property
    def plaintext(self) -> str:
        """The PLAINTEXT listener, for set-up and checks."""
        return self.cluster.bootstrap_for("PLAINTEXT")

    def oidc_options(self, secret: str = READER_SECRET) -> dict[str, str]:
        """Options that sign in with librdkafka's own OIDC client-credentials flow."""
        return {
            "kafka.bootstrap.servers": self.cluster.bootstrap_for("SASL_PLAINTEXT"),
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "OAUTHBEARER",
            "kafka.sasl.oauthbearer.method": "oidc",
            "kafka.sasl.oauthbearer.token.endpoint.url": self.idp.token_endpoint_url,
            "kafka.sasl.oauthbearer.client.id": READER,
            "kafka.sasl.oauthbearer.client.secret": secret,
        }

    def provider_options(self, provider: str, secret_file: str, calls_file: str) -> dict[str, str]:
        """Options that sign in with tokens from a ``kafkaTokenProvider``."""
        config = (
            f"tokenUrl={self.idp.token_endpoint_url} clientId={PROVIDED} "
            f"secretFile={secret_file} calls={calls_file}"
        )
        return {
            "kafka.bootstrap.servers": self.cluster.bootstrap_for("SASL_PLAINTEXT"),
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "OAUTHBEARER",
            "kafka.sasl.oauthbearer.config": config,
            "kafkaTokenProvider": provider,
        }


@pytest.fixture(scope="module")
def oidc_kafka() -> Iterator[OidcKafka]:
    """Keycloak, then one broker validating its tokens; both stop with the module."""
    for install in _installs:
        install.join()  # the cache's lock is per process: wait for the background install
    clients = {READER: READER_SECRET, PROVIDED: PROVIDED_SECRET}
    with LocalOidcProvider(clients, token_lifespan_s=TOKEN_LIFESPAN_S) as idp:
        security = SecurityConfig(
            listeners=("SASL_PLAINTEXT",), mechanisms=("OAUTHBEARER",), jwks_url=idp.jwks_url
        )
        cluster = LocalKafkaCluster(
            brokers=1,
            security=security,
            jvm_options=(*CLUSTER_JVM_OPTIONS, *security.jvm_options()),
            extra_properties={"connections.max.reauth.ms": str(REAUTH_MS)},
        )
        with cluster:
            yield OidcKafka(idp, cluster)
