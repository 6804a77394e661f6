"""Driver side: which partitions a subscription covers and where they start and end.

The module is long because every lookup the driver makes lives in it: they share one retry
loop (:meth:`KafkaMetadata._retry`), and a lookup outside it would not ride through leader
changes and broker restarts.

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

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter, is_not, itemgetter
from typing import Any, Final, TypeVar

from kafka_rescalable.config.options import (
    AssignPartitions,
    KafkaSourceOptions,
    SubscribePattern,
    Subscription,
)
from kafka_rescalable.driver.kafka_errors import (
    authentication_failed,
    gave_up,
    group_not_authorized,
    is_retriable,
    kafka_error_of,
    not_authorized,
)
from kafka_rescalable.driver.offset_calls import SpreadCalls
from kafka_rescalable.errors import (
    KafkaAuthenticationError,
    KafkaAuthorizationError,
    KafkaMetadataError,
)
from kafka_rescalable.kafka_clients import ClientErrors, admin_client, driver_consumer, serve_events
from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.batch_boundary import KafkaNow
from kafka_rescalable.state.partitions import describe_partitions, trusted_topic_partitions

__all__ = [
    "EARLIEST_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "OFFSETS_PER_CALL",
    "KafkaMetadata",
    "LiveTopics",
]

_T = TypeVar("_T")

LATEST_TIMESTAMP: Final = -1
"""Kafka's ListOffsets timestamp for a partition's end (the last stable offset under
``read_committed``, else the high watermark)."""

EARLIEST_TIMESTAMP: Final = -2
"""Kafka's ListOffsets timestamp for the first offset still present in a partition."""

_TOPIC_AUTHORIZATION_FAILED: Final = 29
_GROUP_FORBIDDEN: Final = 30  # GROUP_AUTHORIZATION_FAILED
_UNKNOWN_TOPIC: Final = frozenset({3, 100})  # UNKNOWN_TOPIC_OR_PART, UNKNOWN_TOPIC_ID
_MAX_ATTEMPT_S: Final = 5.0
_NO_TOPIC_ID: Final = "AAAAAAAAAAAAAAAAAAAAAA"  # Kafka's all-zero id, printed in base64
_MAX_BACKOFF_S: Final = 1.0

OFFSETS_PER_CALL: Final = 500
"""Partitions per ``offsets_for_times`` call. librdkafka's handling of one call grows
faster than linearly with its partitions (matching each answer against the request), so
10,000 partitions take 7 times longer in one call than in 20 calls of 500; below a few
hundred, the calls' round trips start to count instead."""

# Fields of confluent-kafka's TopicPartition, read in C.
_topic_of, _partition_of = attrgetter("topic"), attrgetter("partition")
_offset_of, _error_of = attrgetter("offset"), attrgetter("error")


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


class KafkaMetadata:
    """The driver's Kafka connection for planning; close it (or use ``with``) when done.

    One instance lives as long as its reader, so a streaming query connects once and every
    micro-batch reuses the connections and the cached cluster metadata.

    Every lookup rides through leader changes and broker restarts: a retriable error (see
    :func:`is_retriable`) is retried with a growing pause, after refreshing the cluster
    metadata or replacing the client, until ``fetchOffset.retryTimeout``; other errors are
    retried ``fetchOffset.numRetries`` times, as in Spark. An authentication failure is never
    retried.

    Not picklable on purpose: Spark ships readers to executors, and a live client must never
    travel with them.

    ``offsets_per_call`` is how many partitions one ``offsets_for_times`` call asks for
    (:data:`OFFSETS_PER_CALL`; tests make it small).
    """

    def __init__(
        self,
        options: KafkaSourceOptions,
        timeout_s: float = _MAX_ATTEMPT_S,
        offsets_per_call: int = OFFSETS_PER_CALL,
    ) -> None:
        self._options = options
        self._timeout_s = timeout_s
        self._offsets_per_call = offsets_per_call
        self._errors = ClientErrors()
        self._consumer: Any = driver_consumer(options, self._errors)
        self._admin: Any = None
        self._spread = SpreadCalls(lambda: driver_consumer(options, self._errors))
        self._closed = False
        # Each partition's TopicPartition, made (and validated) once per reader, not per batch.
        self._known: dict[tuple[str, int], TopicPartition] = {}
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
        self._closed = True
        consumer, self._consumer = self._consumer, None
        self._admin = None  # an AdminClient closes when collected
        self._spread.close()
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
            return _narrowed(subscription, checked)
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
        if with_ids and not isinstance(subscription, SubscribePattern):
            return _narrowed(subscription, self._description(subscription.topics))
        metadata = self._retry(
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
            raise not_authorized(sorted(forbidden), "DESCRIBE", self._options)
        if isinstance(subscription, AssignPartitions):
            found &= subscription.partitions
        missing = tuple(sorted(set(named) - present))
        ids = self.topic_ids(sorted({tp.topic for tp in found})) if with_ids else {}
        return LiveTopics(frozenset(found), ids, missing)

    def _forbidden(self, topic: str) -> bool:
        """Whether the brokers refuse to describe ``topic`` to this principal."""
        metadata = self._retry(
            f"describe topic {topic}",
            lambda client, timeout: client.list_topics(topic=topic, timeout=timeout),
        )
        error = getattr(metadata.topics.get(topic), "error", None)
        return error is not None and error.code() == _TOPIC_AUTHORIZATION_FAILED

    def topic_ids(self, topics: Collection[str]) -> dict[str, str]:
        """Return Kafka's topic id of each topic that exists; one deleted meanwhile is left out.

        One describe-topics request for all of them.
        """
        return dict(self._description(topics).topic_ids)

    def _description(self, topics: Collection[str]) -> LiveTopics:
        """Describe ``topics`` in one request: their partitions, ids and which do not exist.

        Raises
        ------
        KafkaAuthorizationError
            When the principal may not describe one of them.
        """
        if not topics:
            return LiveTopics(frozenset())
        return self._retry(
            "describe topics",
            lambda _, timeout: self._description_of(self._describe(topics, timeout)),
        )

    def _ask_description(self, topics: Collection[str]) -> dict[str, Any] | None:
        """Send a describe-topics request and return its futures, without waiting for them.

        ``None`` when there is nothing to ask or the request could not be sent:
        :meth:`_answer_description` then asks again, with the retries.
        """
        if not topics:
            return None
        try:
            return self._describe(topics, self._timeout_s)
        except Exception:  # noqa: BLE001 - asked again, with retries, for the answer
            return None

    def _answer_description(
        self, asked: dict[str, Any] | None, topics: Collection[str]
    ) -> LiveTopics:
        """Wait for what :meth:`_ask_description` sent; ask again with retries if it failed."""
        if asked is not None:
            try:
                return self._description_of(asked)
            except (KafkaAuthorizationError, KafkaAuthenticationError):
                raise
            except Exception:  # noqa: BLE001 - a broker restarting: the retrying lookup waits
                pass
        return self._description(topics)

    def _describe(self, topics: Collection[str], timeout: float) -> dict[str, Any]:
        """Send one describe-topics request; return a future per topic."""
        from confluent_kafka import TopicCollection

        if self._admin is None:
            self._admin = admin_client(self._options, self._errors)
        return self._admin.describe_topics(TopicCollection(list(topics)), request_timeout=timeout)

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
            raise not_authorized(sorted(forbidden), "DESCRIBE", self._options)
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

        def call(client: Any, timeout: float) -> dict[TopicPartition, int]:
            return _offsets(self._spread.offsets_for_times(client, calls, timeout), timestamps)

        return self._retry(lambda: f"list offsets of {_first_partitions(timestamps)}", call)

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
        stable = self._options.kafka_settings.get("isolation.level") == "read_committed"

        def call(_: Any, timeout: float) -> dict[TopicPartition, int]:
            if self._admin is None:
                self._admin = admin_client(self._options, self._errors)
            futures = self._admin.list_consumer_group_offsets(
                [asked], request_timeout=timeout, require_stable=stable
            )
            try:
                answer = futures[group].result()
            except KafkaException as exc:
                if getattr(kafka_error_of(exc), "code", lambda: None)() == _GROUP_FORBIDDEN:
                    raise group_not_authorized(group, self._options) from exc
                raise
            found = _offsets(answer.topic_partitions, partitions)
            return {tp: offset for tp, offset in found.items() if offset >= 0}

        return self._retry(f"read the offsets consumer group '{group}' committed", call)

    def _client(self) -> Any:
        """Return the live client; using a closed ``KafkaMetadata`` is a bug, said plainly."""
        if self._closed:
            raise KafkaMetadataError("this KafkaMetadata was closed; open a new one")
        if self._consumer is None:
            self._consumer = driver_consumer(self._options, self._errors)
        return self._consumer

    def _renew(self, attempt: int, deadline: float) -> None:
        """Make the next attempt see the cluster as it is now, not as it was.

        After a leader change the client's cached metadata names the old leader; refreshing
        it is enough most of the time, and every other time the client is replaced, since
        a client stuck on a dead connection can take long to notice a refresh.
        """
        self._errors.clear()
        self._spread.renew()  # opened again when next needed, with fresh metadata
        if attempt % 2:
            remaining = deadline - time.monotonic()
            if remaining > 0.1:
                try:
                    self._client().list_topics(timeout=min(self._timeout_s, 2.0, remaining))
                except Exception:  # noqa: BLE001 - a refresh that fails changes nothing
                    pass
            return
        consumer, self._consumer = self._consumer, None
        self._admin = None
        if consumer is not None:
            consumer.close()

    def _retry(self, what: str | Callable[[], str], call: Callable[[Any, float], _T]) -> _T:
        """Run ``call(client, timeout)`` until it succeeds or the retries are spent.

        ``what`` (or what it returns, built only when the lookup fails: at 10,000 partitions
        naming the first few costs more than the lookup) completes "could not ...".
        """
        options = self._options
        started = time.monotonic()
        deadline = started + options.fetch_offset_retry_timeout_ms / 1000
        pause = max(options.fetch_offset_retry_interval_ms / 1000, 0.01)
        attempts = other_failures = refused_logins = 0
        self._errors.clear()
        while True:
            attempts += 1
            client = self._client()
            remaining = deadline - time.monotonic()
            # A slow but healthy cluster gets longer each time, up to what is left.
            limit = self._timeout_s * min(2 ** (attempts - 1), 8)
            try:
                result = call(client, max(0.1, min(limit, remaining)))
            except (KafkaAuthorizationError, KafkaAuthenticationError):
                raise
            except Exception as exc:  # confluent-kafka raises KafkaException or plain errors
                serve_events(client)
                error = kafka_error_of(exc)
                refusal = self._errors.authentication
                if refusal is not None:
                    # Twice in a row: a broker just restarted may refuse a login for a moment.
                    refused_logins += 1
                    if refused_logins >= 2:
                        raise authentication_failed(refusal, options) from exc
                else:
                    refused_logins = 0
                if not is_retriable(error) and refusal is None:
                    other_failures += 1
                now = time.monotonic()
                if now >= deadline or other_failures > options.fetch_offset_retries:
                    said = what() if callable(what) else what
                    raise gave_up(
                        options, self._errors.last, said, exc, error, attempts, now - started
                    ) from exc
                time.sleep(min(pause, max(0.0, deadline - now)))
                pause = min(pause * 2, _MAX_BACKOFF_S)
                self._renew(attempts, deadline)
                continue
            serve_events(client)
            return result


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
    # (see KafkaMetadata._known): keyed by new ones, each with a new topic string, every
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


def _narrowed(subscription: Subscription, described: LiveTopics) -> LiveTopics:
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


def _described_topics(subscription: Subscription, ids: Mapping[str, str]) -> list[str]:
    """Name the topics to describe after a batch's offsets: the named ones, or those with ids."""
    if isinstance(subscription, SubscribePattern):
        return list(ids)
    return list(subscription.topics)


def _first_partitions(partitions: Collection[TopicPartition]) -> str:
    shown = sorted(partitions)[:5]
    more = f" and {len(partitions) - 5} more" if len(partitions) > 5 else ""
    return describe_partitions(shown) + more
