"""The driver's Kafka clients for planning, and the retry loop every lookup runs in.

Every lookup the driver makes (topic listings and descriptions in
:mod:`kafka_rescalable.driver.topic_lookups`, offsets in
:mod:`kafka_rescalable.driver.offset_lookups`) goes through :meth:`DriverConnection.retry`: a
lookup outside it would not ride through leader changes and broker restarts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final, TypeVar

from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.driver.kafka_errors import (
    authentication_failed,
    gave_up,
    is_retriable,
    kafka_error_of,
)
from kafka_rescalable.driver.offset_calls import SpreadCalls
from kafka_rescalable.errors import (
    KafkaAuthenticationError,
    KafkaAuthorizationError,
    KafkaMetadataError,
)
from kafka_rescalable.kafka_clients import ClientErrors, admin_client, driver_consumer, serve_events

__all__ = ["MAX_ATTEMPT_S", "DriverConnection"]

_T = TypeVar("_T")

MAX_ATTEMPT_S: Final = 5.0
"""How long the first attempt of a lookup may take; later attempts get longer."""

_MAX_BACKOFF_S: Final = 1.0


class DriverConnection:
    """A consumer (and an admin client, opened at the first need) that never subscribes.

    Every lookup rides through leader changes and broker restarts: a retriable error (see
    :func:`~kafka_rescalable.driver.kafka_errors.is_retriable`) is retried with a growing
    pause, after refreshing the cluster metadata or replacing the client, until
    ``fetchOffset.retryTimeout``; other errors are retried ``fetchOffset.numRetries`` times, as
    in Spark. An authentication failure is never retried.

    Not picklable on purpose: Spark ships readers to executors, and a live client must never
    travel with them.

    Parameters
    ----------
    options
        The source's options: the clients' settings, and the retry options.
    timeout_s
        How long the first attempt of a lookup may take.
    """

    def __init__(self, options: KafkaSourceOptions, timeout_s: float = MAX_ATTEMPT_S) -> None:
        self.options = options
        self.timeout_s = timeout_s
        self._errors = ClientErrors()
        self._consumer: Any = driver_consumer(options, self._errors)
        self._admin: Any = None
        self.spread = SpreadCalls(lambda: driver_consumer(options, self._errors))
        """Extra clients for the calls of one offset lookup (``offset_calls``)."""
        self._closed = False

    def close(self) -> None:
        """Close the clients and their connections; calling it again does nothing."""
        self._closed = True
        consumer, self._consumer = self._consumer, None
        self._admin = None  # an AdminClient closes when collected
        self.spread.close()
        if consumer is not None:
            consumer.close()

    def __getstate__(self) -> None:
        """Refuse pickling: a live Kafka client cannot be shipped to another process."""
        raise TypeError("KafkaMetadata holds a live Kafka client and cannot be pickled")

    def admin(self) -> Any:
        """Return the admin client, opened at the first call (and after a replacement)."""
        if self._admin is None:
            self._admin = admin_client(self.options, self._errors)
        return self._admin

    def retry(self, what: str | Callable[[], str], call: Callable[[Any, float], _T]) -> _T:
        """Run ``call(client, timeout)`` until it succeeds or the retries are spent.

        ``what`` (or what it returns, built only when the lookup fails: at 10,000 partitions
        naming the first few costs more than the lookup) completes "could not ...".

        Raises
        ------
        KafkaAuthenticationError
            When the brokers refuse the login twice in a row.
        KafkaAuthorizationError
            Raised by ``call``, never retried.
        KafkaMetadataError
            When the retries are spent, naming ``what``, the attempts and the last error.
        """
        options = self.options
        started = time.monotonic()
        deadline = started + options.fetch_offset_retry_timeout_ms / 1000
        pause = max(options.fetch_offset_retry_interval_ms / 1000, 0.01)
        attempts = other_failures = refused_logins = 0
        self._errors.clear()
        while True:
            attempts += 1
            client = self.client()
            remaining = deadline - time.monotonic()
            # A slow but healthy cluster gets longer each time, up to what is left.
            limit = self.timeout_s * min(2 ** (attempts - 1), 8)
            try:
                result = call(client, max(0.1, min(limit, remaining)))
            except (KafkaAuthorizationError, KafkaAuthenticationError):
                raise
            except Exception as exc:  # confluent-kafka raises KafkaException or plain errors
                serve_events(client)
                error = kafka_error_of(exc)
                refusal = self._errors.authentication
                if refusal is not None:
                    # Twice in a row: a broker just restarted may refuse a login for a moment;
                    # an OIDC provider that refused the client's secret will not change its mind.
                    refused_logins += 2 if self._errors.definitive else 1
                    if refused_logins >= 2:
                        raise authentication_failed(refusal, options) from exc
                else:
                    refused_logins = 0
                if not is_retriable(error) and refusal is None:
                    other_failures += 1
                now = time.monotonic()
                if now >= deadline or other_failures > options.fetch_offset_retries:
                    said = what() if callable(what) else what
                    raise gave_up(
                        options, self._errors.last, said, exc, error, attempts, now - started
                    ) from exc
                time.sleep(min(pause, max(0.0, deadline - now)))
                pause = min(pause * 2, _MAX_BACKOFF_S)
                self._renew(attempts, deadline)
                continue
            serve_events(client)
            return result

    def client(self) -> Any:
        """Return the live client; using a closed ``KafkaMetadata`` is a bug, said plainly."""
        if self._closed:
            raise KafkaMetadataError("this KafkaMetadata was closed; open a new one")
        if self._consumer is None:
            self._consumer = driver_consumer(self.options, self._errors)
        return self._consumer

    def _renew(self, attempt: int, deadline: float) -> None:
        """Make the next attempt see the cluster as it is now, not as it was.

        After a leader change the client's cached metadata names the old leader; refreshing
        it is enough most of the time, and every other time the client is replaced, since
        a client stuck on a dead connection can take long to notice a refresh.
        """
        self._errors.clear()
        self.spread.renew()  # opened again when next needed, with fresh metadata
        if attempt % 2:
            remaining = deadline - time.monotonic()
            if remaining > 0.1:
                try:
                    self.client().list_topics(timeout=min(self.timeout_s, 2.0, remaining))
                except Exception:  # noqa: BLE001 - a refresh that fails changes nothing
                    pass
            return
        consumer, self._consumer = self._consumer, None
        self._admin = None
        if consumer is not None:
            consumer.close()
