"""Every source option, declared once: its name, field, kind, default and the modes it is for.

:data:`OPTIONS` is the one place an option is named. The set of known options, the refusal of
unknown ones (with a suggestion), the per-option parsing and the defaults all come from it, so
adding an option is adding one entry (and, when it fills a field, that field of
:class:`~connector.config.options.KafkaSourceOptions`). What needs two options at once (exactly
one subscription, offsets inside the subscription, the batch-only markers) is not here but in
:mod:`connector.config.rules`, which runs after the table pass.

``kafka.*`` settings are not in the table: they go to librdkafka through
:mod:`connector.config.kafka_config`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from connector.config.parsers import (
    Choice,
    NonBlank,
    Parser,
    parse_assign,
    parse_boolean,
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
from connector.config.values import Mode, Parallelism
from connector.errors import InvalidOptionError

__all__ = [
    "BATCH_ONLY",
    "BOTH_MODES",
    "CATALOG_TABLE_PREFIX",
    "IGNORED_KEYS",
    "OPTIONS",
    "OPTIONS_BY_KEY",
    "PAYLOAD_FORMATS",
    "REGISTRY_PREFIX",
    "WRONG_MODE",
    "Option",
    "did_you_mean",
    "option_value",
    "read_table",
    "refuse_catalog_table",
    "reject_unknown",
]

BOTH_MODES: Final[frozenset[Mode]] = frozenset({"stream", "batch"})
BATCH_ONLY: Final[frozenset[Mode]] = frozenset({"batch"})

WRONG_MODE: Final[Mapping[Mode, str]] = {
    "stream": "it is only valid for batch queries (spark.read); a stream has no end",
}
"""The message refusing an option in a read mode that does not take it, by that mode."""

PAYLOAD_FORMATS: Final = ("binary", "string", "json", "avro", "protobuf")
"""The ``keyFormat`` / ``valueFormat`` values (see :mod:`connector.formats`)."""

REGISTRY_PREFIX: Final = "schema.registry."
"""Options with this prefix configure confluent-kafka's ``SchemaRegistryClient``."""

IGNORED_KEYS: Final = ("path",)
"""Keys Spark may pass that are no option of ours: ``load(path)`` sets ``path``."""

CATALOG_TABLE_PREFIX: Final = "option."
"""How a catalog table's properties carry its ``OPTIONS`` (``CREATE TABLE ... USING``)."""


@dataclass(frozen=True)
class Option:
    """One source option.

    Parameters
    ----------
    name
        Spark's spelling, used in every message; Spark hands the key over lower-cased.
    field
        The :class:`~connector.config.options.KafkaSourceOptions` field the value fills, or
        ``None`` when a rule in :mod:`connector.config.rules` combines it with others.
    parse
        Its kind: turns the text into the value (see :mod:`connector.config.parsers`).
    default
        The value used when the option is not given, spelled as a user would write it and
        parsed by ``parse``, like the README shows it; per mode where the modes differ.
        ``None``: no default, the value is ``absent``.
    absent
        The value when neither the option nor a default is there.
    modes
        The read modes that take the option; in another it is refused.
    overridden_by
        Options that win over this one: when one of them is given this one is not read at all,
        as Spark does not read it either.
    secret
        Whether ``repr`` must hide the value (``kafka.*`` secrets are hidden by
        :func:`~connector.config.kafka_config.redacted_settings`).
    """

    name: str
    field: str | None
    parse: Parser
    default: str | Mapping[Mode, str] | None = None
    absent: Any = None
    modes: frozenset[Mode] = BOTH_MODES
    overridden_by: tuple[str, ...] = ()
    secret: bool = False

    @property
    def key(self) -> str:
        """The lower-cased name, as Spark hands the option over."""
        return self.name.lower()

    def default_text(self, mode: Mode) -> str | None:
        """Give the default, as text, for a read in ``mode``."""
        if isinstance(self.default, Mapping):
            return self.default.get(mode)
        return self.default


OPTIONS: Final[tuple[Option, ...]] = (
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
    *(
        option
        for column in ("key", "value")
        for option in (
            Option(
                f"{column}Format",
                None,
                Choice(PAYLOAD_FORMATS, "'binary', 'string', 'json', 'avro' or 'protobuf'"),
                default="binary",
            ),
            Option(f"{column}Schema", None, parse_optional_text),
            Option(f"{column}Message", None, parse_optional_text),
            Option(f"{column}Subject", None, parse_optional_text),
            Option(
                f"{column}Framing",
                None,
                Choice(("none", "confluent"), "'none' (plain payloads) or 'confluent'"),
            ),
        )
    ),
    Option(
        "mode",
        None,
        Choice(("failfast", "permissive"), "'FAILFAST' or 'PERMISSIVE'"),
        default="FAILFAST",
    ),
)
"""Every source option. Their order is the order in which bad values are reported."""

OPTIONS_BY_KEY: Final[Mapping[str, Option]] = {option.key: option for option in OPTIONS}
"""The table by lower-cased name, the form in which Spark hands options over."""


def did_you_mean(key: str, names: Mapping[str, str]) -> str:
    """`` Did you mean 'maxOffsetsPerTrigger'?`` for the known name closest to ``key``, or ``""``.

    ``names`` maps each lower-cased option key to the option's spelling.
    """
    close = difflib.get_close_matches(key, list(names), n=1)
    return f" Did you mean '{names[close[0]]}'?" if close else ""


def reject_unknown(raw: Mapping[str, str]) -> None:
    """Refuse options we do not know: Spark would ignore a typo and read from the wrong place.

    Parameters
    ----------
    raw
        The options with lower-cased keys.

    Raises
    ------
    InvalidOptionError
        Naming the first unknown key, with the closest known option when one is close; or,
        for the properties of a ``CREATE TABLE ... USING`` table, saying what works instead.
    """
    refuse_catalog_table(raw)
    for key in sorted(raw):
        if key.startswith(("kafka.", REGISTRY_PREFIX)) or key in OPTIONS_BY_KEY:
            continue
        if key in IGNORED_KEYS:
            continue
        hint = did_you_mean(key, {k: option.name for k, option in OPTIONS_BY_KEY.items()})
        msg = (
            "this source does not know it." + hint + " Kafka client settings take the prefix "
            "'kafka.', e.g. 'kafka.security.protocol'."
        )
        raise InvalidOptionError(key, msg)


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
    if table_keys:
        msg = (
            "CREATE TABLE ... USING `kafka-rescalable` is not supported: Spark passes a "
            "Python data source's table no options when the table is read or written. In "
            "SQL, read with CREATE TEMPORARY VIEW name USING `kafka-rescalable` OPTIONS (...); "
            "write with df.write or df.writeStream.format('kafka-rescalable')."
        )
        raise InvalidOptionError(table_keys[0], msg)


def option_value(option: Option, raw: Mapping[str, str], mode: Mode) -> Any:
    """One option's value: the user's text parsed, else its default parsed, else ``absent``.

    Parameters
    ----------
    option
        The table entry.
    raw
        The options with lower-cased keys.
    mode
        The read mode, which picks a per-mode default.

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


def read_table(raw: Mapping[str, str], mode: Mode) -> dict[str, Any]:
    """Parse every option of the table, in table order, and return the values by name.

    An option given in a mode that does not take it is refused; an option overridden by one
    that is given is not read, and its value is ``None``, as is that of an option for another
    mode that is not given.

    Parameters
    ----------
    raw
        The options with lower-cased keys, unknown ones already refused.
    mode
        ``"stream"`` or ``"batch"``.

    Raises
    ------
    InvalidOptionError
        For the first option, in table order, whose value is not valid.
    """
    values: dict[str, Any] = {}
    for option in OPTIONS:
        if mode not in option.modes:
            if option.key in raw:
                raise InvalidOptionError(option.name, WRONG_MODE[mode])
            values[option.name] = None
        elif any(winner.lower() in raw for winner in option.overridden_by):
            values[option.name] = None
        else:
            values[option.name] = option_value(option, raw, mode)
    return values
