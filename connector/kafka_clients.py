"""Every Kafka client the connector opens is built here, so the defaults live in one place.

Four roles use Kafka: the driver's metadata client (a consumer that never fetches, plus an
admin client for topic ids and the committed offsets ``startingOffsetsFromGroup`` reads), the
event-time probe, the group committer of ``commitOffsetsToGroup``, and the executors' range
readers. They share the user's ``kafka.*``
settings and three defaults of ours:

- ``isolation.level`` is ``read_uncommitted`` unless set, as in Kafka's Java client and so in
  Spark; librdkafka alone would default to ``read_committed``.
- librdkafka's log lines go through the connector's logger (``kafka_rescalable.librdkafka``) with
  repeats rate-limited, instead of librdkafka printing straight to stderr: during a broker
  outage it prints a "Connection refused" line for every reconnect, dozens a second.
- client errors are recorded (``error_cb``), so an authentication failure, which librdkafka
  reports only there, becomes our error naming it instead of a bare "transport failure".

Logs and error callbacks reach Python only when a client is polled; :func:`serve_events` does
that for clients that never fetch.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Final

from kafka_rescalable._logging import logger
from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.consumer_pool import IDLE_TIMEOUT_S, Loan, process_pool
from kafka_rescalable.token_callback import open_client

__all__ = [
    "ClientErrors",
    "admin_client",
    "driver_consumer",
    "executor_config",
    "executor_consumer",
    "group_committer",
    "lend_executor_consumer",
    "librdkafka_logger",
    "probe_consumer",
    "serve_events",
    "sink_marker_consumer",
    "sink_producer",
]

_LOG_REPEAT_WINDOW_S: Final = 30.0
"""A librdkafka line like one already logged in this window is counted, not printed."""

_AUTHENTICATION_CODES: Final = frozenset({-169, 58})
"""``_AUTHENTICATION`` and ``SASL_AUTHENTICATION_FAILED``."""

_SSL: Final = -181
_CERTIFICATE = re.compile(r"certificate|verify", re.IGNORECASE)
"""An ``_SSL`` error about certificates will not pass by itself; a handshake cut by a broker
going down will."""


_PROVIDER_REFUSAL = re.compile(
    r'"error"\s*:\s*"(invalid_client|unauthorized_client|invalid_grant|invalid_scope'
    r'|invalid_request|unsupported_grant_type)"'
)
"""An OIDC token endpoint's own refusal (RFC 6749, section 5.2: a wrong client secret, an
unknown client or scope), which librdkafka quotes in its error. Waiting does not change it,
unlike an unreachable provider or a broker that just restarted."""


@dataclass
class ClientErrors:
    """The errors librdkafka reported through ``error_cb`` for one client.

    librdkafka reports broker-level problems (connection refused, authentication failed, all
    brokers down) through this callback, not through the call that then times out; keeping
    the latest one lets a failing call say why it failed.
    """

    last: Any = None
    authentication: Any = None
    definitive: bool = False
    """Whether ``authentication`` is an OIDC provider's refusal of the client: final at once."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, error: Any) -> None:
        """Record ``error`` (librdkafka's ``error_cb``)."""
        with self._lock:
            self.last = error
            code = error.code()
            if code in _AUTHENTICATION_CODES or (code == _SSL and _CERTIFICATE.search(error.str())):
                self.authentication = error
                self.definitive = _PROVIDER_REFUSAL.search(error.str()) is not None

    def clear(self) -> None:
        """Forget what was recorded: a broker that restarts may refuse logins for a moment."""
        with self._lock:
            self.last = None
            self.authentication = None
            self.definitive = False


class _RepeatFilter(logging.Filter):
    """Let a librdkafka line through once per window; count the repeats and report them.

    Lines are alike when they differ only in numbers ("after 0ms", "12 identical errors"),
    so a broker that refuses connections twenty times a second costs one line per window.
    """

    _NUMBERS = re.compile(r"\d+")
    # librdkafka's own count of repeats, which would make every repeat look new.
    _SUPPRESSED = re.compile(r",? \d+ identical error\(s\) suppressed")

    def __init__(self, window_s: float = _LOG_REPEAT_WINDOW_S) -> None:
        super().__init__()
        self._window_s = window_s
        self._seen: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """Pass the first line of its kind in a window, with the count of those held back."""
        text = record.getMessage()
        key = self._NUMBERS.sub("#", self._SUPPRESSED.sub("", text))
        now = time.monotonic()
        with self._lock:
            first, held = self._seen.get(key, (0.0, 0))
            if first and now - first < self._window_s:
                self._seen[key] = (first, held + 1)
                return False
            self._seen[key] = (now, 0)
            if len(self._seen) > 1000:  # a bound, should lines vary in more than numbers
                self._seen = {key: (now, 0)}
        if held:
            record.msg = f"{text} ({held} similar lines in the last {self._window_s:.0f} s)"
            record.args = None
        return True


def _make_librdkafka_logger() -> logging.Logger:
    log = logger.getChild("librdkafka")
    log.addFilter(_RepeatFilter())
    return log


librdkafka_logger: Final = _make_librdkafka_logger()
"""Where librdkafka's own log lines go: a child of the connector's logger, rate-limited."""


def _common(options: KafkaSourceOptions) -> dict[str, Any]:
    common: dict[str, Any] = {
        "isolation.level": "read_uncommitted",
        **options.kafka_settings,
        "bootstrap.servers": options.bootstrap_servers,
    }
    if options.token_provider is not None:
        # The provider's path, not a function: it is pickled to the executors and keys the
        # consumer pool; open_client makes it confluent-kafka's oauth_cb.
        common["oauth_cb"] = options.token_provider
    return common


def driver_consumer(options: KafkaSourceOptions, errors: ClientErrors) -> Any:
    """Open a consumer for metadata and offset lookups: it never subscribes, fetches or commits."""
    from confluent_kafka import Consumer

    return open_client(
        Consumer,
        {
            **_common(options),
            # Spark's built-in source also names its driver consumer's group "...-driver".
            "group.id": options.group_id or f"{options.group_id_prefix}-{uuid.uuid4()}-driver",
            "enable.auto.commit": False,
            "logger": librdkafka_logger,
            "error_cb": errors,
        },
    )


def admin_client(options: KafkaSourceOptions, errors: ClientErrors) -> Any:
    """Open an admin client for topic descriptions (topic ids), with the driver's settings."""
    from confluent_kafka.admin import AdminClient

    config = {
        key: value
        for key, value in _common(options).items()
        if key not in ("isolation.level",) and not key.startswith("fetch.")
    }
    config.update({"logger": librdkafka_logger, "error_cb": errors})
    return open_client(AdminClient, config)


def probe_consumer(options: KafkaSourceOptions, fetch_wait_ms: int | None = None) -> Any:
    """Open a consumer for the driver's probes: event times and record sizes.

    The event-time probe reads a few records per partition; the size probe of
    ``maxBytesPerTrigger`` about the records a batch admits, in a few rounds that each end at
    a partition's end of log: ``fetch_wait_ms`` then shortens the broker's wait on a fetch
    with nothing new (``fetch.wait.max.ms``, 500 ms by default), which each round would pay.

    It belongs to the query's driver group, not a fresh executor group per batch.
    """
    from confluent_kafka import Consumer

    return open_client(
        Consumer,
        {
            **_common(options),
            "group.id": options.group_id or f"{options.group_id_prefix}-probe-driver",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",  # a probe only: a deleted record is no error here
            "logger": librdkafka_logger,
            **({} if fetch_wait_ms is None else {"fetch.wait.max.ms": fetch_wait_ms}),
        },
    )


def group_committer(options: KafkaSourceOptions, group: str) -> Any:
    """Open a consumer that never subscribes: it only commits offsets for ``group``."""
    from confluent_kafka import Consumer

    return open_client(
        Consumer,
        {
            **_common(options),
            "group.id": group,
            "enable.auto.commit": False,
            "logger": librdkafka_logger,
        },
    )


def executor_config(options: KafkaSourceOptions) -> dict[str, Any]:
    """Return the executors' consumer settings: picklable (no logger), shipped with the reader.

    The group id follows Spark's naming for generated groups; executors only ``assign()``, so
    the group never forms and nothing is committed to it.
    """
    return {
        **_common(options),
        "group.id": options.group_id or f"{options.group_id_prefix}-{uuid.uuid4()}-executor",
    }


def executor_consumer(
    errors: ClientErrors, config: Mapping[str, Any], overrides: Mapping[str, Any]
) -> Any:
    """Open an executor's range-reading consumer, ``config`` from :func:`executor_config`."""
    from confluent_kafka import Consumer

    return open_client(
        Consumer, {**config, **overrides, "logger": librdkafka_logger, "error_cb": errors}
    )


def lend_executor_consumer(
    config: Mapping[str, Any],
    overrides: Mapping[str, Any],
    idle_timeout_s: float = IDLE_TIMEOUT_S,
) -> AbstractContextManager[Loan]:
    """Lend a range-reading consumer from this worker's pool for a ``with`` block.

    The only way executors get a consumer: one built by :func:`executor_consumer` for the same
    ``config`` and ``overrides`` when an earlier task of this Python worker returned one, else
    a new one. The borrower assigns partitions with explicit offsets; see
    :mod:`kafka_rescalable.consumer_pool` for when a consumer is closed instead of kept.
    """
    return process_pool(_open_executor_consumer).lend({**config, **overrides}, idle_timeout_s)


def _open_executor_consumer(config: Mapping[str, Any]) -> tuple[Any, ClientErrors]:
    errors = ClientErrors()
    return executor_consumer(errors, config, {}), errors


def serve_events(client: Any) -> None:
    """Deliver a client's queued log lines and error callbacks without fetching anything.

    Only for clients that are never assigned partitions, where ``poll(0)`` returns no record.
    """
    if client is not None:
        client.poll(0)


def sink_producer(
    bootstrap_servers: str,
    settings: Mapping[str, Any],
    errors: ClientErrors,
    on_delivery: Any,
    transactional_id: str | None = None,
) -> Any:
    """Open a sink task's producer: idempotent, ``acks=all``, bounded memory.

    Defaults of ours, each overridable through ``kafka.*`` except the first two:

    - ``enable.idempotence`` and ``acks=all``: a producer retry never writes a record twice;
    - ``partitioner=murmur2_random``: a keyed record lands in the partition Kafka's Java
      client (and so Spark's built-in sink) would choose;
    - ``queue.buffering.max.kbytes`` 64 MiB (librdkafka: 1 GiB): a task blocks on a full
      queue (see ``kafka_rescalable.sink.producing``) rather than buffering a whole partition; the
      count limit is raised to a million records so that bytes, not small records, bound it;
    - ``delivery.report.only.error``: only failures come back through ``on_delivery``, so
      a successful record costs no Python call.

    ``on_delivery`` receives the failed records; ``transactional_id`` makes it a
    transactional producer (exactly-once mode).
    """
    from confluent_kafka import Producer

    config: dict[str, Any] = {
        "partitioner": "murmur2_random",
        "queue.buffering.max.kbytes": 65536,
        "queue.buffering.max.messages": 1_000_000,
        "delivery.report.only.error": True,
        **settings,
        "bootstrap.servers": bootstrap_servers,
        "enable.idempotence": True,
        "acks": "all",
        "logger": librdkafka_logger,
        "error_cb": errors,
        "on_delivery": on_delivery,
    }
    if transactional_id is not None:
        config["transactional.id"] = transactional_id
    return open_client(Producer, config)


def sink_marker_consumer(bootstrap_servers: str, settings: Mapping[str, Any], group: str) -> Any:
    """Open the consumer an exactly-once sink task reads and commits its marker through.

    It never subscribes or fetches: it only reads the group's committed offset and lends its
    group metadata to ``send_offsets_to_transaction``. ``read_committed`` makes librdkafka ask
    for stable offsets, so an offset still inside an open transaction is waited for, not read.
    Producer-only settings are left out (a consumer would log each one as ignored).
    """
    from confluent_kafka import Consumer

    producer_only = ("linger.", "batch.", "queue.buffering.", "compression.", "acks", "partitioner")
    config = {k: v for k, v in settings.items() if not k.startswith(producer_only)}
    return open_client(
        Consumer,
        {
            **config,
            "bootstrap.servers": bootstrap_servers,
            "group.id": group,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "logger": librdkafka_logger,
        },
    )
