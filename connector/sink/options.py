"""The sink's options, parsed once on the driver into a frozen, picklable value.

They keep the names of Spark's built-in Kafka sink (``kafka.bootstrap.servers``, ``topic``,
``kafka.*``) and add two of ours, ``deliveryGuarantee`` and ``transactionalIdPrefix``, plus the
source's typed-record options (``valueFormat``, ``valueSchema``, ... and ``schema.registry.*``),
taken from the source's option table so that both sides parse them the same way. Spark
lower-cases option keys before a Python data source sees them; messages use the spelling users
write.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from connector.config.kafka_config import check_client_accepts, translate_kafka_settings
from connector.config.table import OPTIONS_BY_KEY, REGISTRY_PREFIX, did_you_mean, option_value
from connector.errors import InvalidOptionError
from connector.formats.options import (
    PLAIN,
    Framing,
    PayloadFormat,
    PayloadOptions,
    PayloadSettings,
    RegistrySettings,
    payload_settings,
)

__all__ = ["DEFAULT_TRANSACTIONAL_ID_PREFIX", "DeliveryGuarantee", "KafkaSinkOptions", "parse"]

DEFAULT_TRANSACTIONAL_ID_PREFIX: Final = "kafka-rescalable-sink"


class DeliveryGuarantee(enum.Enum):
    """How often a row reaches Kafka when tasks fail, are retried or a batch is replayed."""

    AT_LEAST_ONCE = "at-least-once"
    EXACTLY_ONCE = "exactly-once"


_OURS = ("deliveryGuarantee", "transactionalIdPrefix", "topic")
_SPARKS_OWN = ("checkpointLocation", "path", "queryName")
"""Options Spark hands every sink; they are not ours to check."""
_PAYLOAD_OPTIONS: Final = tuple(
    OPTIONS_BY_KEY[f"{column}{suffix}".lower()]
    for column in ("key", "value")
    for suffix in ("Format", "Schema", "Message", "Subject", "Framing")
)
"""The source's typed-record options, declared once in its option table; the sink takes them."""
_KNOWN: Final = {
    name.lower(): name
    for name in (*_OURS, *(option.name for option in _PAYLOAD_OPTIONS), *_SPARKS_OWN)
}
_SOURCE_ONLY: Final = {
    "mode": (
        "it is a source option (FAILFAST or PERMISSIVE: what a record that does not decode "
        "does); the sink encodes, and a row that does not encode always fails its task. "
        "Remove it from the sink's options"
    ),
}
"""Source options a user may carry over to the sink by mistake, refused with the reason."""

# Settings the sink owns: a user value would weaken what deliveryGuarantee promises.
_OWNED_BY_SINK: Final = {
    "transactional.id": (
        "the sink names one transactional id per query and sink partition so that a retried "
        "task fences the attempt before it; set 'transactionalIdPrefix' to change its prefix"
    ),
    "enable.idempotence": (
        "the sink always uses the idempotent producer, so a producer retry never writes a "
        "record twice"
    ),
}


@dataclass(frozen=True)
class KafkaSinkOptions:
    """The sink's parsed options: what every task needs, picklable.

    Parameters
    ----------
    bootstrap_servers
        ``kafka.bootstrap.servers``.
    topic
        The ``topic`` option, which overrides a ``topic`` column; ``None`` when unset.
    guarantee
        ``deliveryGuarantee``; at-least-once by default, as Spark's built-in sink.
    transactional_id_prefix
        ``transactionalIdPrefix``: the start of every transactional id and marker group.
    kafka_settings
        librdkafka settings translated from the ``kafka.*`` options.
    payloads
        How the ``key`` and ``value`` columns are encoded (``keyFormat``, ``valueFormat``, ...
        and ``schema.registry.*``); raw bytes or text, as Spark's sink takes them, by default.
    """

    bootstrap_servers: str
    topic: str | None = None
    guarantee: DeliveryGuarantee = DeliveryGuarantee.AT_LEAST_ONCE
    transactional_id_prefix: str = DEFAULT_TRANSACTIONAL_ID_PREFIX
    kafka_settings: Mapping[str, str] = field(default_factory=dict)
    payloads: PayloadSettings = PLAIN

    @property
    def exactly_once(self) -> bool:
        """Whether tasks write in transactions (``deliveryGuarantee=exactly-once``)."""
        return self.guarantee is DeliveryGuarantee.EXACTLY_ONCE


def parse(options: Mapping[str, str]) -> KafkaSinkOptions:
    """Parse the sink's options (keys in any case), refusing what it cannot honour.

    Raises
    ------
    InvalidOptionError
        Naming the option, the bad value and what would be valid; an unknown option comes
        with the nearest known name.
    """
    raw = {key.lower(): value for key, value in options.items()}
    java = {key[len("kafka."):]: value for key, value in raw.items() if key.startswith("kafka.")}
    for key in sorted(raw):
        if key in _SOURCE_ONLY:
            raise InvalidOptionError(key, _SOURCE_ONLY[key])
        if not key.startswith(("kafka.", REGISTRY_PREFIX)) and key not in _KNOWN:
            raise InvalidOptionError(key, _unknown(key))
    servers = java.pop("bootstrap.servers", "").strip()
    if not servers:
        msg = (
            "the Kafka sink needs it, e.g. .option('kafka.bootstrap.servers', 'host:9092'). "
            "(SQL's INSERT INTO a table created USING `kafka-rescalable` passes none: Spark "
            "hands a Python data source's table no options on writes; use df.write.)"
        )
        raise InvalidOptionError("kafka.bootstrap.servers", msg)
    for name, why in _OWNED_BY_SINK.items():
        if name in java:
            raise InvalidOptionError(f"kafka.{name}", why)
    acks = java.get("acks", "all").strip().lower()
    if acks not in ("all", "-1"):
        msg = (
            f"{java['acks']!r} is not valid for this sink; it needs 'all' (-1), which its "
            "idempotent producer requires"
        )
        raise InvalidOptionError("kafka.acks", msg)
    settings = dict(translate_kafka_settings(java).settings)
    check_client_accepts(settings)
    topic = raw.get("topic")
    if topic is not None and not topic.strip():
        raise InvalidOptionError("topic", "it is empty; give a topic name or leave it unset")
    prefix = raw.get("transactionalidprefix", DEFAULT_TRANSACTIONAL_ID_PREFIX).strip()
    if not prefix:
        raise InvalidOptionError("transactionalIdPrefix", "it is empty; give a prefix")
    values = {option.name: option_value(option, raw, "stream") for option in _PAYLOAD_OPTIONS}
    payloads = payload_settings(values, raw)
    for payload in payloads.columns:
        _check_writable(payload, payloads.registry, topic)
    return KafkaSinkOptions(
        bootstrap_servers=servers,
        topic=topic,
        guarantee=_guarantee(raw.get("deliveryguarantee", "at-least-once")),
        transactional_id_prefix=prefix,
        kafka_settings=settings,
        payloads=payloads,
    )


def _subject_needed(payload: PayloadOptions, registry: RegistrySettings | None) -> bool:
    """Whether writing ``payload`` registers (or looks up) its schema under a subject.

    It does when a registry is configured and the payloads are framed: the frame holds the
    id the registry gives the writer schema.
    """
    return (
        registry is not None
        and payload.framing is Framing.CONFLUENT
        and payload.format not in (PayloadFormat.BINARY, PayloadFormat.STRING)
    )


def _check_writable(
    payload: PayloadOptions, registry: RegistrySettings | None, topic: str | None
) -> None:
    """Refuse what the sink cannot encode: a frame with no registry, a subject with no name.

    The default subject is ``<topic>-value`` (``-key``) of the ``topic`` option. With no such
    option the rows may go to many topics, and one query writes one schema: the subject must
    then be named.
    """
    if payload.framing is Framing.CONFLUENT and registry is None:
        msg = (
            "the registry framing holds the id the registry gives the writer schema; set "
            f"'schema.registry.url', or '{payload.option('Framing')}' to 'none' for plain "
            "payloads"
        )
        raise InvalidOptionError(payload.option("Framing"), msg)
    if _subject_needed(payload, registry) and payload.subject is None and topic is None:
        msg = (
            f"with no 'topic' option the sink cannot name the registry subject "
            f"('<topic>-{payload.column}'): set '{payload.option('Subject')}', or the 'topic' "
            "option"
        )
        raise InvalidOptionError(payload.option("Subject"), msg)


def _guarantee(value: str) -> DeliveryGuarantee:
    try:
        return DeliveryGuarantee(value.strip().lower())
    except ValueError:
        choices = ", ".join(repr(g.value) for g in DeliveryGuarantee)
        msg = f"{value!r} is not valid; use one of {choices}"
        raise InvalidOptionError("deliveryGuarantee", msg) from None


def _unknown(key: str) -> str:
    hint = did_you_mean(key, _KNOWN)
    known = ", ".join((*_OURS, "keyFormat", "valueFormat", "..."))
    return (
        f"the Kafka sink does not know this option.{hint} Known: {known}, kafka.*, "
        f"{REGISTRY_PREFIX}*"
    )
