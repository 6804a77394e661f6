"""Where a task writes dead letters: built on the driver, carried by the read settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka_rescalable.config.kafka_config import redacted_settings
from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.formats.options import DecodeMode, Framing

__all__ = ["DeadLetterTarget", "dead_letter_target"]

_CONSUMER_ONLY = (
    "isolation.level",
    "fetch.",
    "auto.offset.reset",
    "enable.auto.",
    "enable.partition.eof",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "partition.assignment.strategy",
    "group.",
    "queued.",
    "check.crcs",
)
"""Consumer settings among ``kafka.*`` that a producer would log as ignored, one line each."""


@dataclass(frozen=True, repr=False)
class DeadLetterTarget:
    """The dead-letter topic and how to reach it: the source's own ``kafka.*`` settings.

    Parameters
    ----------
    topic
        ``deadLetterTopic``.
    bootstrap_servers, kafka_settings
        The source's brokers and ``kafka.*`` settings (security included), consumer-only ones
        left out; with ``kafkaTokenProvider``, its provider as ``oauth_cb`` (a picklable path
        that the clients' factory turns into confluent-kafka's callback).
    prefix
        ``deadLetterTransactionalIdPrefix``.
    keep_headers
        ``includeHeaders``: whether the query's output keeps the ``headers`` column, which the
        reader reads anyway, since a dead letter carries its record's headers.
    key_framed, value_framed
        Whether the key and the value carry a registry's framing, whose writer schema id a
        dead letter's headers name.
    """

    topic: str
    bootstrap_servers: str
    kafka_settings: Mapping[str, Any]
    prefix: str
    keep_headers: bool
    key_framed: bool
    value_framed: bool

    def __repr__(self) -> str:
        """Every field, with secret settings replaced by ``'***'``."""
        return (
            f"DeadLetterTarget(topic={self.topic!r}, bootstrap_servers="
            f"{self.bootstrap_servers!r}, kafka_settings="
            f"{redacted_settings(self.kafka_settings)!r}, prefix={self.prefix!r}, "
            f"keep_headers={self.keep_headers!r}, key_framed={self.key_framed!r}, "
            f"value_framed={self.value_framed!r})"
        )


def dead_letter_target(options: KafkaSourceOptions) -> DeadLetterTarget | None:
    """Return the target under ``mode`` ``DEADLETTER``, else ``None``."""
    payloads = options.payloads
    if payloads.mode is not DecodeMode.DEADLETTER or payloads.dead_letter_topic is None:
        return None
    settings = {
        key: value
        for key, value in options.kafka_settings.items()
        if not key.startswith(_CONSUMER_ONLY)
    }
    if options.token_provider is not None:
        settings["oauth_cb"] = options.token_provider
    return DeadLetterTarget(
        topic=payloads.dead_letter_topic,
        bootstrap_servers=options.bootstrap_servers,
        kafka_settings=settings,
        prefix=payloads.dead_letter_prefix,
        keep_headers=options.include_headers,
        key_framed=payloads.key.framing is Framing.CONFLUENT,
        value_framed=payloads.value.framing is Framing.CONFLUENT,
    )
