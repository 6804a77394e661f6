"""Driver side: which partitions a subscription covers, and the ids of their topics.

A cluster listing (``list_topics``) shows every topic, so it is what a ``subscribePattern``
needs; the topics ``subscribe`` and ``assign`` name are described instead (one
describe-topics request for all of them), which gives their partitions and Kafka's topic ids
too: a topic deleted and re-created under the same name gets a new id. A description can be
sent and answered later (:meth:`TopicLookups.ask_description`,
:meth:`TopicLookups.answer_description`), so that its round trip overlaps other work.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kafka_rescalable.config.options import AssignPartitions, SubscribePattern, Subscription
from kafka_rescalable.driver.kafka_connection import DriverConnection
from kafka_rescalable.driver.kafka_errors import kafka_error_of, not_authorized
from kafka_rescalable.errors import KafkaAuthenticationError, KafkaAuthorizationError
from kafka_rescalable.state import TopicPartition

__all__ = ["LiveTopics", "TopicLookups", "narrowed"]

_TOPIC_AUTHORIZATION_FAILED: Final = 29
_UNKNOWN_TOPIC: Final = frozenset({3, 100})  # UNKNOWN_TOPIC_OR_PART, UNKNOWN_TOPIC_ID
_NO_TOPIC_ID: Final = "AAAAAAAAAAAAAAAAAAAAAA"  # Kafka's all-zero id, printed in base64


@dataclass(frozen=True)
class LiveTopics:
    """What the subscription covers right now.

    Parameters
    ----------
    partitions
        The partitions that exist and belong to the subscription.
    topic_ids
        Kafka's topic id (base64, as Kafka tools print it) of each topic of ``partitions``,
        when asked for: a topic deleted and re-created under the same name gets a new one.
    missing
        Topics named by ``subscribe`` or ``assign`` that do not exist, sorted.
    """

    partitions: frozenset[TopicPartition]
    topic_ids: Mapping[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()


class TopicLookups:
    """Topic listings and descriptions through ``connection``, with its retries.

    Each partition's :class:`TopicPartition` is made (and validated) once per instance, not
    per batch, and the same object comes back from every later lookup: the planning's maps
    then compare keys by identity (see ``_offsets`` in
    :mod:`kafka_rescalable.driver.offset_lookups`).
    """

    def __init__(self, connection: DriverConnection) -> None:
        self._connection = connection
        self._known: dict[tuple[str, int], TopicPartition] = {}

    def live(self, subscription: Subscription, with_ids: bool = False) -> LiveTopics:
        """Return the subscription's partitions, missing topics and, with ``with_ids``, ids.

        Raises
        ------
        KafkaAuthorizationError
            When the principal may not describe a subscribed topic.
        """
        if with_ids and not isinstance(subscription, SubscribePattern):
            return narrowed(subscription, self.description(subscription.topics))
        metadata = self._connection.retry(
            "list topics",
            lambda client, timeout: client.list_topics(timeout=timeout),
        )
        found: set[TopicPartition] = set()
        present: set[str] = set()
        forbidden: list[str] = []
        for name, topic in metadata.topics.items():
            if not subscription.matches(name):
                continue
            if name.startswith("__") and isinstance(subscription, SubscribePattern):
                continue  # Kafka's internal topics never match a pattern; named, they count
            if topic.error is not None:
                if topic.error.code() == _TOPIC_AUTHORIZATION_FAILED:
                    forbidden.append(name)
                continue
            present.add(name)
            found.update(self._topic_partitions(name, topic.partitions))
        named = getattr(subscription, "topics", ())
        absent = sorted(set(named) - present - set(forbidden))
        # A full listing leaves out the topics the principal may not describe, as if they did
        # not exist; asking for a named one by name tells the two apart.
        forbidden.extend(name for name in absent if self._forbidden(name))
        if forbidden:
            raise not_authorized(sorted(forbidden), "DESCRIBE", self._connection.options)
        if isinstance(subscription, AssignPartitions):
            found &= subscription.partitions
        missing = tuple(sorted(set(named) - present))
        ids = self.topic_ids(sorted({tp.topic for tp in found})) if with_ids else {}
        return LiveTopics(frozenset(found), ids, missing)

    def _forbidden(self, topic: str) -> bool:
        """Whether the brokers refuse to describe ``topic`` to this principal."""
        metadata = self._connection.retry(
            f"describe topic {topic}",
            lambda client, timeout: client.list_topics(topic=topic, timeout=timeout),
        )
        error = getattr(metadata.topics.get(topic), "error", None)
        return error is not None and error.code() == _TOPIC_AUTHORIZATION_FAILED

    def topic_ids(self, topics: Collection[str]) -> dict[str, str]:
        """Return Kafka's topic id of each topic that exists; one deleted meanwhile is left out.

        One describe-topics request for all of them.
        """
        return dict(self.description(topics).topic_ids)

    def description(self, topics: Collection[str]) -> LiveTopics:
        """Describe ``topics`` in one request: their partitions, ids and which do not exist.

        Raises
        ------
        KafkaAuthorizationError
            When the principal may not describe one of them.
        """
        if not topics:
            return LiveTopics(frozenset())
        return self._connection.retry(
            "describe topics",
            lambda _, timeout: self._description_of(self._describe(topics, timeout)),
        )

    def ask_description(self, topics: Collection[str]) -> dict[str, Any] | None:
        """Send a describe-topics request and return its futures, without waiting for them.

        ``None`` when there is nothing to ask or the request could not be sent:
        :meth:`answer_description` then asks again, with the retries.
        """
        if not topics:
            return None
        try:
            return self._describe(topics, self._connection.timeout_s)
        except Exception:  # noqa: BLE001 - asked again, with retries, for the answer
            return None

    def answer_description(
        self, asked: dict[str, Any] | None, topics: Collection[str]
    ) -> LiveTopics:
        """Wait for what :meth:`ask_description` sent; ask again with retries if it failed."""
        if asked is not None:
            try:
                return self._description_of(asked)
            except (KafkaAuthorizationError, KafkaAuthenticationError):
                raise
            except Exception:  # noqa: BLE001 - a broker restarting: the retrying lookup waits
                pass
        return self.description(topics)

    def _describe(self, topics: Collection[str], timeout: float) -> dict[str, Any]:
        """Send one describe-topics request; return a future per topic."""
        from confluent_kafka import TopicCollection

        admin = self._connection.admin()
        return admin.describe_topics(TopicCollection(list(topics)), request_timeout=timeout)

    def _description_of(self, futures: Mapping[str, Any]) -> LiveTopics:
        """Wait for a describe-topics answer; a topic that does not exist is ``missing``.

        Raises
        ------
        KafkaAuthorizationError
            Naming every described topic the principal may not describe.
        """
        from confluent_kafka import KafkaException

        found: list[TopicPartition] = []
        ids: dict[str, str] = {}
        missing: list[str] = []
        forbidden: list[str] = []
        for name, future in futures.items():
            try:
                description = future.result()
            except KafkaException as exc:
                error = kafka_error_of(exc)
                code = error.code() if error is not None else None
                if code in _UNKNOWN_TOPIC:
                    missing.append(name)  # or deleted since it was listed
                    continue
                if code == _TOPIC_AUTHORIZATION_FAILED:
                    forbidden.append(name)
                    continue
                raise
            topic_id = str(description.topic_id)
            if topic_id != _NO_TOPIC_ID:  # brokers before Kafka 2.8 have no ids
                ids[name] = topic_id
            found.extend(self._topic_partitions(name, [p.id for p in description.partitions]))
        if forbidden:
            raise not_authorized(sorted(forbidden), "DESCRIBE", self._connection.options)
        return LiveTopics(frozenset(found), ids, tuple(sorted(missing)))

    def _topic_partitions(self, topic: str, numbers: Iterable[int]) -> list[TopicPartition]:
        known = self._known
        found = []
        for number in numbers:
            tp = known.get((topic, number))
            if tp is None:
                tp = known[(topic, number)] = TopicPartition(topic, number)
            found.append(tp)
        return found


def narrowed(subscription: Subscription, described: LiveTopics) -> LiveTopics:
    """Keep the part of a description of the named topics that the subscription covers.

    ``assign`` keeps its assigned partitions only, and the ids of the topics that still have
    partitions, as a listing of the cluster would give them.
    """
    if not isinstance(subscription, AssignPartitions):
        return described
    partitions = described.partitions & subscription.partitions
    topics = {tp.topic for tp in partitions}
    ids = {topic: id_ for topic, id_ in described.topic_ids.items() if topic in topics}
    return LiveTopics(partitions, ids, described.missing)
