"""Resolve the starting and ending options into a concrete offset per partition.

``startingOffsets``, ``endingOffsets``, the timestamp options, and ``startingOffsetsFromGroup``
(whose decisions are :mod:`kafka_rescalable.state.group_start`'s).
"""

from __future__ import annotations

from collections.abc import Collection

from kafka_rescalable._logging import logger
from kafka_rescalable.config.options import (
    EARLIEST_OFFSET,
    LATEST_OFFSET,
    AssignPartitions,
    KafkaSourceOptions,
    OffsetBound,
)
from kafka_rescalable.driver.kafka_metadata import KafkaMetadata
from kafka_rescalable.errors import DataLossError, InvalidOptionError
from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.group_start import GroupStart, start_from_group
from kafka_rescalable.state.partitions import describe_partitions, missing_partitions

__all__ = ["check_assigned", "resolve_bound", "resolve_start"]


def resolve_start(
    options: KafkaSourceOptions,
    partitions: Collection[TopicPartition],
    metadata: KafkaMetadata,
) -> dict[TopicPartition, int]:
    """Return where a query without a checkpoint, or a batch read, starts each partition.

    With ``startingOffsetsFromGroup``, the group's committed offsets, and ``startingOffsets``
    (or a timestamp option) only for the partitions the group has no committed offset for: a
    per-partition JSON then has to list only those (see :mod:`kafka_rescalable.state.group_start`).

    Raises
    ------
    InvalidOptionError
        When the starting options name partitions that do not exist, or leave some out.
    DataLossError
        When a committed offset is out of its partition's range and ``failOnDataLoss`` is
        true.
    """
    group = options.starting_offsets_from_group
    if group is None:
        return resolve_bound(options.starting, "startingOffsets", partitions, metadata)
    committed = metadata.committed(group, partitions)
    start = start_from_group(
        group,
        partitions,
        committed,
        metadata.earliest(committed),
        metadata.latest(committed),
        fail_on_data_loss=options.fail_on_data_loss,
    )
    for loss in start.losses:
        if loss.fatal:
            raise DataLossError(loss.message)
        logger.warning("%s", loss.message)
    why = f", which consumer group '{group}' has no committed offset for"
    fallback = resolve_bound(
        options.starting, "startingOffsets", partitions, metadata, only=start.fallback, why=why
    )
    _log_group_start(options, start)
    return start.merged(fallback)


def _log_group_start(options: KafkaSourceOptions, start: GroupStart) -> None:
    subscription = options.subscription.describe()
    if not start.placed and start.fallback:
        logger.warning(
            "consumer group '%s' has no committed offset for any partition of %s: every "
            "partition starts where the starting options say. Check the group id "
            "('startingOffsetsFromGroup'), e.g. with kafka-consumer-groups --describe --group %s",
            start.group,
            subscription,
            start.group,
        )
        return
    logger.info(
        "Starting %d partitions of %s at the offsets consumer group '%s' committed, and %d "
        "without one where the starting options say",
        len(start.placed),
        subscription,
        start.group,
        len(start.fallback),
    )
    logger.debug(
        "From the group: %s; from the starting options: %s",
        describe_partitions(start.placed),
        describe_partitions(start.fallback) or "none",
    )


def resolve_bound(
    bound: OffsetBound,
    option: str,
    partitions: Collection[TopicPartition],
    metadata: KafkaMetadata,
    only: Collection[TopicPartition] | None = None,
    why: str = "",
) -> dict[TopicPartition, int]:
    """Turn ``bound`` into offsets for ``partitions``, with one lookup per marker kind.

    As in Spark's built-in source, per-partition JSON must name every partition of the
    subscription, so that a forgotten partition is an error rather than a silent default.
    With ``only``, just those partitions are resolved and the JSON must name them; it may
    name other existing ones too. ``why`` ends the message about partitions it leaves out.

    Raises
    ------
    InvalidOptionError
        When the JSON misses partitions it must list or names ones that do not exist.
    """
    needed = partitions if only is None else only
    if bound.keyword == "earliest":
        return metadata.earliest(needed)
    if bound.keyword == "latest":
        return metadata.latest(needed)
    if bound.keyword == "timestamp":
        return _resolve_times(bound, option, partitions, needed, metadata, why)
    assert bound.specific is not None
    _require_cover(
        bound.specific, option, partitions, needed, why + ". Use -2 for earliest and -1 for latest"
    )
    wanted = {tp: bound.specific[tp] for tp in needed}
    wants_earliest = [tp for tp, o in wanted.items() if o == EARLIEST_OFFSET]
    wants_latest = [tp for tp, o in wanted.items() if o == LATEST_OFFSET]
    resolved = {tp: o for tp, o in wanted.items() if o >= 0}
    resolved.update(metadata.earliest(wants_earliest))
    resolved.update(metadata.latest(wants_latest))
    return resolved


def _require_cover(
    named: Collection[TopicPartition],
    option: str,
    partitions: Collection[TopicPartition],
    needed: Collection[TopicPartition],
    hint: str,
) -> None:
    """Per-partition JSON must name only existing partitions and all ``needed``, as in Spark."""
    absent = missing_partitions(named, partitions)
    if absent:
        msg = (
            f"it names {describe_partitions(absent)}, which do not exist; existing partitions "
            f"of the subscription: {describe_partitions(partitions) or 'none'}"
        )
        raise InvalidOptionError(option, msg)
    unlisted = missing_partitions(needed, named)
    if unlisted:
        msg = (
            "per-partition values must list every partition of the subscription; missing "
            f"{describe_partitions(unlisted)}{hint}"
        )
        raise InvalidOptionError(option, msg)


def _resolve_times(
    bound: OffsetBound,
    option: str,
    partitions: Collection[TopicPartition],
    needed: Collection[TopicPartition],
    metadata: KafkaMetadata,
    why: str,
) -> dict[TopicPartition, int]:
    """Offsets of the first records at or after a time; ``no_match`` decides the rest."""
    side = "starting" if option.startswith("starting") else "ending"
    if bound.by_timestamp is None:
        name = f"{side}Timestamp"
        times = {tp: bound.timestamp for tp in needed}
    else:
        name = f"{side}OffsetsByTimestamp"
        _require_cover(bound.by_timestamp, name, partitions, needed, why + ". Give a time for each")
        times = {tp: bound.by_timestamp[tp] for tp in needed}
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
