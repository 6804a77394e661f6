"""Source options, parsed once into a frozen value with Spark's names and meanings.

Spark lower-cases option keys before a Python data source sees them, so every lookup here goes
through the lower-cased key, while every error message uses the spelling users know from
Spark's built-in Kafka source (``startingOffsets``, not ``startingoffsets``).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Literal

from connector.config.kafka_config import redacted_settings, translate_kafka_settings
from connector.errors import InvalidOptionError
from state import TopicPartition

__all__ = [
    "EARLIEST_OFFSET",
    "LATEST_OFFSET",
    "AssignPartitions",
    "KafkaSourceOptions",
    "Mode",
    "OffsetBound",
    "SubscribePattern",
    "SubscribeTopics",
    "Subscription",
    "include_headers",
    "parse_options",
]

EARLIEST_OFFSET = -2
"""Spark's JSON marker for "the first offset that still exists" in a partition."""
LATEST_OFFSET = -1
"""Spark's JSON marker for "the offset the next produced record will get" in a partition."""

Mode = Literal["batch", "stream"]

# Canonical spelling of every option we accept, keyed by its lower-cased form.
_KNOWN_OPTIONS = {
    name.lower(): name
    for name in (
        "subscribe",
        "subscribePattern",
        "assign",
        "startingOffsets",
        "endingOffsets",
        "failOnDataLoss",
        "includeHeaders",
        "parallelism",
        "parallelismUiUrl",
        "minPartitions",
        "maxRecordsPerPartition",
        "maxOffsetsPerTrigger",
        "minOffsetsPerTrigger",
        "maxTriggerDelay",
        "commitOffsetsToGroup",
        "startingTimestamp",
        "startingOffsetsByTimestamp",
        "startingOffsetsByTimestampStrategy",
        "endingTimestamp",
        "endingOffsetsByTimestamp",
        "maxEventTimeDrift",
        "idleTimeout",
        "kafkaConsumer.pollTimeoutMs",
        "fetchOffset.numRetries",
        "fetchOffset.retryIntervalMs",
        "fetchOffset.retryTimeout",
        "missingTopicTimeout",
        "groupIdPrefix",
    )
}
_SUBSCRIPTION_OPTIONS = ("subscribe", "subscribePattern", "assign")


@dataclass(frozen=True)
class SubscribeTopics:
    """``subscribe``: a fixed list of topic names."""

    topics: tuple[str, ...]

    def matches(self, topic: str) -> bool:
        """Say whether ``topic`` belongs to the subscription."""
        return topic in self.topics

    def describe(self) -> str:
        """Name the subscription in error messages."""
        return f"subscribe={','.join(self.topics)}"


@dataclass(frozen=True)
class SubscribePattern:
    """``subscribePattern``: every topic whose whole name matches a regular expression."""

    pattern: str

    def matches(self, topic: str) -> bool:
        """Say whether ``topic`` belongs to the subscription (whole-name match, as in Java)."""
        return re.fullmatch(self.pattern, topic) is not None

    def describe(self) -> str:
        """Name the subscription in error messages."""
        return f"subscribePattern={self.pattern}"


@dataclass(frozen=True)
class AssignPartitions:
    """``assign``: an explicit set of topic-partitions."""

    partitions: frozenset[TopicPartition]

    @property
    def topics(self) -> tuple[str, ...]:
        """The distinct topics of the assigned partitions."""
        return tuple(sorted({tp.topic for tp in self.partitions}))

    def matches(self, topic: str) -> bool:
        """Say whether ``topic`` has at least one assigned partition."""
        return any(tp.topic == topic for tp in self.partitions)

    def describe(self) -> str:
        """Name the subscription in error messages."""
        return f"assign={sorted((tp.topic, tp.partition) for tp in self.partitions)}"


Subscription = SubscribeTopics | SubscribePattern | AssignPartitions


@dataclass(frozen=True)
class OffsetBound:
    """A starting or ending position: ``earliest``, ``latest``, offsets, or a time.

    ``specific`` maps each named partition to an offset, where ``EARLIEST_OFFSET`` (-2) and
    ``LATEST_OFFSET`` (-1) keep Spark's meaning. ``keyword == "timestamp"`` resolves through
    Kafka's offsets-for-times lookup: ``timestamp`` for every partition
    (``startingTimestamp``), or ``by_timestamp`` per partition
    (``startingOffsetsByTimestamp``); ``no_match`` says what a partition with no record at or
    after the time gets (Spark's ``startingOffsetsByTimestampStrategy``; ends use latest).
    """

    keyword: Literal["earliest", "latest", "specific", "timestamp"]
    specific: Mapping[TopicPartition, int] | None = None
    timestamp: int | None = None
    by_timestamp: Mapping[TopicPartition, int] | None = None
    no_match: Literal["error", "latest"] = "error"

    @classmethod
    def earliest(cls) -> OffsetBound:
        """Start or end at the first offset still in each partition."""
        return cls("earliest")

    @classmethod
    def latest(cls) -> OffsetBound:
        """Start or end at the end of each partition at the time the bound is resolved."""
        return cls("latest")


@dataclass(frozen=True, repr=False)
class KafkaSourceOptions:
    """Every source option, validated; built by :func:`parse_options`.

    Its ``repr`` hides secret ``kafka.*`` values (passwords, keys, tokens): options end up in
    logs and tracebacks.
    """

    subscription: Subscription
    bootstrap_servers: str
    kafka_settings: Mapping[str, str]
    starting: OffsetBound
    ending: OffsetBound | None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    parallelism: int | None = None
    auto_parallelism: bool = False
    parallelism_ui_url: str | None = None
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60 * 1000
    commit_offsets_to_group: str | None = None
    max_event_time_drift_ms: int | None = None
    idle_timeout_ms: int = 60_000
    poll_timeout_ms: int = 120_000
    fetch_offset_retries: int = 3
    fetch_offset_retry_interval_ms: int = 10
    fetch_offset_retry_timeout_ms: int = 60_000
    missing_topic_timeout_ms: int = 120_000
    group_id_prefix: str = "spark-kafka-source"
    group_id: str | None = None
    batch_size: int = 10_000

    def __repr__(self) -> str:
        """Every field, with secret Kafka settings replaced by ``'***'``."""
        shown = []
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "kafka_settings":
                value = redacted_settings(value)
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
    _reject_unknown(raw)
    kafka_raw = {
        key[len("kafka.") :]: value for key, value in raw.items() if key.startswith("kafka.")
    }
    bootstrap = kafka_raw.get("bootstrap.servers", "").strip()
    if not bootstrap:
        msg = "it must be set to the Kafka brokers to read from, e.g. 'host1:9092,host2:9092'"
        raise InvalidOptionError("kafka.bootstrap.servers", msg)
    translated = translate_kafka_settings(kafka_raw)
    subscription = _parse_subscription(raw)
    starting, ending = _parse_bounds(raw, mode, subscription)
    group_id = translated.settings.get("group.id")
    max_poll = translated.max_poll_records
    return KafkaSourceOptions(
        subscription=subscription,
        bootstrap_servers=bootstrap,
        kafka_settings={k: v for k, v in translated.settings.items() if k != "group.id"},
        starting=starting,
        ending=ending,
        fail_on_data_loss=_parse_bool(raw, "failOnDataLoss", True),
        include_headers=_parse_bool(raw, "includeHeaders", False),
        parallelism=_parse_parallelism(raw),
        auto_parallelism=raw.get("parallelism", "").strip().lower() == "auto",
        parallelism_ui_url=raw.get("parallelismuiurl") or None,
        min_partitions=_parse_positive_int(raw, "minPartitions"),
        max_records_per_partition=_parse_positive_int(raw, "maxRecordsPerPartition"),
        max_offsets_per_trigger=_parse_positive_int(raw, "maxOffsetsPerTrigger"),
        min_offsets_per_trigger=_parse_positive_int(raw, "minOffsetsPerTrigger"),
        max_trigger_delay_ms=_parse_duration(raw, "maxTriggerDelay", 15 * 60 * 1000),
        commit_offsets_to_group=_parse_group(raw),
        max_event_time_drift_ms=(
            _parse_duration(raw, "maxEventTimeDrift", 0) if "maxeventtimedrift" in raw else None
        ),
        idle_timeout_ms=_parse_duration(raw, "idleTimeout", 60_000),
        poll_timeout_ms=_parse_positive_int(raw, "kafkaConsumer.pollTimeoutMs") or 120_000,
        fetch_offset_retries=_parse_non_negative_int(raw, "fetchOffset.numRetries", 3),
        fetch_offset_retry_interval_ms=_parse_non_negative_int(
            raw, "fetchOffset.retryIntervalMs", 10
        ),
        fetch_offset_retry_timeout_ms=_parse_positive_duration(
            raw, "fetchOffset.retryTimeout", 60_000
        ),
        missing_topic_timeout_ms=_parse_positive_duration(raw, "missingTopicTimeout", 120_000),
        group_id_prefix=raw.get("groupidprefix", "spark-kafka-source") or "spark-kafka-source",
        group_id=group_id,
        batch_size=max_poll or 10_000,
    )


def include_headers(options: Mapping[str, str]) -> bool:
    """``includeHeaders`` alone: the schema is needed before the read mode is known."""
    return _parse_bool({k.lower(): str(v) for k, v in options.items()}, "includeHeaders", False)


def _reject_unknown(raw: Mapping[str, str]) -> None:
    """Refuse options we do not know: Spark would ignore a typo and read from the wrong place."""
    for key in sorted(raw):
        if key.startswith("kafka.") or key in _KNOWN_OPTIONS or key == "path":
            continue
        close = difflib.get_close_matches(key, list(_KNOWN_OPTIONS), n=1)
        hint = f" Did you mean '{_KNOWN_OPTIONS[close[0]]}'?" if close else ""
        msg = (
            "this source does not know it." + hint + " Kafka client settings take the prefix "
            "'kafka.', e.g. 'kafka.security.protocol'."
        )
        raise InvalidOptionError(key, msg)


def _parse_subscription(raw: Mapping[str, str]) -> Subscription:
    given = [name for name in _SUBSCRIPTION_OPTIONS if name.lower() in raw]
    if len(given) != 1:
        found = ", ".join(given) if given else "none"
        msg = (
            "exactly one of 'subscribe', 'subscribePattern' or 'assign' must be set "
            f"(found: {found})"
        )
        raise InvalidOptionError("subscribe/subscribePattern/assign", msg)
    name = given[0]
    value = raw[name.lower()]
    if name == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            msg = f"no topic to subscribe to in {value!r}; give a comma-separated list of topics"
            raise InvalidOptionError(name, msg)
        return SubscribeTopics(topics)
    if name == "subscribePattern":
        if not value.strip():
            msg = "the pattern is empty; give a regular expression such as 'orders-.*'"
            raise InvalidOptionError(name, msg)
        try:
            re.compile(value)
        except re.error as exc:
            msg = f"{value!r} is not a valid regular expression: {exc}"
            raise InvalidOptionError(name, msg) from None
        return SubscribePattern(value)
    return AssignPartitions(_parse_assign(value))


def _parse_assign(value: str) -> frozenset[TopicPartition]:
    example = 'e.g. {"topicA":[0,1],"topicB":[2,4]}'
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        msg = f"{value!r} is not JSON ({exc.msg}); {example}"
        raise InvalidOptionError("assign", msg) from None
    if not isinstance(parsed, dict) or not parsed:
        raise InvalidOptionError("assign", f"expected a non-empty JSON object, {example}")
    partitions = set()
    for topic, numbers in parsed.items():
        if not isinstance(numbers, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers
        ):
            msg = f"topic {topic!r} must map to a list of partition numbers >= 0, {example}"
            raise InvalidOptionError("assign", msg)
        partitions.update(TopicPartition(topic, n) for n in numbers)
    if not partitions:
        raise InvalidOptionError("assign", f"no partition is listed, {example}")
    return frozenset(partitions)


def _parse_bounds(
    raw: Mapping[str, str], mode: Mode, subscription: Subscription
) -> tuple[OffsetBound, OffsetBound | None]:
    strategy = raw.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        msg = f"{strategy!r} is not valid; use 'error' (fail) or 'latest'"
        raise InvalidOptionError("startingOffsetsByTimestampStrategy", msg)
    if mode == "stream":
        for name in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"):
            if name.lower() in raw:
                msg = "it is only valid for batch queries (spark.read); a stream has no end"
                raise InvalidOptionError(name, msg)
        starting = _parse_time_bound(raw, "starting", subscription, strategy)
        if starting is None:
            starting = _parse_bound(raw, "startingOffsets", OffsetBound.latest(), subscription)
        return starting, None
    ending = _parse_time_bound(raw, "ending", subscription, "latest")
    starting = _parse_time_bound(raw, "starting", subscription, strategy)
    if starting is not None:
        return starting, ending or _parse_bound(
            raw, "endingOffsets", OffsetBound.latest(), subscription
        )
    starting = _parse_bound(raw, "startingOffsets", OffsetBound.earliest(), subscription)
    if starting.keyword == "latest" or _has_marker(starting, LATEST_OFFSET):
        msg = "'latest' (or -1) is not valid for a batch query's start; use 'earliest' or offsets"
        raise InvalidOptionError("startingOffsets", msg)
    if ending is not None:
        return starting, ending
    ending = _parse_bound(raw, "endingOffsets", OffsetBound.latest(), subscription)
    if ending.keyword == "earliest" or _has_marker(ending, EARLIEST_OFFSET):
        msg = "'earliest' (or -2) is not valid for a batch query's end; use 'latest' or offsets"
        raise InvalidOptionError("endingOffsets", msg)
    return starting, ending


def _parse_time_bound(
    raw: Mapping[str, str],
    side: Literal["starting", "ending"],
    subscription: Subscription,
    no_match: Literal["error", "latest"] | str,
) -> OffsetBound | None:
    """``<side>Timestamp`` wins over ``<side>OffsetsByTimestamp``, which wins over offsets."""
    single = f"{side}Timestamp"
    value = raw.get(single.lower())
    if value is not None:
        millis = _parse_millis(single, value)
        return OffsetBound("timestamp", timestamp=millis, no_match=no_match)  # type: ignore[arg-type]
    per_partition = f"{side}OffsetsByTimestamp"
    value = raw.get(per_partition.lower())
    if value is None:
        return None
    example = '{"topicA":{"0":1700000000000,"1":1700000000000}} (milliseconds since the epoch)'

    def timestamp_problem(topic: str, partition: str, millis: object) -> str | None:
        if isinstance(millis, bool) or not isinstance(millis, int) or millis < 0:
            return f"{topic}-{partition}: {millis!r} is not a timestamp in milliseconds >= 0"
        return None

    stamps = _parse_partition_map(
        per_partition,
        value,
        example,
        not_json=f"{value!r} is not JSON; use {example}",
        not_object=f"expected a JSON object like {example}",
        problem=timestamp_problem,
    )
    for tp in stamps:
        if not subscription.matches(tp.topic):
            msg = f"{tp} is not part of the subscription {subscription.describe()}"
            raise InvalidOptionError(per_partition, msg)
    return OffsetBound("timestamp", by_timestamp=stamps, no_match=no_match)  # type: ignore[arg-type]


def _parse_millis(name: str, value: str) -> int:
    try:
        millis = int(value.strip())
    except ValueError:
        millis = -1
    if millis < 0:
        msg = f"{value!r} is not valid; use milliseconds since the epoch, e.g. 1700000000000"
        raise InvalidOptionError(name, msg)
    return millis


_DURATION = re.compile(
    r"^\s*(\d+)\s*(ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)?\s*$"
)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def _parse_duration(raw: Mapping[str, str], name: str, default: int) -> int:
    """Spark's duration strings: ``100ms``, ``30s``, ``5 minutes``, ``15m``, ``1h``; bare: ms."""
    value = raw.get(name.lower())
    if value is None:
        return default
    match = _DURATION.match(value.lower())
    if match is None:
        msg = f"{value!r} is not a duration; use e.g. '500ms', '30 seconds', '15m' or '1h'"
        raise InvalidOptionError(name, msg)
    unit = match.group(2) or "ms"
    key = "ms" if unit == "ms" else ("m" if unit.startswith("mi") or unit == "m" else unit[0])
    return int(match.group(1)) * _UNIT_MS[key]


def _parse_positive_duration(raw: Mapping[str, str], name: str, default: int) -> int:
    """Parse a duration that must be above zero: a timeout of nothing would fail at once."""
    millis = _parse_duration(raw, name, default)
    if millis <= 0:
        msg = f"{raw[name.lower()]!r} is not valid; use a positive duration, e.g. '60s'"
        raise InvalidOptionError(name, msg)
    return millis


def _parse_group(raw: Mapping[str, str]) -> str | None:
    value = raw.get("commitoffsetstogroup")
    if value is None:
        return None
    if not value.strip():
        msg = "it is empty; give the consumer group id whose lag tools should show this query"
        raise InvalidOptionError("commitOffsetsToGroup", msg)
    return value.strip()


def _has_marker(bound: OffsetBound, marker: int) -> bool:
    return bound.specific is not None and marker in bound.specific.values()


def _parse_partition_map(
    name: str,
    value: str,
    example: str,
    not_json: str,
    not_object: str,
    problem: Callable[[str, str, object], str | None],
) -> dict[TopicPartition, int]:
    """Parse Spark's per-partition JSON, ``{"topic": {"0": number, ...}, ...}``, for ``name``.

    The offset and the timestamp options share this shape and its checks; ``problem`` says
    what is wrong with one entry's number (or its topic), ``None`` when nothing is.
    """
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        raise InvalidOptionError(name, not_json) from None
    if not isinstance(parsed, dict) or not parsed:
        raise InvalidOptionError(name, not_object)
    numbers: dict[TopicPartition, int] = {}
    for topic, partitions in parsed.items():
        if not isinstance(partitions, dict):
            raise InvalidOptionError(name, f"topic {topic!r} must map to an object; use {example}")
        for partition, number in partitions.items():
            if not (isinstance(partition, str) and partition.isdigit()):
                msg = f"{topic!r} partition {partition!r} is not a partition number; use {example}"
                raise InvalidOptionError(name, msg)
            found = problem(topic, partition, number)
            if found is not None:
                raise InvalidOptionError(name, found)
            numbers[TopicPartition(topic, int(partition))] = number
    return numbers


def _parse_bound(
    raw: Mapping[str, str], name: str, default: OffsetBound, subscription: Subscription
) -> OffsetBound:
    value = raw.get(name.lower())
    if value is None:
        return default
    stripped = value.strip()
    if stripped.lower() == "earliest":
        return OffsetBound.earliest()
    if stripped.lower() == "latest":
        return OffsetBound.latest()
    example = (
        '\'earliest\', \'latest\' or JSON like {"topicA":{"0":23,"1":-1}} '
        "(-2 earliest, -1 latest)"
    )
    def offset_problem(topic: str, partition: str, offset: object) -> str | None:
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < -2:
            return f"{topic}-{partition}: offset {offset!r} must be >= 0, -2 or -1"
        return None

    invalid = f"{value!r} is not valid; use {example}"
    specific = _parse_partition_map(
        name, stripped, example, not_json=invalid, not_object=invalid, problem=offset_problem
    )
    for tp in specific:
        if not subscription.matches(tp.topic) or (
            isinstance(subscription, AssignPartitions) and tp not in subscription.partitions
        ):
            msg = (
                f"{tp.topic}-{tp.partition} is not part of the subscription "
                f"{subscription.describe()}"
            )
            raise InvalidOptionError(name, msg)
    return OffsetBound("specific", specific)


def _parse_parallelism(raw: Mapping[str, str]) -> int | None:
    """Parse a slot count, or ``auto`` (returned as ``None``: counted at each batch boundary)."""
    value = raw.get("parallelism")
    if value is not None and value.strip().lower() == "auto":
        return None
    try:
        return _parse_positive_int(raw, "parallelism")
    except InvalidOptionError:
        msg = f"{value!r} is not valid; use a positive integer or 'auto'"
        raise InvalidOptionError("parallelism", msg) from None


def _parse_bool(raw: Mapping[str, str], name: str, default: bool) -> bool:
    value = raw.get(name.lower())
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise InvalidOptionError(name, f"{value!r} is not a boolean; use 'true' or 'false'")
    return lowered == "true"


def _parse_positive_int(raw: Mapping[str, str], name: str) -> int | None:
    value = raw.get(name.lower())
    if value is None:
        return None
    try:
        number = int(value.strip())
    except ValueError:
        number = 0
    if number <= 0:
        raise InvalidOptionError(name, f"{value!r} is not valid; use a positive integer")
    return number


def _parse_non_negative_int(raw: Mapping[str, str], name: str, default: int) -> int:
    value = raw.get(name.lower())
    if value is None:
        return default
    try:
        number = int(value.strip())
    except ValueError:
        number = -1
    if number < 0:
        raise InvalidOptionError(name, f"{value!r} is not valid; use an integer >= 0")
    return number
