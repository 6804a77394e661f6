"""Resolve ``startingOffsets`` / ``endingOffsets`` into a concrete offset per partition."""

from __future__ import annotations

from collections.abc import Collection

from connector.config.options import (
    EARLIEST_OFFSET,
    LATEST_OFFSET,
    AssignPartitions,
    KafkaSourceOptions,
    OffsetBound,
)
from connector.driver.kafka_metadata import KafkaMetadata
from connector.errors import InvalidOptionError
from state import TopicPartition
from state.partitions import describe_partitions, missing_partitions

__all__ = ["check_assigned", "resolve_bound"]


def resolve_bound(
    bound: OffsetBound,
    option: str,
    partitions: Collection[TopicPartition],
    metadata: KafkaMetadata,
) -> dict[TopicPartition, int]:
    """Turn ``bound`` into offsets for exactly ``partitions``, with one lookup per marker kind.

    As in Spark's built-in source, per-partition JSON must name every partition of the
    subscription, so that a forgotten partition is an error rather than a silent default.

    Raises
    ------
    InvalidOptionError
        When the JSON misses partitions of the subscription or names ones that do not exist.
    """
    if bound.keyword == "earliest":
        return metadata.earliest(partitions)
    if bound.keyword == "latest":
        return metadata.latest(partitions)
    if bound.keyword == "timestamp":
        return _resolve_times(bound, option, partitions, metadata)
    assert bound.specific is not None
    _require_exact_cover(
        bound.specific, option, partitions, "Use -2 for earliest and -1 for latest"
    )
    wants_earliest = [tp for tp, o in bound.specific.items() if o == EARLIEST_OFFSET]
    wants_latest = [tp for tp, o in bound.specific.items() if o == LATEST_OFFSET]
    resolved = {tp: o for tp, o in bound.specific.items() if o >= 0}
    resolved.update(metadata.earliest(wants_earliest))
    resolved.update(metadata.latest(wants_latest))
    return resolved


def _require_exact_cover(
    named: Collection[TopicPartition],
    option: str,
    partitions: Collection[TopicPartition],
    hint: str,
) -> None:
    """Per-partition JSON must name exactly the subscription's partitions, as in Spark."""
    absent = missing_partitions(named, partitions)
    if absent:
        msg = (
            f"it names {describe_partitions(absent)}, which do not exist; existing partitions "
            f"of the subscription: {describe_partitions(partitions) or 'none'}"
        )
        raise InvalidOptionError(option, msg)
    unlisted = missing_partitions(partitions, named)
    if unlisted:
        msg = (
            "per-partition values must list every partition of the subscription; missing "
            f"{describe_partitions(unlisted)}. {hint}"
        )
        raise InvalidOptionError(option, msg)


def _resolve_times(
    bound: OffsetBound, option: str, partitions: Collection[TopicPartition], metadata: KafkaMetadata
) -> dict[TopicPartition, int]:
    """Offsets of the first records at or after a time; ``no_match`` decides the rest."""
    side = "starting" if option.startswith("starting") else "ending"
    if bound.by_timestamp is None:
        name = f"{side}Timestamp"
        times = {tp: bound.timestamp for tp in partitions}
    else:
        name = f"{side}OffsetsByTimestamp"
        _require_exact_cover(bound.by_timestamp, name, partitions, "Give a time for each")
        times = dict(bound.by_timestamp)
    found = metadata.offsets_for_times(times)  # type: ignore[arg-type]
    unmatched = sorted(tp for tp, offset in found.items() if offset < 0)
    if unmatched and bound.no_match == "error":
        msg = (
            f"{describe_partitions(unmatched)} have no record at or after the given time; set "
            "'startingOffsetsByTimestampStrategy' to 'latest' to start those at their end"
        )
        raise InvalidOptionError(name, msg)
    found.update(metadata.latest(unmatched))
    return found


def check_assigned(options: KafkaSourceOptions, live: Collection[TopicPartition]) -> None:
    """Refuse an ``assign`` that names partitions which do not exist.

    Raises
    ------
    InvalidOptionError
        Naming the partitions that do not exist and the brokers asked.
    """
    if not isinstance(options.subscription, AssignPartitions):
        return
    absent = missing_partitions(options.subscription.partitions, live)
    if absent:
        msg = f"{describe_partitions(absent)} do not exist on {options.bootstrap_servers}"
        raise InvalidOptionError("assign", msg)
