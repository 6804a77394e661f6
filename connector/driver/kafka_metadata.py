"""Driver side: the one object the readers ask about Kafka, and the order of a batch's lookups.

:class:`KafkaMetadata` holds the driver's connection
(:mod:`kafka_rescalable.driver.kafka_connection`, whose retry loop every lookup runs in) and
answers with the topic lookups (:mod:`kafka_rescalable.driver.topic_lookups`) and the offset
lookups (:mod:`kafka_rescalable.driver.offset_lookups`). What it adds is the order of a batch's
lookups (:meth:`KafkaMetadata.look_up_and_plan`): partitions, ends, the plan, and the check
after them that no topic was deleted and re-created meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from kafka_rescalable.config.options import KafkaSourceOptions, SubscribePattern, Subscription
from kafka_rescalable.driver.kafka_connection import MAX_ATTEMPT_S, DriverConnection
from kafka_rescalable.driver.offset_lookups import OFFSETS_PER_CALL, OffsetLookups
from kafka_rescalable.driver.topic_lookups import LiveTopics, TopicLookups, narrowed
from kafka_rescalable.errors import KafkaMetadataError
from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.batch_boundary import KafkaNow

__all__ = ["KafkaMetadata", "LiveTopics"]

_T = TypeVar("_T")


class KafkaMetadata:
    """The driver's Kafka connection for planning; close it (or use ``with``) when done.

    One instance lives as long as its reader, so a streaming query connects once and every
    micro-batch reuses the connections and the cached cluster metadata. Every lookup rides
    through leader changes and broker restarts (see
    :class:`~kafka_rescalable.driver.kafka_connection.DriverConnection`). Not picklable on
    purpose: a live client must never travel to the executors.

    ``offsets_per_call`` is how many partitions one ``offsets_for_times`` call asks for
    (:data:`~kafka_rescalable.driver.offset_lookups.OFFSETS_PER_CALL`; tests make it small).
    """

    def __init__(
        self,
        options: KafkaSourceOptions,
        timeout_s: float = MAX_ATTEMPT_S,
        offsets_per_call: int = OFFSETS_PER_CALL,
    ) -> None:
        self._options = options
        self._connection = DriverConnection(options, timeout_s)
        self._topics = TopicLookups(self._connection)
        self._offsets = OffsetLookups(self._connection, offsets_per_call)
        # The topics described after the last batch's offsets (see look_up_and_plan); the
        # topics to describe until the request is sent; the request until it is answered.
        self._checked: LiveTopics | None = None
        self._unsent: list[str] | None = None
        self._pending: tuple[dict[str, Any] | None, list[str]] | None = None

    def __enter__(self) -> KafkaMetadata:
        """Use the client for one block; it is closed when the block ends."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the client even when the block failed, so no connection is left open."""
        self.close()

    def close(self) -> None:
        """Close the clients and their connections; calling it again does nothing."""
        self._connection.close()

    def __getstate__(self) -> None:
        """Refuse pickling: a live Kafka client cannot be shipped to another process."""
        raise TypeError("KafkaMetadata holds a live Kafka client and cannot be pickled")

    def partitions(self, subscription: Subscription) -> frozenset[TopicPartition]:
        """Return the partitions that exist now and belong to ``subscription``.

        For ``assign``, only the assigned partitions that exist are returned: the caller
        decides whether a missing one is an error (first batch) or data loss (later).
        """
        return self.live(subscription).partitions

    def look_up_and_plan(
        self, subscription: Subscription, plan: Callable[[LiveTopics, KafkaNow], _T]
    ) -> _T:
        """Look up the subscription's partitions, ids and ends, and return ``plan`` of them.

        The ids must be read again after the offsets: a topic re-created in between would
        pair the old topic's id with the new topic's offsets, and the next batch would read
        the new topic's records twice (once as the old topic's, once from its start). That
        second reading is only due before the batch's tasks read: it is sent by
        :meth:`send_check` (the reader's ``reportLatestOffset``, which Spark calls right
        after ``latestOffset``) and answered by :meth:`checked` (the reader's
        ``partitions``), either sending it first if it was not sent. A describe-topics answer
        at 10,000 partitions is a broker round trip and some 150 ms of CPU in confluent-kafka,
        which then overlaps Spark writing the batch to its offset log instead of adding to
        ``latestOffset``; and the later it is read, the shorter the time in which a topic
        re-created before the tasks read would go unseen. A topic it shows re-created is
        handled as after a restart: the batch reads nothing of it and the next batch starts
        the new topic from its earliest offset, or the query stops under ``failOnDataLoss``.

        A plan that fails may have failed because of such a re-creation (offsets gone back,
        say): then the ids are read again at once, and when they changed the plan is made
        again from fresh lookups instead of raising.

        What a batch starts from is what was read after the previous batch's offsets: Kafka
        never gives an id twice, so equal ids then and now still mean that no topic was
        re-created in between, and a batch pays one topic description instead of two. For
        ``subscribe`` and ``assign``, that description also lists the partitions, so no
        listing of the cluster's topics is made either: a partition or a named topic created
        while a batch is planned joins one batch later than a fresh listing would show it
        (Spark's built-in source sees them when its consumer's metadata is next refreshed).
        """
        for attempt in range(3):
            found = self._before(subscription, fresh=attempt > 0)
            before = dict(found.topic_ids)
            latest = self.latest(found.partitions)
            asking = _described_topics(subscription, before)
            try:
                planned = plan(found, KafkaNow(found.partitions, before, latest))
            except Exception:
                checked = self._answer_description(self._ask_description(asking), asking)
                self._checked = checked
                if {t: checked.topic_ids[t] for t in before if t in checked.topic_ids} == before:
                    raise
                continue  # planned across a re-creation: plan again from what is there now
            self._unsent, self._pending = asking, None
            return planned
        msg = (
            "the subscribed topics kept being deleted and re-created while the batch was "
            f"planned ({subscription.describe()}); try again once they are stable"
        )
        raise KafkaMetadataError(msg)

    def send_check(self) -> None:
        """Send the description due after the last batch's offsets; once sent, do nothing."""
        unsent, self._unsent = self._unsent, None
        if unsent is not None:
            self._pending = (self._ask_description(unsent), unsent)

    def checked(self) -> LiveTopics | None:
        """Wait for the description due after the last batch's offsets, and return it.

        ``None`` before the first batch is planned. Asked again, it answers the same until
        the next batch plans.
        """
        self.send_check()
        pending, self._pending = self._pending, None
        if pending is not None:
            self._checked = self._answer_description(*pending)
        return self._checked

    def _before(self, subscription: Subscription, fresh: bool) -> LiveTopics:
        """Return what a batch is planned from: partitions, their topics' ids, missing topics.

        Taken from the description read after the last batch's offsets unless ``fresh``
        (see :meth:`look_up_and_plan`); ``subscribePattern`` lists the cluster's topics
        every time, as only a listing shows a new topic that matches.
        """
        checked = None if fresh else self.checked()
        if not isinstance(subscription, SubscribePattern):
            if checked is None:
                checked = self._description(subscription.topics)
            return narrowed(subscription, checked)
        found = self.live(subscription)
        topics = sorted({tp.topic for tp in found.partitions})
        known = checked.topic_ids if checked is not None else {}
        if not topics or not known.keys() >= set(topics):
            ids = self.topic_ids(topics)
        else:
            ids = {topic: known[topic] for topic in topics}
        return LiveTopics(found.partitions, ids, found.missing)

    def live(self, subscription: Subscription, with_ids: bool = False) -> LiveTopics:
        """Return the subscription's partitions, missing topics and, with ``with_ids``, ids.

        Raises
        ------
        KafkaAuthorizationError
            When the principal may not describe a subscribed topic.
        """
        return self._topics.live(subscription, with_ids)

    def topic_ids(self, topics: Collection[str]) -> dict[str, str]:
        """Return Kafka's topic id of each topic that exists; one deleted meanwhile is left out.

        One describe-topics request for all of them.
        """
        return dict(self._description(topics).topic_ids)

    # The steps of look_up_and_plan are methods of this class, so that a test can script them.

    def _description(self, topics: Collection[str]) -> LiveTopics:
        return self._topics.description(topics)

    def _ask_description(self, topics: Collection[str]) -> dict[str, Any] | None:
        return self._topics.ask_description(topics)

    def _answer_description(
        self, asked: dict[str, Any] | None, topics: Collection[str]
    ) -> LiveTopics:
        return self._topics.answer_description(asked, topics)

    def earliest(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """Return the first offset still present in each partition."""
        return self._offsets.earliest(partitions)

    def latest(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """Return the end of each partition.

        That is the high watermark, or under ``read_committed`` the last stable offset, so a
        batch never waits for an open transaction.
        """
        return self._offsets.latest(partitions)

    def offsets_for_times(self, times: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Return, per partition, the first offset whose record timestamp is at or after the time.

        The offset is -1 where no record is that recent (Kafka's offsets-for-times lookup).
        """
        return self._offsets.offsets_for_times(times)

    def committed(
        self, group: str, partitions: Collection[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """Return the offsets ``group`` committed; partitions without one are left out.

        See :meth:`~kafka_rescalable.driver.offset_lookups.OffsetLookups.committed`.
        """
        return self._offsets.committed(group, partitions)


def _described_topics(subscription: Subscription, ids: Mapping[str, str]) -> list[str]:
    """Name the topics to describe after a batch's offsets: the named ones, or those with ids."""
    if isinstance(subscription, SubscribePattern):
        return list(ids)
    return list(subscription.topics)
