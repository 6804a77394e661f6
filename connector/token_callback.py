"""A ``kafkaTokenProvider`` as confluent-kafka's ``oauth_cb``, and its failures as our error.

confluent-kafka calls ``oauth_cb`` with the ``sasl.oauthbearer.config`` string when a client
is created (it waits up to 10 s for a token) and again in the background before the token
expires. What the provider raises does not come back to the caller: a client created with a
failing provider raises a bare "OAuth token not set" error, and a failed renewal reaches only
the client's ``error_cb`` as "OAuth callback raised exception". So :class:`TokenCallback`
keeps the provider's last failure, logs it naming the provider, and :func:`open_client` turns
a client that could not be created because of it into :class:`TokenProviderError`.

A client's settings carry the :class:`~kafka_rescalable.config.token_provider.TokenProvider`
value under ``oauth_cb`` (picklable, comparable: the executors' consumer pool keys on the
settings); :func:`open_client` puts the callable in its place when the client is made.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

from kafka_rescalable._logging import logger
from kafka_rescalable.config.token_provider import OPTION, TokenProvider
from kafka_rescalable.errors import TokenProviderError

__all__ = ["TokenCallback", "open_client"]

_CALLBACK: Final = "oauth_cb"
_MILLISECONDS: Final = 1e11
"""An expiry above this is in milliseconds (year 5138 in seconds): a common slip."""

_CONTRACT: Final = (
    "it must return (token, expiry) or (token, expiry, principal, extensions), with expiry "
    "in seconds since the epoch (time.time() + lifetime)"
)


class TokenCallback:
    """Call a token provider for confluent-kafka and remember why it last failed.

    Parameters
    ----------
    provider
        Where the provider lives; it is imported here, in the process that opens the client.

    Raises
    ------
    TokenProviderError
        If the provider cannot be imported in this process (an executor it was not shipped to).
    """

    def __init__(self, provider: TokenProvider) -> None:
        self.provider = provider
        try:
            self._function = provider.load()
        except (ImportError, AttributeError, TypeError) as error:
            msg = (
                f"token provider {provider} ('{OPTION}') cannot be loaded in this Python "
                f"worker: {error}. Ship its module to the executors like the job's other Python "
                "code (--py-files, or the packed environment; see the deployment page)"
            )
            raise TokenProviderError(msg) from error
        self._lock = threading.Lock()
        self._failure: BaseException | None = None

    @property
    def failure(self) -> BaseException | None:
        """What the last call raised; ``None`` once a call succeeded."""
        with self._lock:
            return self._failure

    def __call__(self, config: str) -> tuple[Any, ...]:
        """Return the provider's token for ``config``, checked; record and log a failure."""
        try:
            result = _checked(self.provider, self._function(config))
        except Exception as error:
            with self._lock:
                self._failure = error
            logger.error(
                "token provider %s ('%s') failed: %s: %s",
                self.provider,
                OPTION,
                type(error).__name__,
                error,
            )
            raise
        with self._lock:
            self._failure = None
        return result


def _checked(provider: TokenProvider, result: Any) -> tuple[Any, ...]:
    if not isinstance(result, tuple) or len(result) not in (2, 4):
        msg = f"token provider {provider} returned a {type(result).__name__}; {_CONTRACT}"
        raise TokenProviderError(msg)
    token, expiry = result[0], result[1]
    if not isinstance(token, str) or not token:
        msg = f"token provider {provider} returned an empty or non-text token; {_CONTRACT}"
        raise TokenProviderError(msg)
    if not isinstance(expiry, int | float) or not math.isfinite(expiry):
        msg = f"token provider {provider} returned expiry {expiry!r}; {_CONTRACT}"
        raise TokenProviderError(msg)
    if expiry > _MILLISECONDS:
        msg = (
            f"token provider {provider} returned expiry {expiry!r}, which looks like "
            f"milliseconds; {_CONTRACT}"
        )
        raise TokenProviderError(msg)
    return result


def open_client(factory: Callable[[dict[str, Any]], Any], config: Mapping[str, Any]) -> Any:
    """Create a confluent-kafka client, its token provider (if any) made a callback.

    Raises
    ------
    TokenProviderError
        When the client could not be created because the provider failed, naming the
        provider, with its exception as the cause.
    """
    provider = config.get(_CALLBACK)
    if not isinstance(provider, TokenProvider):
        return factory(dict(config))
    callback = TokenCallback(provider)
    try:
        return factory({**config, _CALLBACK: callback})
    except Exception as error:
        cause = callback.failure
        if cause is None:
            raise
        if isinstance(cause, TokenProviderError):
            raise TokenProviderError(f"{cause}. Kafka's client said: {error}") from cause
        msg = (
            f"token provider {provider} ('{OPTION}') gave no token: {type(cause).__name__}: "
            f"{cause}. Kafka's client said: {error}"
        )
        raise TokenProviderError(msg) from cause
