"""Driver side: which partitions a subscription covers and where they start and end.

Every offset lookup for a batch is one Kafka ListOffsets lookup covering all partitions
(librdkafka groups it per leader broker), never one request per partition: planning cost must
stay flat as topics grow to thousands of partitions.

The lookups go through ``Consumer.offsets_for_times``, with Kafka's own timestamps ``-1``
(latest) and ``-2`` (earliest) for the ends of a partition. It sends the same ListOffsets
request as ``AdminClient.list_offsets``, with the consumer's ``isolation.level``, but answers
with one plain list instead of one ``concurrent.futures.Future`` per partition, which at 2,048
partitions cost more than the request itself. ``integration_tests/test_offset_lookup.py``
checks both give the same offsets, under ``read_committed`` with an open transaction too.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final, TypeVar

from connector.errors import KafkaMetadataError
from connector.options import AssignPartitions, KafkaSourceOptions, Subscription
from state import TopicPartition

__all__ = ["EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "KafkaMetadata"]

_T = TypeVar("_T")

LATEST_TIMESTAMP: Final = -1
"""Kafka's ListOffsets timestamp for a partition's end (the last stable offset under
``read_committed``, else the high watermark)."""

EARLIEST_TIMESTAMP: Final = -2
"""Kafka's ListOffsets timestamp for the first offset still present in a partition."""


class KafkaMetadata:
    """The driver's Kafka connection for planning; close it (or use ``with``) when done.

    One instance lives as long as its reader, so a streaming query connects once and every
    micro-batch reuses the connections and the cached cluster metadata.

    Not picklable on purpose: Spark ships readers to executors, and a live client must never
    travel with them.
    """

    def __init__(self, options: KafkaSourceOptions, timeout_s: float = 30.0) -> None:
        from confluent_kafka import Consumer

        self._options = options
        self._timeout_s = timeout_s
        self._read_committed = options.kafka_settings.get("isolation.level") == "read_committed"
        # A consumer only for metadata and offset lookups: it never subscribes, assigns,
        # fetches or commits. librdkafka defaults to read_committed; Kafka's Java client, and
        # so Spark, to read_uncommitted, which is what applies unless the user set it.
        self._consumer: Any = Consumer(
            {
                **options.kafka_settings,
                "bootstrap.servers": options.bootstrap_servers,
                # Spark's built-in source also names its driver consumer's group "...-driver".
                "group.id": options.group_id or f"{options.group_id_prefix}-{uuid.uuid4()}-driver",
                "enable.auto.commit": False,
                "isolation.level": "read_committed" if self._read_committed else "read_uncommitted",
            }
        )
        # Each partition's TopicPartition, made (and validated) once per reader, not per batch.
        self._known: dict[tuple[str, int], TopicPartition] = {}

    def __enter__(self) -> KafkaMetadata:
        """Use the client for one block; it is closed when the block ends."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the client even when the block failed, so no connection is left open."""
        self.close()

    def close(self) -> None:
        """Close the client and its connections; calling it again does nothing."""
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()

    def __getstate__(self) -> None:
        """Refuse pickling: a live Kafka client cannot be shipped to another process."""
        raise TypeError("KafkaMetadata holds a live Kafka client and cannot be pickled")

    def partitions(self, subscription: Subscription) -> frozenset[TopicPartition]:
        """Return the partitions that exist now and belong to ``subscription``.

        For ``assign``, only the assigned partitions that exist are returned: the caller
        decides whether a missing one is an error (first batch) or data loss (later).
        """
        client = self._client()
        metadata = self._retry("list topics", lambda: client.list_topics(timeout=self._timeout_s))
        found: set[TopicPartition] = set()
        for name, topic in metadata.topics.items():
            if topic.error is not None or not subscription.matches(name):
                continue
            if name.startswith("__") and not isinstance(subscription, AssignPartitions):
                continue  # Kafka's internal topics never match a pattern, as in Java
            found.update(self._topic_partitions(name, topic.partitions))
        if isinstance(subscription, AssignPartitions):
            found &= subscription.partitions
        return frozenset(found)

    def _topic_partitions(self, topic: str, numbers: Iterable[int]) -> list[TopicPartition]:
        known = self._known
        found = []
        for number in numbers:
            tp = known.get((topic, number))
            if tp is None:
                tp = known[(topic, number)] = TopicPartition(topic, number)
            found.append(tp)
        return found

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
            When the lookup fails, or still fails for some partition, after the retries of
            ``fetchOffset.numRetries``; the message names the partitions that failed.
        """
        if not timestamps:
            return {}
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        request = [KafkaTopicPartition(tp.topic, tp.partition, ts) for tp, ts in timestamps.items()]
        ours = {(tp.topic, tp.partition): tp for tp in timestamps}
        client = self._client()

        def call() -> dict[TopicPartition, int]:
            found = client.offsets_for_times(request, timeout=self._timeout_s)
            failed = [ktp for ktp in found if ktp.error is not None]
            if failed:
                shown = ", ".join(
                    f"{ktp.topic}-{ktp.partition}: {ktp.error.str()}" for ktp in failed[:5]
                )
                more = f" and {len(failed) - 5} more partitions" if len(failed) > 5 else ""
                raise KafkaMetadataError(f"{shown}{more}", failed[0].error)
            offsets = {ours[(ktp.topic, ktp.partition)]: ktp.offset for ktp in found}
            if len(offsets) != len(ours):
                missing = describe_partitions([tp for tp in ours.values() if tp not in offsets])
                raise KafkaMetadataError(f"no offset came back for {missing}")
            return offsets

        return self._retry("list offsets", call)

    def _client(self) -> Any:
        """Return the live client; using a closed ``KafkaMetadata`` is a bug, said plainly."""
        if self._consumer is None:
            raise KafkaMetadataError("this KafkaMetadata was closed; open a new one")
        return self._consumer

    def _retry(self, what: str, call: Callable[[], _T]) -> _T:
        attempts = self._options.fetch_offset_retries + 1
        for attempt in range(attempts):
            try:
                return call()
            except Exception as exc:  # confluent-kafka raises KafkaException or plain errors
                if attempt + 1 >= attempts:
                    msg = (
                        f"could not {what} from {self._options.bootstrap_servers} after "
                        f"{attempts} attempts: {exc}. Check 'kafka.bootstrap.servers' and that "
                        "the brokers are reachable from the Spark driver"
                    )
                    # The Kafka error itself, also when a failed partition was reported here.
                    raise KafkaMetadataError(msg, getattr(exc, "kafka_error", exc)) from exc
                time.sleep(self._options.fetch_offset_retry_interval_ms / 1000)
        raise AssertionError("unreachable")


def missing_partitions(
    wanted: Collection[TopicPartition], existing: Collection[TopicPartition]
) -> list[TopicPartition]:
    """Return the partitions of ``wanted`` that do not exist, sorted for stable messages."""
    existing_set = set(existing)
    return sorted(tp for tp in wanted if tp not in existing_set)


def describe_partitions(
    partitions: Collection[TopicPartition] | Mapping[TopicPartition, Any],
) -> str:
    """``orders-0, orders-3`` for messages."""
    return ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(partitions))
