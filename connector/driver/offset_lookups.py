"""Driver side: where partitions start and end, and what a consumer group committed.

Every offset lookup for a batch is one Kafka ListOffsets lookup covering all partitions
(librdkafka groups it per leader broker), never one request per partition: planning cost must
stay flat as topics grow to thousands of partitions.

The lookups go through ``Consumer.offsets_for_times``, with Kafka's own timestamps ``-1``
(latest) and ``-2`` (earliest) for the ends of a partition. It sends the same ListOffsets
request as ``AdminClient.list_offsets``, with the consumer's ``isolation.level``, but answers
with one plain list instead of one ``concurrent.futures.Future`` per partition, which at 2,048
partitions cost more than the request itself. ``integration_tests/test_offset_lookup.py``
checks both give the same offsets, under ``read_committed`` with an open transaction too.
The client's own work per call grows faster than its partition count, so a lookup is sent
as calls of at most :data:`OFFSETS_PER_CALL` partitions (at 10,000 partitions on the
benchmark machine: 630 ms in one call, 86 ms in calls of 500); the calls of one lookup are
spread over a few connections (:mod:`kafka_rescalable.driver.offset_calls`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from itertools import repeat
from operator import attrgetter, is_not, itemgetter
from typing import Any, Final

from kafka_rescalable.driver.kafka_connection import DriverConnection
from kafka_rescalable.driver.kafka_errors import group_not_authorized, kafka_error_of
from kafka_rescalable.errors import KafkaMetadataError
from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.partitions import describe_partitions, trusted_topic_partitions

__all__ = ["EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "OFFSETS_PER_CALL", "OffsetLookups"]

LATEST_TIMESTAMP: Final = -1
"""Kafka's ListOffsets timestamp for a partition's end (the last stable offset under
``read_committed``, else the high watermark)."""

EARLIEST_TIMESTAMP: Final = -2
"""Kafka's ListOffsets timestamp for the first offset still present in a partition."""

OFFSETS_PER_CALL: Final = 500
"""Partitions per ``offsets_for_times`` call. librdkafka's handling of one call grows
faster than linearly with its partitions (matching each answer against the request), so
10,000 partitions take 7 times longer in one call than in 20 calls of 500; below a few
hundred, the calls' round trips start to count instead."""

_GROUP_FORBIDDEN: Final = 30  # GROUP_AUTHORIZATION_FAILED

# Fields of confluent-kafka's TopicPartition, read in C.
_topic_of, _partition_of = attrgetter("topic"), attrgetter("partition")
_offset_of, _error_of = attrgetter("offset"), attrgetter("error")


class OffsetLookups:
    """Offset lookups through ``connection``, with its retries.

    ``offsets_per_call`` is how many partitions one ``offsets_for_times`` call asks for
    (:data:`OFFSETS_PER_CALL`; tests make it small).
    """

    def __init__(
        self, connection: DriverConnection, offsets_per_call: int = OFFSETS_PER_CALL
    ) -> None:
        self._connection = connection
        self._offsets_per_call = offsets_per_call

    def earliest(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """Return the first offset still present in each partition."""
        return self._list_offsets(dict.fromkeys(partitions, EARLIEST_TIMESTAMP))

    def latest(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """Return the end of each partition.

        That is the high watermark, or under ``read_committed`` the last stable offset, so a
        batch never waits for an open transaction.
        """
        return self._list_offsets(dict.fromkeys(partitions, LATEST_TIMESTAMP))

    def offsets_for_times(self, times: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Return, per partition, the first offset whose record timestamp is at or after the time.

        The offset is -1 where no record is that recent (Kafka's offsets-for-times lookup).
        """
        return self._list_offsets(times)

    def _list_offsets(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """One ListOffsets lookup for all partitions, each with its timestamp (or -1, -2).

        Raises
        ------
        KafkaMetadataError
            When the lookup fails, or still fails for some partition, once the retries are
            spent; the message names the partitions that failed and the last Kafka error.
        """
        if not timestamps:
            return {}
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        # Built with map (a TopicPartition is a tuple): thousands per batch, one Python-level
        # property call per field would cost more than the request.
        request = list(
            map(
                KafkaTopicPartition,
                map(itemgetter(0), timestamps),
                map(itemgetter(1), timestamps),
                timestamps.values(),
            )
        )

        step = self._offsets_per_call
        calls = [request[first : first + step] for first in range(0, len(request), step)]
        spread = self._connection.spread

        def call(client: Any, timeout: float) -> dict[TopicPartition, int]:
            return _offsets(spread.offsets_for_times(client, calls, timeout), timestamps)

        return self._connection.retry(
            lambda: f"list offsets of {_first_partitions(timestamps)}", call
        )

    def committed(
        self, group: str, partitions: Collection[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """Return the offsets ``group`` committed; partitions without one are left out.

        Asked through the admin client, not a consumer of the group: nothing joins the group
        (its members, if some still run, are not rebalanced) and nothing is committed to it.
        Under ``read_committed``, an offset still inside an open transaction is waited for.
        A consumer's ``committed()`` would only time out where the principal may not describe
        the group; the admin client says so.

        Raises
        ------
        KafkaAuthorizationError
            When the principal may not describe the group.
        KafkaMetadataError
            When the lookup still fails once the retries are spent.
        """
        if not partitions:
            return {}
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        asked = ConsumerGroupTopicPartitions(
            group, [KafkaTopicPartition(tp.topic, tp.partition) for tp in partitions]
        )
        connection = self._connection
        stable = connection.options.kafka_settings.get("isolation.level") == "read_committed"

        def call(_: Any, timeout: float) -> dict[TopicPartition, int]:
            futures = connection.admin().list_consumer_group_offsets(
                [asked], request_timeout=timeout, require_stable=stable
            )
            try:
                answer = futures[group].result()
            except KafkaException as exc:
                if getattr(kafka_error_of(exc), "code", lambda: None)() == _GROUP_FORBIDDEN:
                    raise group_not_authorized(group, connection.options) from exc
                raise
            found = _offsets(answer.topic_partitions, partitions)
            return {tp: offset for tp, offset in found.items() if offset >= 0}

        return connection.retry(f"read the offsets consumer group '{group}' committed", call)


def _offsets(found: list[Any], asked: Collection[TopicPartition]) -> dict[TopicPartition, int]:
    """Read one offset per asked partition from a confluent-kafka answer, or fail naming them.

    ``asked`` is iterated in the order the request was made from it.

    Raises
    ------
    KafkaMetadataError
        Naming the partitions that failed (the first five) and the first Kafka error, or the
        partitions for which no offset came back.
    """
    if any(map(is_not, map(_error_of, found), repeat(None))):
        failed = [ktp for ktp in found if ktp.error is not None]
        shown = ", ".join(f"{ktp.topic}-{ktp.partition}: {ktp.error.str()}" for ktp in failed[:5])
        more = f" and {len(failed) - 5} more partitions" if len(failed) > 5 else ""
        raise KafkaMetadataError(f"{shown}{more}", failed[0].error)
    # The usual answer: each asked partition's offset where it was asked (librdkafka fills in
    # the request's own list), read in C-level passes, as a driver asks thousands per batch.
    # It is keyed by the asked objects themselves, which the planning's other maps share
    # (see TopicLookups._known): keyed by new ones, each with a new topic string, every
    # later lookup compares keys field by field instead of by identity, which cost some 90 ms
    # of a batch's planning CPU and 30 ms of its progress report at 10,000 partitions in a
    # running stream (benchmarks/RESULTS.md, twelfth session).
    ordered = list(asked)
    if (
        len(found) == len(ordered)
        and list(map(_partition_of, found)) == list(map(_partition_of, ordered))
        and list(map(_topic_of, found)) == list(map(_topic_of, ordered))
    ):
        offsets = dict(zip(ordered, map(_offset_of, found), strict=True))
        if len(offsets) == len(ordered):
            return offsets
    # Any other order, read in C-level passes too. A TopicPartition equals its key.
    keys = zip(map(_topic_of, found), map(_partition_of, found), strict=True)
    offsets = dict(zip(trusted_topic_partitions(keys), map(_offset_of, found), strict=True))
    wanted = asked.keys() if isinstance(asked, Mapping) else frozenset(asked)
    if len(offsets) == len(found) == len(wanted) and offsets.keys() == wanted:
        return offsets
    ours = {(tp.topic, tp.partition): tp for tp in asked}
    offsets = {ours[(ktp.topic, ktp.partition)]: ktp.offset for ktp in found}
    if len(offsets) != len(ours):
        missing = describe_partitions([tp for tp in ours.values() if tp not in offsets])
        raise KafkaMetadataError(f"no offset came back for {missing}")
    return offsets


def _first_partitions(partitions: Collection[TopicPartition]) -> str:
    shown = sorted(partitions)[:5]
    more = f" and {len(partitions) - 5} more" if len(partitions) > 5 else ""
    return describe_partitions(shown) + more
