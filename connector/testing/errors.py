"""The errors of the development tools: jar resolution, local brokers, registry, OIDC provider.

They are not the source's errors (a Spark query never raises them), so they live beside the
tools; they still derive from :class:`kafka_rescalable.state.errors.KafkaRescalableError`, the
library's one
root, so ``except KafkaRescalableError`` catches them too.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_rescalable.state.errors import KafkaRescalableError

__all__ = [
    "BrokerStartError",
    "JarResolutionError",
    "OidcProviderStartError",
    "SchemaRegistryBuildError",
    "SchemaRegistryStartError",
    "ToolRunError",
]


class JarResolutionError(KafkaRescalableError):
    """Maven artifacts could not be downloaded (no network, unknown coordinate, no Java).

    Parameters
    ----------
    message
        What failed, followed by the last lines the resolver printed.
    output_tail
        Those last lines alone, kept for callers that want to show them differently.
    """

    def __init__(self, message: str, output_tail: str = "") -> None:
        self.output_tail = output_tail
        super().__init__(message)


class ToolRunError(KafkaRescalableError):
    """A program the tools ran failed: a broker, the schema registry, or its build.

    Parameters
    ----------
    message
        What failed, the command, and the last lines of the program's log or output.
    log_tail
        Those last lines alone, kept for callers that want to show them differently.
    command
        The command that was run, empty when none could be.
    """

    def __init__(self, message: str, log_tail: str = "", command: Sequence[str] = ()) -> None:
        self.log_tail = log_tail
        self.command = tuple(command)
        super().__init__(message)


class BrokerStartError(ToolRunError):
    """The local broker could not be formatted or started, or did not answer in time."""


class SchemaRegistryBuildError(ToolRunError):
    """The local schema registry could not be built (no Maven, no network, a failed build)."""


class SchemaRegistryStartError(ToolRunError):
    """The local schema registry exited during startup, or its API did not answer in time."""


class OidcProviderStartError(ToolRunError):
    """The local OpenID Connect provider (Keycloak) could not be downloaded, built or started."""
