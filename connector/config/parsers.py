"""The kinds of option values: each turns one option's text into a value or refuses it.

A parser is called as ``parser(name, text)``: ``name`` is the option as Spark users spell it,
for the message, and ``text`` its raw value. It returns the value, ``None`` for a text that
counts as not given, or raises :class:`~kafka_rescalable.errors.InvalidOptionError`. Parsers see one
option only; rules that need another option (the subscription, the read mode) run after the
table pass, in :mod:`kafka_rescalable.config.rules`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka_rescalable.config.values import (
    AssignPartitions,
    DeliveryGuarantee,
    OffsetBound,
    Parallelism,
    SubscribePattern,
    SubscribeTopics,
)
from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.state import TopicPartition

__all__ = [
    "Choice",
    "NonBlank",
    "Parser",
    "parse_assign",
    "parse_boolean",
    "parse_byte_size",
    "parse_delivery_guarantee",
    "parse_duration",
    "parse_epoch_millis",
    "parse_non_negative_int",
    "parse_offsets",
    "parse_optional_text",
    "parse_parallelism",
    "parse_pattern",
    "parse_positive_duration",
    "parse_positive_int",
    "parse_timestamps",
    "parse_topics",
]

Parser = Callable[[str, str], Any]
"""``parser(name, text)``: the option's value, or ``None`` when the text counts as not given."""


def parse_boolean(name: str, text: str) -> bool:
    """Read ``true`` or ``false``, in any case."""
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise InvalidOptionError(name, f"{text!r} is not a boolean; use 'true' or 'false'")
    return lowered == "true"


def parse_positive_int(name: str, text: str) -> int:
    """Read an integer above zero: counts and sizes of which zero would mean nothing."""
    return _integer_from(name, text, 1, "a positive integer")


def parse_non_negative_int(name: str, text: str) -> int:
    """Read an integer from zero up: retries and waits, where zero is a real choice."""
    return _integer_from(name, text, 0, "an integer >= 0")


def _integer_from(name: str, text: str, minimum: int, valid: str) -> int:
    """Read an integer of at least ``minimum``; ``valid`` names such a value in the message."""
    try:
        number = int(text.strip())
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise InvalidOptionError(name, f"{text!r} is not valid; use {valid}")
    return number


_DURATION = re.compile(
    r"^\s*(\d+)\s*(ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)?\s*$"
)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_duration(name: str, text: str) -> int:
    """Spark's duration strings, in milliseconds: ``100ms``, ``30s``, ``5 minutes``, ``1h``.

    A bare number is milliseconds, as in Spark's ``maxTriggerDelay``.
    """
    match = _DURATION.match(text.lower())
    if match is None:
        msg = f"{text!r} is not a duration; use e.g. '500ms', '30 seconds', '15m' or '1h'"
        raise InvalidOptionError(name, msg)
    unit = match.group(2) or "ms"
    key = "ms" if unit == "ms" else ("m" if unit.startswith("mi") or unit == "m" else unit[0])
    return int(match.group(1)) * _UNIT_MS[key]


def parse_positive_duration(name: str, text: str) -> int:
    """Read a duration above zero: a timeout of nothing would fail at once."""
    millis = parse_duration(name, text)
    if millis <= 0:
        msg = f"{text!r} is not valid; use a positive duration, e.g. '60s'"
        raise InvalidOptionError(name, msg)
    return millis


_BYTE_SIZE = re.compile(r"^\s*(\d+)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?\s*$")
_UNIT_BYTES = {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_byte_size(name: str, text: str) -> int:
    """Spark's byte strings, in bytes: ``1048576``, ``512k``, ``64m``, ``1g`` (units of 1024).

    A bare number is bytes and ``kb``/``kib`` mean what ``k`` means, as Spark reads its own
    byte sizes (``spark.sql.files.maxPartitionBytes``); zero would admit nothing: refused.
    """
    match = _BYTE_SIZE.match(text.lower())
    size = int(match.group(1)) * _UNIT_BYTES[(match.group(2) or "b")[0]] if match else 0
    if size <= 0:
        msg = f"{text!r} is not a size; use a positive size, e.g. '1048576' (bytes), '64m' or '1g'"
        raise InvalidOptionError(name, msg)
    return size


def parse_epoch_millis(name: str, text: str) -> int:
    """Read a time in milliseconds since the epoch, as Kafka's record timestamps are."""
    return _integer_from(name, text, 0, "milliseconds since the epoch, e.g. 1700000000000")


def parse_optional_text(name: str, text: str) -> str | None:
    """Any text; an empty one counts as not given, so the option's default applies."""
    return text or None


@dataclass(frozen=True)
class Choice:
    """One of a few words, in any case and with spaces around; returned lower-cased.

    Parameters
    ----------
    values
        The valid words, lower-cased.
    hint
        How the message lists them, e.g. ``'error' (fail) or 'latest'``.
    """

    values: tuple[str, ...]
    hint: str

    def __call__(self, name: str, text: str) -> str:
        """Return the chosen word, or refuse naming the valid ones."""
        word = text.strip().lower()
        if word not in self.values:
            raise InvalidOptionError(name, f"{word!r} is not valid; use {self.hint}")
        return word


@dataclass(frozen=True)
class NonBlank:
    """Text that must hold more than spaces; returned stripped.

    Parameters
    ----------
    when_blank
        The message for a blank value: what the option should name instead.
    """

    when_blank: str

    def __call__(self, name: str, text: str) -> str:
        """Return the stripped text, or refuse a blank one."""
        if not text.strip():
            raise InvalidOptionError(name, self.when_blank)
        return text.strip()


_GUARANTEES = Choice(
    tuple(guarantee.value for guarantee in DeliveryGuarantee),
    " or ".join(repr(guarantee.value) for guarantee in DeliveryGuarantee),
)


def parse_delivery_guarantee(name: str, text: str) -> DeliveryGuarantee:
    """Read the sink's ``deliveryGuarantee``: ``at-least-once`` or ``exactly-once``, any case."""
    return DeliveryGuarantee(_GUARANTEES(name, text))


def parse_parallelism(name: str, text: str) -> Parallelism:
    """Read a slot count, or ``auto`` (counted again at each batch boundary)."""
    if text.strip().lower() == "auto":
        return Parallelism.auto()
    try:
        return Parallelism.fixed(parse_positive_int(name, text))
    except InvalidOptionError:
        msg = f"{text!r} is not valid; use a positive integer or 'auto'"
        raise InvalidOptionError(name, msg) from None


def parse_topics(name: str, text: str) -> SubscribeTopics:
    """``subscribe``: comma-separated topic names, at least one."""
    topics = tuple(t.strip() for t in text.split(",") if t.strip())
    if not topics:
        msg = f"no topic to subscribe to in {text!r}; give a comma-separated list of topics"
        raise InvalidOptionError(name, msg)
    return SubscribeTopics(topics)


def parse_pattern(name: str, text: str) -> SubscribePattern:
    """``subscribePattern``: a regular expression that Python can compile."""
    if not text.strip():
        msg = "the pattern is empty; give a regular expression such as 'orders-.*'"
        raise InvalidOptionError(name, msg)
    try:
        re.compile(text)
    except re.error as exc:
        msg = f"{text!r} is not a valid regular expression: {exc}"
        raise InvalidOptionError(name, msg) from None
    return SubscribePattern(text)


def parse_assign(name: str, text: str) -> AssignPartitions:
    """``assign``: JSON mapping topics to lists of partition numbers."""
    example = 'e.g. {"topicA":[0,1],"topicB":[2,4]}'
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"{text!r} is not JSON ({exc.msg}); {example}"
        raise InvalidOptionError(name, msg) from None
    if not isinstance(parsed, dict) or not parsed:
        raise InvalidOptionError(name, f"expected a non-empty JSON object, {example}")
    partitions = set()
    for topic, numbers in parsed.items():
        if not isinstance(numbers, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers
        ):
            msg = f"topic {topic!r} must map to a list of partition numbers >= 0, {example}"
            raise InvalidOptionError(name, msg)
        partitions.update(TopicPartition(topic, n) for n in numbers)
    if not partitions:
        raise InvalidOptionError(name, f"no partition is listed, {example}")
    return AssignPartitions(frozenset(partitions))


_OFFSETS_EXAMPLE = (
    '\'earliest\', \'latest\' or JSON like {"topicA":{"0":23,"1":-1}} (-2 earliest, -1 latest)'
)


def parse_offsets(name: str, text: str) -> OffsetBound:
    """``earliest``, ``latest``, or Spark's per-partition JSON of offsets.

    Whether the partitions belong to the subscription, and which markers a batch accepts, are
    rules about other options: :mod:`kafka_rescalable.config.rules` checks them.
    """
    stripped = text.strip()
    if stripped.lower() == "earliest":
        return OffsetBound.earliest()
    if stripped.lower() == "latest":
        return OffsetBound.latest()

    def offset_problem(topic: str, partition: str, offset: object) -> str | None:
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < -2:
            return f"{topic}-{partition}: offset {offset!r} must be >= 0, -2 or -1"
        return None

    invalid = f"{text!r} is not valid; use {_OFFSETS_EXAMPLE}"
    specific = _parse_partition_map(
        name,
        stripped,
        _OFFSETS_EXAMPLE,
        not_json=invalid,
        not_object=invalid,
        problem=offset_problem,
    )
    return OffsetBound("specific", specific)


def parse_timestamps(name: str, text: str) -> dict[TopicPartition, int]:
    """Spark's per-partition JSON of timestamps in milliseconds since the epoch."""
    example = '{"topicA":{"0":1700000000000,"1":1700000000000}} (milliseconds since the epoch)'

    def timestamp_problem(topic: str, partition: str, millis: object) -> str | None:
        if isinstance(millis, bool) or not isinstance(millis, int) or millis < 0:
            return f"{topic}-{partition}: {millis!r} is not a timestamp in milliseconds >= 0"
        return None

    return _parse_partition_map(
        name,
        text,
        example,
        not_json=f"{text!r} is not JSON; use {example}",
        not_object=f"expected a JSON object like {example}",
        problem=timestamp_problem,
    )


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
