"""Source options, parsed once into a frozen value with Spark's names and meanings.

Spark lower-cases option keys before a Python data source sees them, so every lookup goes
through the lower-cased key, while every error message uses the spelling users know from
Spark's built-in Kafka source (``startingOffsets``, not ``startingoffsets``).

The work is split by job: :mod:`kafka_rescalable.config.table` declares every option once and parses
each on its own, :mod:`kafka_rescalable.config.parsers` holds the kinds of values,
:mod:`kafka_rescalable.config.rules` the checks between options,
:mod:`kafka_rescalable.config.values` the
values they produce, and :mod:`kafka_rescalable.config.kafka_config` the ``kafka.*`` settings. This
module runs them in order and builds :class:`KafkaSourceOptions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from kafka_rescalable.config.kafka_config import redacted_settings, translate_kafka_settings
from kafka_rescalable.config.rules import dead_letters_outside, offset_bounds, subscription
from kafka_rescalable.config.table import (
    OPTIONS,
    OPTIONS_BY_KEY,
    TABLE_ALTERNATIVE,
    option_value,
    read_table,
    reject_unknown,
)
from kafka_rescalable.config.token_provider import TokenProvider, check_token_provider_settings
from kafka_rescalable.config.values import (
    EARLIEST_OFFSET,
    LATEST_OFFSET,
    AssignPartitions,
    Mode,
    OffsetBound,
    Parallelism,
    SubscribePattern,
    SubscribeTopics,
    Subscription,
)
from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.formats.options import PayloadSettings, payload_settings

__all__ = [
    "EARLIEST_OFFSET",
    "LATEST_OFFSET",
    "AssignPartitions",
    "KafkaSourceOptions",
    "Mode",
    "OffsetBound",
    "Parallelism",
    "SubscribePattern",
    "SubscribeTopics",
    "Subscription",
    "include_headers",
    "parse_options",
]

_SECRET_FIELDS = frozenset(option.field for option in OPTIONS if option.secret and option.field)


@dataclass(frozen=True, repr=False)
class KafkaSourceOptions:
    """Every source option, validated; built by :func:`parse_options`.

    The fields have no defaults: the defaults are declared once, in the option table
    (:data:`kafka_rescalable.config.table.OPTIONS`), and :func:`parse_options` fills every field.
    Its ``repr`` hides secret values (``kafka.*`` passwords, keys, tokens, and any option the
    table marks secret): options end up in logs and tracebacks.
    """

    subscription: Subscription
    bootstrap_servers: str
    kafka_settings: Mapping[str, str]
    starting: OffsetBound
    starting_offsets_from_group: str | None
    ending: OffsetBound | None
    fail_on_data_loss: bool
    include_headers: bool
    parallelism: Parallelism
    parallelism_ui_url: str | None
    min_partitions: int | None
    max_records_per_partition: int | None
    min_records_per_partition: int
    max_offsets_per_trigger: int | None
    max_bytes_per_trigger: int | None
    min_offsets_per_trigger: int | None
    max_trigger_delay_ms: int
    commit_offsets_to_group: str | None
    max_event_time_drift_ms: int | None
    idle_timeout_ms: int
    poll_timeout_ms: int
    fetch_offset_retries: int
    fetch_offset_retry_interval_ms: int
    fetch_offset_retry_timeout_ms: int
    missing_topic_timeout_ms: int
    group_id_prefix: str
    group_id: str | None
    batch_size: int
    payloads: PayloadSettings
    """How keys and values are decoded (``keyFormat``, ``valueFormat``, ...)."""
    token_provider: TokenProvider | None
    """``kafkaTokenProvider``: the function every client gets its OAUTHBEARER tokens from."""

    @property
    def reads_headers(self) -> bool:
        """Whether executors read record headers: ``includeHeaders``, or dead letters.

        A dead letter carries its record's headers, so they are read, and their bytes count
        towards ``maxBytesPerTrigger``, even when the output has no ``headers`` column.
        """
        return self.include_headers or self.payloads.dead_letter_topic is not None

    def __repr__(self) -> str:
        """Every field, with secret values replaced by ``'***'``."""
        shown = []
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "kafka_settings":
                value = redacted_settings(value)
            elif item.name in _SECRET_FIELDS and value is not None:
                value = "***"
            shown.append(f"{item.name}={value!r}")
        return f"KafkaSourceOptions({', '.join(shown)})"


def parse_options(options: Mapping[str, str], mode: Mode) -> KafkaSourceOptions:
    """Validate raw options once, so a bad option fails on the driver before any batch.

    Parameters
    ----------
    options
        The options as Spark hands them over (keys lower-cased, values strings).
    mode
        ``"stream"`` for ``readStream``, ``"batch"`` for ``read``: a few options are valid in
        only one of them, as in Spark's built-in source.

    Raises
    ------
    InvalidOptionError
        Naming the option, the bad value and what would be valid.
    """
    raw = {key.lower(): str(value) for key, value in options.items()}
    reject_unknown(raw)
    kafka_raw = {
        key[len("kafka.") :]: value for key, value in raw.items() if key.startswith("kafka.")
    }
    bootstrap = kafka_raw.get("bootstrap.servers", "").strip()
    if not bootstrap:
        msg = "it must be set to the Kafka brokers to read from, e.g. 'host1:9092,host2:9092'"
        if not raw:
            # What SELECT from a CREATE TABLE ... USING table gets: the options stay behind.
            msg += (
                ". No option was given at all, as when SQL reads a table created with CREATE "
                "TABLE ... USING `kafka-rescalable`: Spark hands a Python data source's table "
                "no options on reads. " + TABLE_ALTERNATIVE
            )
        raise InvalidOptionError("kafka.bootstrap.servers", msg)
    translated = translate_kafka_settings(kafka_raw)
    values = read_table(raw, mode)
    check_token_provider_settings(values["kafkaTokenProvider"], translated.settings)
    subscribed = subscription(values)
    starting, ending = offset_bounds(values, mode, subscribed)
    payloads = payload_settings(values, raw)
    dead_letters_outside(payloads.dead_letter_topic, subscribed)
    return KafkaSourceOptions(
        subscription=subscribed,
        bootstrap_servers=bootstrap,
        kafka_settings={k: v for k, v in translated.settings.items() if k != "group.id"},
        starting=starting,
        ending=ending,
        group_id=translated.settings.get("group.id"),
        batch_size=translated.max_poll_records or 10_000,
        payloads=payloads,
        **{option.field: values[option.name] for option in OPTIONS if option.field},
    )


def include_headers(options: Mapping[str, str]) -> bool:
    """``includeHeaders`` alone: the schema is needed before the read mode is known."""
    raw = {key.lower(): str(value) for key, value in options.items()}
    return option_value(OPTIONS_BY_KEY["includeheaders"], raw, "stream")
