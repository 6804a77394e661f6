"""Every option, declared once: its name, field, kind, default, and the sides and modes it is for.

:data:`TABLE` is the one place an option is named, whether the source reads it, the sink, or
both (the typed-record options). The set of known options on each side, the refusal of unknown
ones (with a suggestion) and of the other side's ones (with the reason), the per-option
parsing and the defaults all come from it, so adding an option is adding one entry (and, when
it fills a field, that field of :class:`~kafka_rescalable.config.options.KafkaSourceOptions` or
:class:`~kafka_rescalable.sink.options.KafkaSinkOptions`). What needs two options at once (exactly
one subscription, offsets inside the subscription, the batch-only markers, a registry frame
with a registry) is not here but in :mod:`kafka_rescalable.config.rules` and the sides' parse
functions, which run after the table pass.

``kafka.*`` settings are not in the table: they go to librdkafka through
:mod:`kafka_rescalable.config.kafka_config`.

The module is long because it is the table: one entry per option of both sides, about forty,
and the two passes that read it. Split by side or by topic, one option's name, default and
refusal would again live in more than one place, which is what the table exists to prevent.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kafka_rescalable.config.parsers import (
    Choice,
    NonBlank,
    Parser,
    parse_assign,
    parse_boolean,
    parse_byte_size,
    parse_delivery_guarantee,
    parse_duration,
    parse_epoch_millis,
    parse_non_negative_int,
    parse_offsets,
    parse_optional_text,
    parse_parallelism,
    parse_pattern,
    parse_positive_duration,
    parse_positive_int,
    parse_timestamps,
    parse_topics,
)
from kafka_rescalable.config.token_provider import parse_token_provider
from kafka_rescalable.config.values import Mode, Parallelism, Side
from kafka_rescalable.errors import InvalidOptionError

__all__ = [
    "BATCH_ONLY",
    "BOTH_MODES",
    "BOTH_SIDES",
    "CATALOG_TABLE_KEYS",
    "CATALOG_TABLE_PREFIX",
    "IGNORED_KEYS",
    "OPTIONS",
    "OPTIONS_BY_KEY",
    "PAYLOAD_FORMATS",
    "REGISTRY_PREFIX",
    "SINK_ONLY",
    "SINK_OPTIONS",
    "SINK_OPTIONS_BY_KEY",
    "SOURCE_ONLY",
    "SPARKS_OWN",
    "STREAM_ONLY",
    "TABLE",
    "TABLE_BY_KEY",
    "WRONG_MODE",
    "WRONG_SIDE",
    "Option",
    "did_you_mean",
    "option_value",
    "read_table",
    "TABLE_ALTERNATIVE",
    "refuse_catalog_table",
    "reject_unknown",
    "side_options",
]

BOTH_MODES: Final[frozenset[Mode]] = frozenset({"stream", "batch"})
BATCH_ONLY: Final[frozenset[Mode]] = frozenset({"batch"})
STREAM_ONLY: Final[frozenset[Mode]] = frozenset({"stream"})

WRONG_MODE: Final[Mapping[Mode, str]] = {
    "stream": "it is only valid for batch queries (spark.read); a stream has no end",
    "batch": (
        "it is only valid for streaming queries (spark.readStream), where it limits each "
        "micro-batch; a batch query reads its whole range at once. Remove it from the batch "
        "read's options"
    ),
}
"""The message refusing an option in a read mode that does not take it, by that mode."""

SOURCE_ONLY: Final[frozenset[Side]] = frozenset({"source"})
SINK_ONLY: Final[frozenset[Side]] = frozenset({"sink"})
BOTH_SIDES: Final[frozenset[Side]] = frozenset({"source", "sink"})

WRONG_SIDE: Final[Mapping[Side, str]] = {
    "sink": (
        "it is a source option: it says what or how a query reads, and the sink writes. "
        "Remove it from the sink's options"
    ),
    "source": (
        "it is a sink option: it says how rows are written to Kafka, and a read writes "
        "nothing. Remove it from the read's options"
    ),
}
"""The message refusing the other side's option, by the side that refuses it; an entry's
``elsewhere`` says more where there is more to say."""

PAYLOAD_FORMATS: Final = ("binary", "string", "json", "avro", "protobuf")
"""The ``keyFormat`` / ``valueFormat`` values (see :mod:`kafka_rescalable.formats`)."""

REGISTRY_PREFIX: Final = "schema.registry."
"""Options with this prefix configure confluent-kafka's ``SchemaRegistryClient``."""

SPARKS_OWN: Final[Mapping[Side, tuple[str, ...]]] = {
    "source": ("path",),
    "sink": ("checkpointLocation", "path", "queryName"),
}
"""Options Spark may hand each side that are no option of ours, so not ours to check:
``load(path)`` / ``save(path)`` set ``path``, a streaming write its checkpoint and name."""

IGNORED_KEYS: Final = tuple(name.lower() for name in SPARKS_OWN["source"])
"""The keys of the source's :data:`SPARKS_OWN`, lower-cased as Spark hands them over."""

CATALOG_TABLE_PREFIX: Final = "option."
"""How a catalog table's properties carry its ``OPTIONS`` (``CREATE TABLE ... USING``)."""

CATALOG_TABLE_KEYS: Final = ("provider", "owner")
"""Properties Spark adds to every new catalog table's, with or without ``OPTIONS``."""

TABLE_ALTERNATIVE: Final = (
    "In SQL, read with CREATE TEMPORARY VIEW name USING `kafka-rescalable` OPTIONS "
    "('kafka.bootstrap.servers' 'host:9092', 'subscribe' 'topic'); write with df.write or "
    "df.writeStream.format('kafka-rescalable')."
)
"""What works instead of a catalog table, as every message about one says it."""


@dataclass(frozen=True)
class Option:
    """One option of the source, the sink, or both.

    Parameters
    ----------
    name
        Spark's spelling, used in every message; Spark hands the key over lower-cased.
    field
        The field the value fills, of :class:`~kafka_rescalable.config.options.KafkaSourceOptions`
        for a source option, of :class:`~kafka_rescalable.sink.options.KafkaSinkOptions` for a sink
        option; ``None`` when a rule combines it with others (:mod:`kafka_rescalable.config.rules`,
        :func:`kafka_rescalable.formats.options.payload_settings`).
    parse
        Its kind: turns the text into the value (see :mod:`kafka_rescalable.config.parsers`).
    default
        The value used when the option is not given, spelled as a user would write it and
        parsed by ``parse``, like the README shows it; per mode where the modes differ.
        ``None``: no default, the value is ``absent``.
    absent
        The value when neither the option nor a default is there.
    modes
        The read modes that take the option; in another it is refused. A sink option takes
        both: the sink has no read mode.
    overridden_by
        Options that win over this one: when one of them is given this one is not read at all,
        as Spark does not read it either.
    secret
        Whether ``repr`` must hide the value (``kafka.*`` secrets are hidden by
        :func:`~kafka_rescalable.config.kafka_config.redacted_settings`).
    sides
        Whether the source reads the option, the sink, or both; the other side refuses it.
    elsewhere
        Why the side that does not take the option refuses it, when there is more to say than
        :data:`WRONG_SIDE` does; ``None``: that message.
    wrong_mode
        Why a read mode that does not take the option refuses it, when there is more to say
        than :data:`WRONG_MODE` does; ``None``: that message.
    """

    name: str
    field: str | None
    parse: Parser
    default: str | Mapping[Mode, str] | None = None
    absent: Any = None
    modes: frozenset[Mode] = BOTH_MODES
    overridden_by: tuple[str, ...] = ()
    secret: bool = False
    sides: frozenset[Side] = SOURCE_ONLY
    elsewhere: str | None = None
    wrong_mode: str | None = None

    @property
    def key(self) -> str:
        """The lower-cased name, as Spark hands the option over."""
        return self.name.lower()

    def default_text(self, mode: Mode | None) -> str | None:
        """Give the default, as text, for a read in ``mode`` (``None``: a write)."""
        if isinstance(self.default, Mapping):
            return None if mode is None else self.default.get(mode)
        return self.default


_DEAD_LETTERS_NEED_A_STREAM: Final = (
    "it is only valid for streaming queries (spark.readStream): dead letters are written "
    "exactly once per micro-batch of a query, which a batch read does not have. Read the "
    "topic with spark.readStream and trigger(availableNow=True), or use mode 'PERMISSIVE' "
    "and filter on the 'decodeError' column"
)


TABLE: Final[tuple[Option, ...]] = (
    Option("subscribe", None, parse_topics),
    Option("subscribePattern", None, parse_pattern),
    Option("assign", None, parse_assign),
    Option(
        "startingOffsetsByTimestampStrategy",
        None,
        Choice(("error", "latest"), "'error' (fail) or 'latest'"),
        default="error",
    ),
    Option("endingTimestamp", None, parse_epoch_millis, modes=BATCH_ONLY),
    Option(
        "endingOffsetsByTimestamp",
        None,
        parse_timestamps,
        modes=BATCH_ONLY,
        overridden_by=("endingTimestamp",),
    ),
    Option("startingTimestamp", None, parse_epoch_millis),
    Option(
        "startingOffsetsByTimestamp",
        None,
        parse_timestamps,
        overridden_by=("startingTimestamp",),
    ),
    Option(
        "startingOffsets",
        None,
        parse_offsets,
        default={"stream": "latest", "batch": "earliest"},
        overridden_by=("startingTimestamp", "startingOffsetsByTimestamp"),
    ),
    Option(
        "startingOffsetsFromGroup",
        "starting_offsets_from_group",
        NonBlank(
            "it is empty; give the consumer group id whose committed offsets the query starts from"
        ),
    ),
    Option(
        "endingOffsets",
        None,
        parse_offsets,
        default="latest",
        modes=BATCH_ONLY,
        overridden_by=("endingTimestamp", "endingOffsetsByTimestamp"),
    ),
    Option("failOnDataLoss", "fail_on_data_loss", parse_boolean, default="true"),
    Option("includeHeaders", "include_headers", parse_boolean, default="false"),
    Option("parallelism", "parallelism", parse_parallelism, absent=Parallelism.unset()),
    Option("parallelismUiUrl", "parallelism_ui_url", parse_optional_text),
    Option("minPartitions", "min_partitions", parse_positive_int),
    Option("maxRecordsPerPartition", "max_records_per_partition", parse_positive_int),
    Option(
        "minRecordsPerPartition", "min_records_per_partition", parse_positive_int, default="10000"
    ),
    Option("maxOffsetsPerTrigger", "max_offsets_per_trigger", parse_positive_int),
    Option("maxBytesPerTrigger", "max_bytes_per_trigger", parse_byte_size, modes=STREAM_ONLY),
    Option("minOffsetsPerTrigger", "min_offsets_per_trigger", parse_positive_int),
    Option("maxTriggerDelay", "max_trigger_delay_ms", parse_duration, default="15m"),
    Option(
        "commitOffsetsToGroup",
        "commit_offsets_to_group",
        NonBlank("it is empty; give the consumer group id whose lag tools should show this query"),
    ),
    Option("maxEventTimeDrift", "max_event_time_drift_ms", parse_duration),
    Option("idleTimeout", "idle_timeout_ms", parse_duration, default="60s"),
    Option("kafkaConsumer.pollTimeoutMs", "poll_timeout_ms", parse_positive_int, default="120000"),
    Option("fetchOffset.numRetries", "fetch_offset_retries", parse_non_negative_int, default="3"),
    Option(
        "fetchOffset.retryIntervalMs",
        "fetch_offset_retry_interval_ms",
        parse_non_negative_int,
        default="10",
    ),
    Option(
        "fetchOffset.retryTimeout",
        "fetch_offset_retry_timeout_ms",
        parse_positive_duration,
        default="60s",
    ),
    Option(
        "missingTopicTimeout", "missing_topic_timeout_ms", parse_positive_duration, default="2m"
    ),
    Option("groupIdPrefix", "group_id_prefix", parse_optional_text, default="spark-kafka-source"),
    Option("kafkaTokenProvider", "token_provider", parse_token_provider, sides=BOTH_SIDES),
    *(
        option
        for column in ("key", "value")
        for option in (
            Option(
                f"{column}Format",
                None,
                Choice(PAYLOAD_FORMATS, "'binary', 'string', 'json', 'avro' or 'protobuf'"),
                default="binary",
                sides=BOTH_SIDES,
            ),
            Option(f"{column}Schema", None, parse_optional_text, sides=BOTH_SIDES),
            Option(f"{column}Message", None, parse_optional_text, sides=BOTH_SIDES),
            Option(f"{column}Subject", None, parse_optional_text, sides=BOTH_SIDES),
            Option(
                f"{column}Framing",
                None,
                Choice(("none", "confluent"), "'none' (plain payloads) or 'confluent'"),
                sides=BOTH_SIDES,
            ),
        )
    ),
    Option(
        "mode",
        None,
        Choice(
            ("failfast", "permissive", "deadletter"), "'FAILFAST', 'PERMISSIVE' or 'DEADLETTER'"
        ),
        default="FAILFAST",
        elsewhere=(
            "it is a source option (FAILFAST, PERMISSIVE or DEADLETTER: what a record that does "
            "not decode does); the sink encodes, and a row that does not encode always fails "
            "its task. Remove it from the sink's options"
        ),
    ),
    Option(
        "deadLetterTopic",
        None,
        NonBlank("it is empty; give the topic that records which do not decode are written to"),
        modes=STREAM_ONLY,
        wrong_mode=_DEAD_LETTERS_NEED_A_STREAM,
    ),
    Option(
        "deadLetterTransactionalIdPrefix",
        None,
        NonBlank("it is empty; give a prefix"),
        default="kafka-rescalable-deadletter",
        modes=STREAM_ONLY,
        wrong_mode=_DEAD_LETTERS_NEED_A_STREAM,
    ),
    Option(
        "topic",
        "topic",
        NonBlank("it is empty; give a topic name or leave it unset"),
        sides=SINK_ONLY,
    ),
    Option(
        "deliveryGuarantee",
        "guarantee",
        parse_delivery_guarantee,
        default="at-least-once",
        sides=SINK_ONLY,
    ),
    Option(
        "transactionalIdPrefix",
        "transactional_id_prefix",
        NonBlank("it is empty; give a prefix"),
        default="kafka-rescalable-sink",
        sides=SINK_ONLY,
    ),
)
"""Every option of both sides. Their order is the order in which bad values are reported."""

TABLE_BY_KEY: Final[Mapping[str, Option]] = {option.key: option for option in TABLE}
"""The whole table by lower-cased name, the form in which Spark hands options over."""


def side_options(side: Side) -> tuple[Option, ...]:
    """Give the entries of :data:`TABLE` that ``side`` takes, in table order."""
    return tuple(option for option in TABLE if side in option.sides)


OPTIONS: Final[tuple[Option, ...]] = side_options("source")
"""Every source option, in table order."""

OPTIONS_BY_KEY: Final[Mapping[str, Option]] = {option.key: option for option in OPTIONS}
"""The source options by lower-cased name."""

SINK_OPTIONS: Final[tuple[Option, ...]] = side_options("sink")
"""Every sink option (``kafka.*`` and ``schema.registry.*`` aside), in table order."""

SINK_OPTIONS_BY_KEY: Final[Mapping[str, Option]] = {option.key: option for option in SINK_OPTIONS}
"""The sink options by lower-cased name."""

_BY_SIDE: Final[Mapping[Side, Mapping[str, Option]]] = {
    "source": OPTIONS_BY_KEY,
    "sink": SINK_OPTIONS_BY_KEY,
}


def did_you_mean(key: str, names: Mapping[str, str]) -> str:
    """`` Did you mean 'maxOffsetsPerTrigger'?`` for the known name closest to ``key``, or ``""``.

    ``names`` maps each lower-cased option key to the option's spelling.
    """
    close = difflib.get_close_matches(key, list(names), n=1)
    return f" Did you mean '{names[close[0]]}'?" if close else ""


def reject_unknown(raw: Mapping[str, str], side: Side = "source") -> None:
    """Refuse options ``side`` does not take: Spark would ignore a typo and miss the user's aim.

    An option of the other side is refused with the reason (:data:`WRONG_SIDE`, or the entry's
    ``elsewhere``); an option of neither, with the closest name ``side`` knows.

    Parameters
    ----------
    raw
        The options with lower-cased keys.
    side
        ``"source"`` for reads, ``"sink"`` for writes.

    Raises
    ------
    InvalidOptionError
        Naming the first refused key, with the closest known option when one is close; or,
        for the properties of a ``CREATE TABLE ... USING`` table, saying what works instead.
    """
    refuse_catalog_table(raw)
    known = _BY_SIDE[side]
    ignored = {name.lower(): name for name in SPARKS_OWN[side]}
    for key in sorted(raw):
        if key.startswith(("kafka.", REGISTRY_PREFIX)) or key in known or key in ignored:
            continue
        other = TABLE_BY_KEY.get(key)
        if other is not None:
            raise InvalidOptionError(other.name, other.elsewhere or WRONG_SIDE[side])
        hint = did_you_mean(key, {**ignored, **{k: option.name for k, option in known.items()}})
        raise InvalidOptionError(key, _UNKNOWN[side].format(hint=hint))


_UNKNOWN: Final[Mapping[Side, str]] = {
    "source": (
        "this source does not know it.{hint} Kafka client settings take the prefix 'kafka.', "
        "e.g. 'kafka.security.protocol'."
    ),
    "sink": (
        "the Kafka sink does not know this option.{hint} Known: "
        + ", ".join(option.name for option in SINK_OPTIONS)
        + f", kafka.*, {REGISTRY_PREFIX}*"
    ),
}
"""The message refusing an option neither side knows, by the side that refuses it."""


def refuse_catalog_table(raw: Mapping[str, str]) -> None:
    """Refuse ``CREATE TABLE t USING `kafka-rescalable` OPTIONS (...)`` with what works instead.

    Spark hands a Python data source a new catalog table's properties (``option.``-prefixed
    copies of its options, ``provider``, ``owner``) once, for its schema; when the table is
    later read or written (``SELECT``, ``INSERT``) the source gets no options at all, so such
    a table could never reach Kafka. A temporary view keeps its options on every read.

    Raises
    ------
    InvalidOptionError
        Naming the first ``option.``-prefixed key, when there is one.
    """
    table_keys = sorted(key for key in raw if key.startswith(CATALOG_TABLE_PREFIX))
    # Without OPTIONS, the table's properties are only Spark's own: provider and owner.
    table_keys += [key for key in CATALOG_TABLE_KEYS if key in raw]
    if table_keys:
        msg = (
            "CREATE TABLE ... USING `kafka-rescalable` is not supported: Spark passes a "
            "Python data source's table no options when the table is read or written. "
            + TABLE_ALTERNATIVE
        )
        raise InvalidOptionError(table_keys[0], msg)


def option_value(option: Option, raw: Mapping[str, str], mode: Mode | None) -> Any:
    """One option's value: the user's text parsed, else its default parsed, else ``absent``.

    Parameters
    ----------
    option
        The table entry.
    raw
        The options with lower-cased keys.
    mode
        The read mode, which picks a per-mode default; ``None`` for the sink, which has none.

    Raises
    ------
    InvalidOptionError
        When the user's text is not a valid value of the option's kind.
    """
    text = raw.get(option.key)
    value = None if text is None else option.parse(option.name, text)
    if value is None:
        default = option.default_text(mode)
        value = None if default is None else option.parse(option.name, default)
    return option.absent if value is None else value


def read_table(raw: Mapping[str, str], mode: Mode | None, side: Side = "source") -> dict[str, Any]:
    """Parse every option ``side`` takes, in table order, and return the values by name.

    An option given in a mode that does not take it is refused; an option overridden by one
    that is given is not read, and its value is ``None``, as is that of an option for another
    mode that is not given.

    Parameters
    ----------
    raw
        The options with lower-cased keys, unknown ones already refused
        (:func:`reject_unknown`).
    mode
        ``"stream"`` or ``"batch"`` for the source; ``None`` for the sink, which writes the
        same way in both and whose options are for both.
    side
        ``"source"`` or ``"sink"``.

    Raises
    ------
    InvalidOptionError
        For the first option, in table order, whose value is not valid.
    """
    values: dict[str, Any] = {}
    for option in _BY_SIDE[side].values():
        if mode is not None and mode not in option.modes:
            if option.key in raw:
                raise InvalidOptionError(option.name, option.wrong_mode or WRONG_MODE[mode])
            values[option.name] = None
        elif any(winner.lower() in raw for winner in option.overridden_by):
            values[option.name] = None
        else:
            values[option.name] = option_value(option, raw, mode)
    return values
