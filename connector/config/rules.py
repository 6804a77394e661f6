"""Rules between options, checked after the table pass has parsed each option on its own.

Each rule takes the values :func:`kafka_rescalable.config.table.read_table` returned, keyed by the
options' Spark names, and either combines them into one field of
:class:`~kafka_rescalable.config.options.KafkaSourceOptions` or refuses the combination, naming the
option to change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_rescalable.config.values import (
    EARLIEST_OFFSET,
    LATEST_OFFSET,
    AssignPartitions,
    Mode,
    OffsetBound,
    Subscription,
)
from kafka_rescalable.errors import InvalidOptionError

__all__ = ["dead_letters_outside", "offset_bounds", "subscription"]

_SUBSCRIPTION_OPTIONS = ("subscribe", "subscribePattern", "assign")


def subscription(values: Mapping[str, Any]) -> Subscription:
    """Exactly one of ``subscribe``, ``subscribePattern`` and ``assign`` says what to read.

    Raises
    ------
    InvalidOptionError
        When none or several are given.
    """
    given = [name for name in _SUBSCRIPTION_OPTIONS if values[name] is not None]
    if len(given) != 1:
        found = ", ".join(given) if given else "none"
        msg = (
            "exactly one of 'subscribe', 'subscribePattern' or 'assign' must be set "
            f"(found: {found})"
        )
        raise InvalidOptionError("subscribe/subscribePattern/assign", msg)
    return values[given[0]]


def dead_letters_outside(topic: str | None, subscribed: Subscription) -> None:
    """Refuse a ``deadLetterTopic`` the query reads: its dead letters would be read again.

    Raises
    ------
    InvalidOptionError
        When the subscription takes the topic.
    """
    if topic is not None and subscribed.matches(topic):
        msg = (
            f"the query reads {topic!r} ({subscribed.describe()}), so it would read its own "
            "dead letters and write them again; name a topic outside the subscription"
        )
        raise InvalidOptionError("deadLetterTopic", msg)


def offset_bounds(
    values: Mapping[str, Any], mode: Mode, subscribed: Subscription
) -> tuple[OffsetBound, OffsetBound | None]:
    """Combine the offset and timestamp options into the start and, for a batch, the end.

    ``<side>Timestamp`` wins over ``<side>OffsetsByTimestamp``, which wins over
    ``<side>Offsets`` (the table does not read the losers). Named partitions must belong to
    the subscription. A batch's start made of offsets must not be ``latest`` and its end must
    not be ``earliest``: that batch would read nothing, or would read backwards. Neither is
    checked when the start is a time, as Spark does not check it either.

    Raises
    ------
    InvalidOptionError
        Naming the option whose partitions or markers are refused.
    """
    strategy = values["startingOffsetsByTimestampStrategy"]
    if mode == "stream":
        starting = _time_bound(values, "starting", subscribed, strategy)
        return starting or _offsets_bound(values, "startingOffsets", subscribed), None
    ending = _time_bound(values, "ending", subscribed, "latest")
    starting = _time_bound(values, "starting", subscribed, strategy)
    if starting is not None:
        return starting, ending or _offsets_bound(values, "endingOffsets", subscribed)
    starting = _offsets_bound(values, "startingOffsets", subscribed)
    if starting.keyword == "latest" or starting.has_marker(LATEST_OFFSET):
        msg = "'latest' (or -1) is not valid for a batch query's start; use 'earliest' or offsets"
        raise InvalidOptionError("startingOffsets", msg)
    if ending is not None:
        return starting, ending
    ending = _offsets_bound(values, "endingOffsets", subscribed)
    if ending.keyword == "earliest" or ending.has_marker(EARLIEST_OFFSET):
        msg = "'earliest' (or -2) is not valid for a batch query's end; use 'latest' or offsets"
        raise InvalidOptionError("endingOffsets", msg)
    return starting, ending


def _time_bound(
    values: Mapping[str, Any], side: str, subscribed: Subscription, no_match: str
) -> OffsetBound | None:
    """Read ``<side>Timestamp`` or else ``<side>OffsetsByTimestamp``; ``None`` if neither."""
    millis = values[f"{side}Timestamp"]
    if millis is not None:
        return OffsetBound("timestamp", timestamp=millis, no_match=no_match)  # type: ignore[arg-type]
    per_partition = f"{side}OffsetsByTimestamp"
    stamps = values[per_partition]
    if stamps is None:
        return None
    for tp in stamps:
        if not subscribed.matches(tp.topic):
            msg = f"{tp} is not part of the subscription {subscribed.describe()}"
            raise InvalidOptionError(per_partition, msg)
    return OffsetBound("timestamp", by_timestamp=stamps, no_match=no_match)  # type: ignore[arg-type]


def _offsets_bound(values: Mapping[str, Any], name: str, subscribed: Subscription) -> OffsetBound:
    """``startingOffsets`` or ``endingOffsets``, its named partitions checked."""
    bound: OffsetBound = values[name]
    for tp in bound.specific or {}:
        if not subscribed.matches(tp.topic) or (
            isinstance(subscribed, AssignPartitions) and tp not in subscribed.partitions
        ):
            msg = f"{tp} is not part of the subscription {subscribed.describe()}"
            raise InvalidOptionError(name, msg)
    return bound
