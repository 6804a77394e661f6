"""``spark.readStream``: micro-batches over a rescalable slots document.

Each ``latestOffset`` call is a batch boundary. That is where the slots document is
rebalanced, so the reader slot count can change between runs of one checkpoint (or between
batches), new partitions join and removed ones leave, and the end offsets are capped by the
read limit. ``partitions`` then only cuts ``[start, end)`` into tasks and never changes what is
checkpointed, so a batch re-planned after a crash reads exactly the same records.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)

from connector._gc import cycle_collector_paused
from connector._logging import logger
from connector.config.options import AssignPartitions, KafkaSourceOptions
from connector.driver.alignment import align_end_offsets
from connector.driver.kafka_metadata import (
    KafkaMetadata,
    LiveTopics,
    describe_partitions,
    missing_partitions,
)
from connector.driver.positions import resolve_bound
from connector.driver.slots import describe_assignment, plan_input_partitions, slot_count
from connector.errors import (
    CheckpointOffsetError,
    DataLossError,
    InvalidOptionError,
    KafkaMetadataError,
    MissingTopicError,
)
from connector.executor.tasks import read_input_partition, read_settings
from connector.kafka_clients import group_committer
from state import (
    EVENT_TIME_KEY,
    MAX_OFFSET,
    EventTimePositions,
    ForeignCheckpointError,
    OffsetDocumentError,
    OffsetState,
    PartitionOffset,
    SlotsDocument,
    TopicPartition,
    carried_topic_ids,
    rebalance,
    recreated_topics,
)
from state.admission import cap_end_offsets

__all__ = ["KafkaStreamReader"]


class _DocumentCache:
    """The last few slots documents this reader parsed or wrote, to parse each only once.

    Spark hands every offset to the reader as a fresh dict read back from JSON: the
    ``start`` of ``latestOffset`` is the end it returned the batch before, and ``partitions``
    and ``commit`` get both ends again. At thousands of partitions, parsing (and checking) a
    document costs more than a batch's offset lookup, so a dict equal to one seen recently
    reuses that document. "Equal" is exact, type for type at every level, not ``==``:
    ``True`` and ``5.0`` equal ``1`` and ``5`` but are no offsets, and such a document must
    still be refused by :meth:`SlotsDocument.from_dict`. The cache keeps its own copies of
    the dicts, so a caller changing a dict afterwards changes nothing here; a new reader
    (after a restart) starts empty, so a checkpointed document is always parsed once.
    """

    def __init__(self, size: int = 3) -> None:
        # A batch touches three documents: its start, its end, and the previous batch's end
        # when the start is re-planned; most recent first.
        self._size = size
        self._entries: list[tuple[dict[str, Any], SlotsDocument]] = []

    def parse(self, data: Any) -> SlotsDocument:
        """:meth:`SlotsDocument.from_dict`, or the document last made from an identical dict."""
        for index, (seen, document) in enumerate(self._entries):
            if type(data) is dict and data == seen and _same_json(data, seen):
                if index:
                    self._entries.insert(0, self._entries.pop(index))
                return document
        document = SlotsDocument.from_dict(data)
        self._keep(document)
        return document

    def to_dict(self, document: SlotsDocument) -> dict[str, Any]:
        """``document.to_dict()``, remembered so that the dict Spark hands back is not parsed."""
        self._keep(document)
        return document.to_dict()

    def _keep(self, document: SlotsDocument) -> None:
        self._entries.insert(0, (document.to_dict(), document))
        del self._entries[self._size :]


def _same_json(data: dict[str, Any], seen: dict[str, Any]) -> bool:
    """Whether ``data``, equal to the document dict ``seen``, has its types at every level.

    ``seen`` comes from ``SlotsDocument.to_dict``. Its ``slots``, thousands of entries, have
    a known shape (a list of dicts of dicts of ``int`` under ``str`` keys) checked with one
    pass per level; the other sections, small, are compared value by value.
    """
    slots = data["slots"]
    if type(data["version"]) is not int or type(slots) is not list:
        return False
    if not set(map(type, slots)) <= {dict}:
        return False
    topics = [partitions for slot in slots for partitions in slot.values()]
    if not set(map(type, topics)) <= {dict}:
        return False
    keys = {type(key) for slot in slots for key in slot}
    keys.update(type(key) for partitions in topics for key in partitions)
    offsets = {type(offset) for partitions in topics for offset in partitions.values()}
    return (
        keys <= {str}
        and offsets <= {int}
        and all(_same_value(data[key], seen[key]) for key in seen.keys() - {"version", "slots"})
    )


def _same_value(data: Any, seen: Any) -> bool:
    """Whether ``data``, equal to the JSON value ``seen``, has the same type at every level."""
    kind = type(seen)
    if type(data) is not kind:
        return False
    if kind is dict:
        return all(
            type(key) is str and _same_value(value, seen[key]) for key, value in data.items()
        )
    if kind is list:
        return all(_same_value(value, item) for value, item in zip(data, seen, strict=True))
    if kind is float:
        return repr(data) == repr(seen)  # -0.0 == 0.0, yet they are different JSON
    return True


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The streaming reader; Spark keeps one instance on the driver for the query's life.

    Spark pickles a fresh instance to the executors for ``read``, so the Kafka admin client
    is opened lazily and never pickled.
    """

    def __init__(self, options: KafkaSourceOptions) -> None:
        self._options = options
        self._settings = read_settings(options)
        self._metadata: KafkaMetadata | None = None
        self._available_now_target: dict[TopicPartition, int] | None = None
        self._latest: dict[TopicPartition, int] | None = None
        self._backlog: dict[str, Any] | None = None
        self._last_trigger_ms = 0.0
        self._group_committer: Any = None
        self._group_committed: dict[TopicPartition, int] | None = None
        self._held: tuple[TopicPartition, ...] = ()
        self._documents = _DocumentCache()
        # Subscribed topics that do not exist, and since when (monotonic seconds); topics
        # this reader has seen exist are never counted as typos, only as deleted.
        self._planned: SlotsDocument | None = None  # the end of the batch planned last
        self._missing_since: dict[str, float] = {}
        self._seen_topics: set[str] = set()

    def __getstate__(self) -> dict[str, Any]:
        """Ship the reader to executors without its live Kafka clients or cached documents."""
        state = dict(self.__dict__)
        state["_metadata"] = None
        state["_group_committer"] = None
        state["_documents"] = _DocumentCache()  # executors never plan: ship no documents
        state["_planned"] = None
        return state

    def _checkpointed(self, data: Any, role: str) -> SlotsDocument:
        """Parse an offset Spark read back from the checkpoint; explain a refusal.

        Spark does not tell a source which batch an offset belongs to, so the message points
        to the tool that does.
        """
        try:
            return self._documents.parse(data)
        except ForeignCheckpointError:
            raise
        except OffsetDocumentError as error:
            msg = (
                f"the checkpoint's offset for {role} is not a valid slots document: {error}. "
                "It is the last line of a file in <checkpoint>/offsets/; "
                "'python -m connector.inspect <checkpoint>' names the batch. Restore that "
                "file from a backup, or start the query with a new checkpoint directory"
            )
            raise CheckpointOffsetError(msg, error) from error

    def _kafka(self) -> KafkaMetadata:
        if self._metadata is None:
            self._metadata = KafkaMetadata(self._options)
        return self._metadata

    def _slot_count(self, partition_count: int, current_slots: int = 0) -> int:
        """Return the next batch's slot count (see :func:`connector.driver.slots.slot_count`)."""
        return slot_count(self._options, partition_count, current_slots)

    def initialOffset(self) -> dict:
        """Resolve ``startingOffsets`` for the partitions that exist when the query starts."""
        options = self._options
        kafka = self._kafka()
        found = kafka.live(options.subscription, with_ids=True)
        live = found.partitions
        if isinstance(options.subscription, AssignPartitions):
            absent = missing_partitions(options.subscription.partitions, live)
            if absent:
                msg = f"{describe_partitions(absent)} do not exist on {options.bootstrap_servers}"
                raise InvalidOptionError("assign", msg)
        self._check_missing(found, frozenset())
        offsets = resolve_bound(options.starting, "startingOffsets", live, kafka)
        sub_states = [PartitionOffset(tp.topic, tp.partition, o) for tp, o in offsets.items()]
        state = rebalance(OffsetState.of([]), self._slot_count(len(live)), sub_states).state
        logger.info(
            "Initial assignment over %d slots: %s", state.num_slots, describe_assignment(state)
        )
        ids = carried_topic_ids({}, found.topic_ids, {tp.topic for tp in live})
        return SlotsDocument(state, topic_ids=ids).to_dict()

    def getDefaultReadLimit(self) -> ReadLimit:
        """``maxOffsetsPerTrigger`` as a row cap, else ``minOffsetsPerTrigger``, else all.

        The Python API carries one limit; when both options are set, the minimum is applied
        from the options whenever the engine passes a limit other than ``ReadAllAvailable``.
        """
        options = self._options
        if options.max_offsets_per_trigger is not None:
            return ReadMaxRows(options.max_offsets_per_trigger)
        if options.min_offsets_per_trigger is not None:
            return ReadMinRows(options.min_offsets_per_trigger)
        if options.max_event_time_drift_ms is not None:
            # Alignment limits what a batch reads; the engine passes ReadAllAvailable only
            # where it must read everything at once (Trigger.Once), and then alignment yields.
            return ReadMaxRows(MAX_OFFSET)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Fix the end of an AvailableNow run: the partitions and offsets that exist now."""
        kafka = self._kafka()
        self._available_now_target = kafka.latest(kafka.partitions(self._options.subscription))

    @cycle_collector_paused()
    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        """Rebalance the slots and move each partition's offset to its end for this batch."""
        document = self._checkpointed(start, "the start of the next batch")
        current = document.state
        # Spark asks for the next batch only once the one ending at ``start`` is committed,
        # and it calls commit() for a batch only when it plans the next one: publishing
        # ``start`` here is what lets lag tools see the last batch of an AvailableNow run.
        self._commit_to_group(current)
        kafka = self._kafka()
        found, latest = self._look_up(kafka)
        live = found.partitions
        known = current.offsets()
        self._check_missing(
            found, frozenset(tp.topic for tp in known) | frozenset(document.topic_ids)
        )
        recreated = recreated_topics(document.topic_ids, found.topic_ids)
        if recreated:
            self._report_recreated(recreated, document.topic_ids, found.topic_ids)
            # From here on the new topics' partitions are new partitions: they join at their
            # earliest offset, and this batch reads nothing of them (see ``partitions``).
            known = {tp: at for tp, at in known.items() if tp.topic not in recreated}
        target = self._available_now_target
        if target is not None:
            live = frozenset(tp for tp in live if tp in target or tp in known)
        self._report_removed(
            frozenset(tp for tp in known.keys() - live if tp.topic not in recreated)
        )
        reset = self._went_back(known, latest, document.topic_ids)
        if reset:
            known = {tp: at for tp, at in known.items() if tp not in reset}
        joining = kafka.earliest([tp for tp in live if tp not in known])
        self._latest = latest
        if self._should_wait(known, latest, limit) and not joining:
            return start
        ends, extras = self._end_offsets(known, latest, limit, document.extras)
        # Where each partition starts this batch: looked up once, as hashing thousands of
        # TopicPartition keys is a visible share of planning.
        starts = {tp: known.get(tp, joining.get(tp, 0)) for tp in live}
        weights = {tp: max(0, latest[tp] - at) for tp, at in starts.items()}
        sub_states = [PartitionOffset(tp.topic, tp.partition, at) for tp, at in starts.items()]
        slots = self._slot_count(len(live), current.num_slots)
        result = rebalance(current, slots, sub_states, weights)
        if result.moved or result.added or result.removed or (
            result.state.num_slots != current.num_slots
        ):
            logger.info(
                "Reader slots %d -> %d (moved %d, joined %d, left %d): %s",
                current.num_slots,
                result.state.num_slots,
                len(result.moved),
                len(result.added),
                len(result.removed),
                describe_assignment(result.state),
            )
        # The rebalancer keeps the offsets a partition already had; a partition that starts
        # again (its topic re-created) is set to its new start explicitly.
        end_state = result.state.with_offsets({**joining, **ends} if joining else ends)
        self._backlog = backlog_report(end_state, latest)
        # Topics that left the slots (deleted, under failOnDataLoss=false) keep their id while
        # still subscribed: after a restart they are known as deleted, not taken for typos.
        subscription = self._options.subscription
        kept = {topic for topic in document.topic_ids if subscription.matches(topic)}
        ids = carried_topic_ids(
            document.topic_ids, found.topic_ids, {tp.topic for tp in end_state.offsets()} | kept
        )
        if end_state == current and ids == dict(document.topic_ids):
            return start  # nothing to read and nothing moved: no batch, even if clocks ticked
        self._last_trigger_ms = time.time() * 1000  # maxTriggerDelay counts from here
        self._planned = SlotsDocument(end_state, extras, ids)
        return self._documents.to_dict(self._planned)

    def _should_wait(
        self,
        known: Mapping[TopicPartition, int],
        latest: Mapping[TopicPartition, int],
        limit: ReadLimit,
    ) -> bool:
        """Apply ``minOffsetsPerTrigger``: tell whether to skip this trigger.

        A trigger is skipped until enough records wait, but never for longer than
        ``maxTriggerDelay`` since the last batch. AvailableNow and ``ReadAllAvailable`` never
        wait: they must reach their end.
        """
        minimum = self._options.min_offsets_per_trigger
        now_ms = time.time() * 1000
        if (
            minimum is not None
            and self._available_now_target is None
            and not isinstance(limit, ReadAllAvailable)
        ):
            waiting = sum(max(0, latest[tp] - known[tp]) for tp in latest if tp in known)
            overdue = now_ms - self._last_trigger_ms >= self._options.max_trigger_delay_ms
            if waiting < minimum and not overdue:
                return True
        return False

    def _end_offsets(
        self,
        known: Mapping[TopicPartition, int],
        latest: Mapping[TopicPartition, int],
        limit: ReadLimit,
        extras: Mapping[str, Any],
    ) -> tuple[dict[TopicPartition, int], dict[str, Any]]:
        """Return where each already-known partition's next batch ends, and the other sections.

        Joining partitions stay put; the other sections are the rest of the document. In
        order: the AvailableNow target, event-time alignment, then the row cap, so the cap is
        shared only by partitions free to move.
        """
        ends = {tp: end for tp, end in latest.items() if tp in known}
        if self._available_now_target is not None:
            target = self._available_now_target
            ends = {tp: min(end, target.get(tp, end)) for tp, end in ends.items()}
        sections = {k: v for k, v in extras.items() if k != EVENT_TIME_KEY}
        if self._options.max_event_time_drift_ms is not None and not isinstance(
            limit, ReadAllAvailable
        ):
            ends, sections[EVENT_TIME_KEY] = self._align(known, ends, extras)
        if isinstance(limit, ReadMaxRows):
            forward = {tp: max(end, known[tp]) for tp, end in ends.items()}
            capped = cap_end_offsets({tp: known[tp] for tp in ends}, forward, limit.max_rows)
            ends = {tp: min(end, capped[tp]) for tp, end in ends.items()}
        return ends, sections

    def _align(
        self,
        known: Mapping[TopicPartition, int],
        ends: dict[TopicPartition, int],
        extras: Mapping[str, Any],
    ) -> tuple[dict[TopicPartition, int], dict[str, Any]]:
        """Hold partitions ahead in event time; the clocks travel in the document."""
        section = extras.get(EVENT_TIME_KEY)
        previous = EventTimePositions.from_dict(section) if section else EventTimePositions()
        aligned = align_end_offsets(
            self._options,
            self._kafka(),
            {tp: known[tp] for tp in ends},
            ends,
            previous,
            available_now=self._available_now_target is not None,
        )
        if aligned.held != self._held:
            self._held = aligned.held
            logger.info(
                "Event-time alignment: frontier %s; holding %s",
                aligned.frontier_ms,
                describe_partitions(aligned.held) or "nothing",
            )
        return aligned.ends, aligned.positions.to_dict()

    def _look_up(self, kafka: KafkaMetadata) -> tuple[LiveTopics, dict[TopicPartition, int]]:
        """Return the live partitions with their topic ids, and their latest offsets.

        The ids are read again after the offsets: a topic re-created in between would pair
        the old topic's id with the new topic's offsets, and the next batch would read the new
        topic's records twice (once as the old topic's, once from its start).
        """
        for _ in range(3):
            found = kafka.live(self._options.subscription, with_ids=True)
            latest = kafka.latest(found.partitions)
            if kafka.topic_ids(list(found.topic_ids)) == dict(found.topic_ids):
                return found, latest
        msg = (
            "the subscribed topics kept being deleted and re-created while the batch was "
            f"planned ({self._options.subscription.describe()}); try again once they are stable"
        )
        raise KafkaMetadataError(msg)

    def _went_back(
        self,
        known: Mapping[TopicPartition, int],
        latest: Mapping[TopicPartition, int],
        topic_ids: Mapping[str, str],
    ) -> frozenset[TopicPartition]:
        """Fail or report partitions whose end is below the checkpointed offset.

        Return those that start again from their earliest offset. Without a topic id to
        compare (a checkpoint written before ids were kept), an end gone back is the sign of
        a topic deleted and re-created, and its partitions start again from their earliest
        offset, like those of a topic whose re-creation the ids revealed. With an unchanged id
        the topic is the same, and the end went back for another reason (an unclean leader
        election, or a ``read_committed`` end below a position read uncommitted): the
        partition goes on from its new end, as Spark's source does.
        """
        back = sorted(tp for tp, at in known.items() if tp in latest and latest[tp] < at)
        if not back:
            return frozenset()
        shown = "; ".join(
            f"{tp.topic}-{tp.partition}: the latest offset {latest[tp]} is below the "
            f"checkpointed position {known[tp]}"
            for tp in back
        )
        reset = frozenset(tp for tp in back if tp.topic not in topic_ids)
        cause = (
            "the topic was probably deleted and re-created"
            if reset
            else "the topic's id is unchanged: an unclean leader election may have lost them"
        )
        msg = f"{shown}. Records may be lost: {cause}"
        if self._options.fail_on_data_loss:
            raise DataLossError(msg + ". Set 'failOnDataLoss' to false to go on.")
        logger.warning(
            "%s; %s because failOnDataLoss is false",
            msg,
            "reading them again from their earliest offset" if reset else "going on from there",
        )
        return reset

    def _report_recreated(
        self,
        topics: tuple[str, ...],
        checkpointed: Mapping[str, str],
        live: Mapping[str, str],
    ) -> None:
        """Fail, or warn and go on, for topics deleted and re-created since the last batch."""
        shown = ", ".join(f"{t} (id {checkpointed[t]} -> {live[t]})" for t in topics)
        msg = (
            f"topic {shown} was deleted and re-created since the last batch: its Kafka topic "
            "id changed, so the records of the old topic not yet read are lost"
        )
        if self._options.fail_on_data_loss:
            raise DataLossError(
                msg + ". Set 'failOnDataLoss' to false to read the new topic from its earliest "
                "offset, or start the query with a new checkpoint"
            )
        logger.warning(
            "%s; reading the new topic from its earliest offset because failOnDataLoss is false",
            msg,
        )

    def _check_missing(self, found: LiveTopics, known_topics: frozenset[str]) -> None:
        """Warn at once about a subscribed topic that does not exist; fail once it stays so.

        A typo in ``subscribe`` would otherwise leave the query idle for ever. A topic this
        query has read before and that has gone is data loss, reported elsewhere.
        """
        self._seen_topics.update(tp.topic for tp in found.partitions)
        self._seen_topics.update(known_topics)
        now = time.monotonic()
        missing = [t for t in found.missing if t not in self._seen_topics]
        for topic in list(self._missing_since):
            if topic not in missing:
                del self._missing_since[topic]
        timeout_ms = self._options.missing_topic_timeout_ms
        for topic in missing:
            if topic not in self._missing_since:
                self._missing_since[topic] = now
                logger.warning(
                    "subscribed topic %r does not exist on %s; the query reads nothing from it "
                    "and fails if it still does not exist after 'missingTopicTimeout' (%d s). "
                    "Check its name in %s",
                    topic,
                    self._options.bootstrap_servers,
                    timeout_ms // 1000,
                    self._options.subscription.describe(),
                )
        overdue = sorted(t for t in missing if (now - self._missing_since[t]) * 1000 >= timeout_ms)
        if overdue:
            msg = (
                f"subscribed topic {', '.join(overdue)} has not existed on "
                f"{self._options.bootstrap_servers} for {timeout_ms // 1000} s "
                "('missingTopicTimeout'). Check the name in "
                f"{self._options.subscription.describe()}, create the topic, or raise "
                "'missingTopicTimeout'"
            )
            raise MissingTopicError(msg, overdue)

    def _recreated_since(self, end: SlotsDocument) -> tuple[str, ...]:
        """Topics of a planned batch re-created since it was planned; fail or report them.

        A batch is planned again after a restart: if a topic was re-created meanwhile, its
        planned offsets now hold other records, which must not be read as the planned ones.
        The planned ones are gone, so under ``failOnDataLoss=false`` the batch reads nothing
        of that topic and the next batch starts the new topic from its earliest offset.
        """
        if not end.topic_ids:
            return ()
        planned = dict(end.topic_ids)
        in_slots = {sub.topic for slot in end.state.slots for sub in slot}
        topics = sorted(topic for topic in planned if topic in in_slots)
        now = self._kafka().topic_ids(topics)
        changed = recreated_topics({t: planned[t] for t in topics}, now)
        if changed:
            self._report_recreated(changed, planned, now)
        return changed

    def _report_removed(self, removed: frozenset[TopicPartition]) -> None:
        if not removed:
            return
        msg = (
            f"{describe_partitions(removed)} no longer exist (topic or partitions deleted); "
            "their unread records, if any, are lost"
        )
        if self._options.fail_on_data_loss:
            raise DataLossError(
                msg + ". Set 'failOnDataLoss' to false to drop them with a warning and go on."
            )
        logger.warning("%s; removing them because failOnDataLoss is false", msg)

    def reportLatestOffset(self) -> dict | None:
        """Show the latest offsets and the backlog as ``latestOffset`` in query progress.

        The latest offsets are in Spark's per-topic form; the backlog is what is left after
        the batch.

        The Python data source API has no custom metrics, so the backlog that Spark's
        built-in source reports as ``offsetsBehindLatest`` metrics travels here instead.
        """
        if self._latest is None:
            return None
        latest: dict[str, dict[str, int]] = {}
        for tp, offset in sorted(self._latest.items()):
            latest.setdefault(tp.topic, {})[str(tp.partition)] = offset
        return {"latest": latest, "backlog": self._backlog}

    def commit(self, end: dict) -> None:
        """With ``commitOffsetsToGroup``, publish the batch's end offsets to that group.

        Only for lag tools (kafka-consumer-groups, Burrow, kcat): the checkpoint stays the
        only truth for where the query resumes, so a failed commit is a warning, not an error.
        """
        self._commit_to_group(self._checkpointed(end, "the end of a committed batch").state)

    def _commit_to_group(self, state: OffsetState) -> None:
        group = self._options.commit_offsets_to_group
        if group is None:
            return
        offsets = state.offsets()
        if not offsets or offsets == self._group_committed:
            return
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        try:
            if self._group_committer is None:
                self._group_committer = group_committer(self._options, group)
            self._group_committer.commit(
                offsets=[
                    KafkaTopicPartition(tp.topic, tp.partition, o)
                    for tp, o in sorted(offsets.items())
                ],
                asynchronous=False,
            )
            self._group_committed = offsets
        except KafkaException as exc:
            logger.warning("could not commit offsets to consumer group %r: %s", group, exc)

    @cycle_collector_paused()
    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """Cut ``[start, end)`` into tasks; a partition whose offset went back reads nothing."""
        start_document = self._checkpointed(start, "the start of a batch")
        end_document = self._checkpointed(end, "the end of a batch")
        recreated = set(recreated_topics(start_document.topic_ids, end_document.topic_ids))
        if end_document is not self._planned:
            # Planned by an earlier run of the query: check its topics are still the same.
            # (This reader's own plan checked the ids after its offset lookups.)
            recreated.update(self._recreated_since(end_document))
        start_state = clip_to(start_document.state, end_document.state, frozenset(recreated))
        return plan_input_partitions(start_state, end_document.state, self._options)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Read one task's ranges on an executor, with one consumer for all of them."""
        return read_input_partition(partition, self._settings)

    def stop(self) -> None:
        """Drop the Kafka clients when the query ends."""
        if self._metadata is not None:
            self._metadata.close()
            self._metadata = None
        if self._group_committer is not None:
            self._group_committer.close()
            self._group_committer = None


def clip_to(
    start: OffsetState, end: OffsetState, recreated: frozenset[str] = frozenset()
) -> OffsetState:
    """``start``, with each partition whose offset in ``end`` is lower moved back to it.

    Such a partition went back (deleted and re-created, with ``failOnDataLoss`` false): it
    reads nothing this batch. So does every partition of a topic in ``recreated``, whose
    ``end`` offset belongs to the new topic while ``start`` belongs to the old one, even where
    it is higher. Partitions only in ``start`` keep their offsets. Keyed by
    ``(topic, partition)`` tuples, as a batch of thousands of partitions has no partition to
    clip almost always and should not pay for building keyed offset maps to find that out.
    """
    end_at = {(sub.topic, sub.partition): sub.offset for slot in end.slots for sub in slot}
    back: dict[TopicPartition, int] = {}
    for slot in start.slots:
        for sub in slot:
            until = end_at.get((sub.topic, sub.partition), sub.offset)
            if until < sub.offset or (sub.topic in recreated and until != sub.offset):
                back[sub.topic_partition] = until
    return start.with_offsets(back) if back else start


def backlog_report(end: OffsetState, latest: Mapping[TopicPartition, int]) -> dict[str, Any]:
    """Sum, per slot, the records between each partition's batch end and its latest offset."""
    latest_at = {(tp.topic, tp.partition): offset for tp, offset in latest.items()}
    per_slot = []
    values = []
    for slot in end.slots:
        behind = [
            max(0, latest_at.get((sub.topic, sub.partition), sub.offset) - sub.offset)
            for sub in slot
        ]
        per_slot.append(sum(behind))
        values.extend(behind)
    return {
        "total": sum(values),
        "perSlot": per_slot,
        "perPartition": {
            "min": min(values, default=0),
            "max": max(values, default=0),
            "avg": round(sum(values) / len(values), 1) if values else 0.0,
        },
    }
