"""Driver side: which partitions a subscription covers and where they start and end.

Every offset lookup for a batch is one ``list_offsets`` call covering all partitions (librdkafka
groups it per leader broker), never one request per partition: planning cost must stay flat
as topics grow to thousands of partitions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from connector.errors import KafkaMetadataError
from connector.options import AssignPartitions, KafkaSourceOptions, Subscription
from state import TopicPartition

__all__ = ["KafkaMetadata"]

_T = TypeVar("_T")

# Consumer-only settings that would make an admin client log a warning at creation.
_CONSUMER_ONLY_PREFIXES = (
    "fetch.",
    "max.partition.fetch.bytes",
    "queued.",
    "isolation.level",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "check.crcs",
    "partition.assignment.strategy",
    "group.",
    "auto.commit.interval.ms",
    "enable.partition.eof",
    "consume.callback.max.messages",
    "group.instance.id",
)


class KafkaMetadata:
    """A short-lived admin connection for planning; close it (or use ``with``) when done.

    Not picklable on purpose: Spark ships readers to executors, and a live client must never
    travel with them.
    """

    def __init__(self, options: KafkaSourceOptions, timeout_s: float = 30.0) -> None:
        from confluent_kafka.admin import AdminClient

        self._options = options
        self._timeout_s = timeout_s
        config: dict[str, Any] = {
            key: value
            for key, value in options.kafka_settings.items()
            if not key.startswith(_CONSUMER_ONLY_PREFIXES)
        }
        config["bootstrap.servers"] = options.bootstrap_servers
        self._admin = AdminClient(config)
        self._read_committed = options.kafka_settings.get("isolation.level") == "read_committed"

    def __enter__(self) -> KafkaMetadata:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop the client; librdkafka closes its connections when it is collected."""
        self._admin = None

    def __getstate__(self) -> None:
        raise TypeError("KafkaMetadata holds a live Kafka client and cannot be pickled")

    def partitions(self, subscription: Subscription) -> frozenset[TopicPartition]:
        """The partitions that exist now and belong to ``subscription``.

        For ``assign``, only the assigned partitions that exist are returned: the caller
        decides whether a missing one is an error (first batch) or data loss (later).
        """
        metadata = self._retry("list topics", lambda: self._admin.list_topics(timeout=self._timeout_s))
        found: set[TopicPartition] = set()
        for name, topic in metadata.topics.items():
            if topic.error is not None or not subscription.matches(name):
                continue
            if name.startswith("__") and not isinstance(subscription, AssignPartitions):
                continue  # Kafka's internal topics never match a pattern, as in Java
            found.update(TopicPartition(name, number) for number in topic.partitions)
        if isinstance(subscription, AssignPartitions):
            found &= subscription.partitions
        return frozenset(found)

    def earliest(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """The first offset still present in each partition."""
        from confluent_kafka.admin import OffsetSpec

        return self._list_offsets(partitions, OffsetSpec.earliest())

    def latest(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """The end of each partition: the high watermark, or under ``read_committed`` the last
        stable offset, so a batch never waits for an open transaction."""
        from confluent_kafka.admin import OffsetSpec

        return self._list_offsets(partitions, OffsetSpec.latest())

    def offsets_for_times(self, times: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The first offset whose record timestamp is at or after the given time, per
        partition; -1 where no record is that recent (Kafka's offsets-for-times lookup)."""
        from confluent_kafka.admin import OffsetSpec

        specs = {tp: OffsetSpec.for_timestamp(millis) for tp, millis in times.items()}
        return self._list_offsets(specs, None)

    def _list_offsets(
        self, partitions: Collection[TopicPartition] | Mapping[TopicPartition, Any], spec: Any
    ) -> dict[TopicPartition, int]:
        """One lookup for all partitions: ``spec`` for each, or a spec per partition."""
        if not partitions:
            return {}
        from confluent_kafka import IsolationLevel
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        level = IsolationLevel.READ_COMMITTED if self._read_committed else IsolationLevel.READ_UNCOMMITTED
        per_partition = partitions if isinstance(partitions, Mapping) else None
        request = {
            KafkaTopicPartition(tp.topic, tp.partition): per_partition[tp] if per_partition else spec
            for tp in partitions
        }

        def call() -> dict[TopicPartition, int]:
            futures = self._admin.list_offsets(
                request, isolation_level=level, request_timeout=self._timeout_s
            )
            return {
                TopicPartition(ktp.topic, ktp.partition): future.result().offset
                for ktp, future in futures.items()
            }

        return self._retry("list offsets", call)

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
                    raise KafkaMetadataError(msg, exc) from exc
                time.sleep(self._options.fetch_offset_retry_interval_ms / 1000)
        raise AssertionError("unreachable")


def missing_partitions(
    wanted: Collection[TopicPartition], existing: Collection[TopicPartition]
) -> list[TopicPartition]:
    """The partitions of ``wanted`` that do not exist, sorted for stable messages."""
    existing_set = set(existing)
    return sorted(tp for tp in wanted if tp not in existing_set)


def describe_partitions(partitions: Collection[TopicPartition] | Mapping[TopicPartition, Any]) -> str:
    """``orders-0, orders-3`` for messages."""
    return ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(partitions))
