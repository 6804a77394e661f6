"""The sink's options, parsed once on the driver into a frozen, picklable value.

They keep the names of Spark's built-in Kafka sink (``kafka.bootstrap.servers``, ``topic``,
``kafka.*``) and add two of ours, ``deliveryGuarantee`` and ``transactionalIdPrefix``, plus the
source's typed-record options (``valueFormat``, ``valueSchema``, ... and ``schema.registry.*``).
Like the source's, every one is declared once in the option table
(:data:`kafka_rescalable.config.table.TABLE`, the entries whose sides hold ``"sink"``): its name,
default and parser, the refusal of source options (``startingOffsets``, ``mode``, ...) and the
"did you mean" for a typo all come from there. Spark lower-cases option keys before a Python
data source sees them; messages use the spelling users write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kafka_rescalable.config.kafka_config import (
    check_client_accepts,
    redacted_settings,
    translate_kafka_settings,
)
from kafka_rescalable.config.table import (
    SINK_OPTIONS,
    SINK_OPTIONS_BY_KEY,
    read_table,
    reject_unknown,
)
from kafka_rescalable.config.token_provider import TokenProvider, check_token_provider_settings
from kafka_rescalable.config.values import DeliveryGuarantee
from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.formats.options import (
    Framing,
    PayloadFormat,
    PayloadOptions,
    PayloadSettings,
    RegistrySettings,
    payload_settings,
)

__all__ = ["DEFAULT_TRANSACTIONAL_ID_PREFIX", "DeliveryGuarantee", "KafkaSinkOptions", "parse"]

DEFAULT_TRANSACTIONAL_ID_PREFIX: Final = SINK_OPTIONS_BY_KEY["transactionalidprefix"].default
"""``transactionalIdPrefix``'s default, as the option table declares it."""

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


@dataclass(frozen=True, repr=False)
class KafkaSinkOptions:
    """The sink's parsed options: what every task needs, picklable; built by :func:`parse`.

    The fields have no defaults: the defaults are declared once, in the option table
    (:data:`kafka_rescalable.config.table.TABLE`), and :func:`parse` fills every field.

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
    token_provider
        ``kafkaTokenProvider``: the function the producers get their OAUTHBEARER tokens from.
    """

    bootstrap_servers: str
    topic: str | None
    guarantee: DeliveryGuarantee
    transactional_id_prefix: str
    kafka_settings: Mapping[str, str]
    payloads: PayloadSettings
    token_provider: TokenProvider | None

    def __repr__(self) -> str:
        """Every field, with secret Kafka and registry settings replaced by ``'***'``."""
        return (
            f"KafkaSinkOptions(bootstrap_servers={self.bootstrap_servers!r}, "
            f"topic={self.topic!r}, guarantee={self.guarantee!r}, "
            f"transactional_id_prefix={self.transactional_id_prefix!r}, "
            f"kafka_settings={redacted_settings(self.kafka_settings)!r}, "
            f"payloads={self.payloads!r}, token_provider={self.token_provider!r})"
        )

    @property
    def client_settings(self) -> dict[str, Any]:
        """The settings every sink client gets: ``kafka_settings`` and the token provider.

        The provider stays a :class:`TokenProvider` value (picklable);
        :func:`kafka_rescalable.token_callback.open_client` makes it the client's callback.
        """
        if self.token_provider is None:
            return dict(self.kafka_settings)
        return {**self.kafka_settings, "oauth_cb": self.token_provider}

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
        with the nearest known name, a source option with the reason it has no place here.
    """
    raw = {key.lower(): str(value) for key, value in options.items()}
    reject_unknown(raw, "sink")
    java = {key[len("kafka.") :]: value for key, value in raw.items() if key.startswith("kafka.")}
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
    values = read_table(raw, None, "sink")
    check_token_provider_settings(values["kafkaTokenProvider"], settings)
    payloads = payload_settings(values, raw)
    for payload in payloads.columns:
        _check_writable(payload, payloads.registry, values["topic"])
    return KafkaSinkOptions(
        bootstrap_servers=servers,
        kafka_settings=settings,
        payloads=payloads,
        **{option.field: values[option.name] for option in SINK_OPTIONS if option.field},
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
