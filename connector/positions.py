"""Resolve ``startingOffsets`` / ``endingOffsets`` into a concrete offset per partition."""

from __future__ import annotations

from collections.abc import Collection

from connector.errors import InvalidOptionError
from connector.kafka_metadata import KafkaMetadata, describe_partitions, missing_partitions
from connector.options import EARLIEST_OFFSET, LATEST_OFFSET, OffsetBound
from state import TopicPartition

__all__ = ["resolve_bound"]


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
    assert bound.specific is not None
    absent = missing_partitions(bound.specific, partitions)
    if absent:
        msg = (
            f"it names {describe_partitions(absent)}, which do not exist; existing partitions "
            f"of the subscription: {describe_partitions(partitions) or 'none'}"
        )
        raise InvalidOptionError(option, msg)
    unlisted = missing_partitions(partitions, bound.specific)
    if unlisted:
        msg = (
            f"per-partition offsets must list every partition of the subscription; missing "
            f"{describe_partitions(unlisted)}. Use -2 for earliest and -1 for latest"
        )
        raise InvalidOptionError(option, msg)
    wants_earliest = [tp for tp, o in bound.specific.items() if o == EARLIEST_OFFSET]
    wants_latest = [tp for tp, o in bound.specific.items() if o == LATEST_OFFSET]
    resolved = {tp: o for tp, o in bound.specific.items() if o >= 0}
    resolved.update(metadata.earliest(wants_earliest))
    resolved.update(metadata.latest(wants_latest))
    return resolved

