"""``spark.readStream``: micro-batches over a rescalable slots document.

Each ``latestOffset`` call is a batch boundary. That is where the slots document is
rebalanced, so the reader slot count can change between runs of one checkpoint (or between
batches), new partitions join and removed ones leave, and the end offsets are capped by the
read limit. ``partitions`` then only cuts ``[start, end)`` into tasks and never changes what is
checkpointed, so a batch re-planned after a crash reads exactly the same records.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
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

from kafka_rescalable._executor_guard import ShippedToExecutors
from kafka_rescalable._gc import collect_while_idle, planning_call
from kafka_rescalable._logging import logger
from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.driver.batch_limits import BatchLimits
from kafka_rescalable.driver.checkpointed import CheckpointedDocuments
from kafka_rescalable.driver.group_commits import GroupCommits
from kafka_rescalable.driver.kafka_metadata import KafkaMetadata, LiveTopics
from kafka_rescalable.driver.slots import (
    log_rebalance,
    plan_input_partitions,
    slot_count,
    starting_document,
)
from kafka_rescalable.errors import DataLossError, MissingTopicError
from kafka_rescalable.formats.decoding import DecodePlan
from kafka_rescalable.state import MAX_OFFSET, SlotsDocument, TopicPartition, recreated_topics
from kafka_rescalable.state.batch_boundary import (
    DataLoss,
    KafkaNow,
    must_wait,
    plan_batch_end,
    reconcile,
    recreation_loss,
    target_ends,
)
from kafka_rescalable.state.batch_edges import reading_start
from kafka_rescalable.state.latest_report import LatestByTopic
from kafka_rescalable.state.missing_topics import MissingTopicWatch
from kafka_rescalable.task import ReadTask, read_settings

__all__ = ["KafkaStreamReader"]


class KafkaStreamReader(ShippedToExecutors, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The streaming reader; Spark keeps one instance on the driver for the query's life.

    Each batch boundary is a fetch from Kafka, a call to the pure planner in
    :mod:`kafka_rescalable.state.batch_boundary`, and the end document serialized for Spark's
    offset log.
    Spark pickles a fresh instance to the executors for ``read``, so the Kafka clients are
    opened lazily and never pickled; ``read`` calls ``read_task`` (see
    :data:`kafka_rescalable.task.ReadTask`), which :mod:`kafka_rescalable.source` passes in so that
    the
    driver never imports the executor's code.
    """

    def __init__(
        self, options: KafkaSourceOptions, read_task: ReadTask, decode: DecodePlan | None = None
    ) -> None:
        self._options = options
        self._read_task = read_task  # module-level, so it pickles by name
        self._settings = read_settings(options, decode)
        self._metadata: KafkaMetadata | None = None
        self._available_now_target: dict[TopicPartition, int] | None = None
        self._latest: Mapping[TopicPartition, int] | None = None
        self._latest_by_topic = LatestByTopic()
        self._backlog: Mapping[str, Any] | None = None
        self._last_trigger_ms = 0.0
        self._group = GroupCommits(options)
        self._limits = BatchLimits(options)  # alignment's state, across batches
        self._documents = CheckpointedDocuments()
        self._planned: SlotsDocument | None = None  # the end of the batch planned last
        self._missing = MissingTopicWatch()
        self._initial: SlotsDocument | None = None  # what initialOffset answered first

    def __getstate__(self) -> dict[str, Any]:
        """Ship the reader to executors without its live Kafka clients or cached documents."""
        state = dict(self.__dict__)
        state["_metadata"] = None
        state["_documents"] = CheckpointedDocuments()  # executors never plan: ship none
        state["_planned"] = None
        state["_initial"] = None
        return state

    def _kafka(self) -> KafkaMetadata:
        if self._metadata is None:
            self._metadata = KafkaMetadata(self._options)
        return self._metadata

    def initialOffset(self) -> dict:
        """Resolve the starting options for the partitions that exist when the query starts.

        Spark asks twice for a new query's first batch: when it plans the batch (the start of
        ``latestOffset``) and again when it runs it (the start of ``partitions``). The first
        answer is kept and given again, so both are one position: ``latest`` or a consumer
        group's offsets (``startingOffsetsFromGroup``) may have moved in between, and the
        batch would then skip, or read twice, the records in between.
        """
        if self._initial is None:
            self._initial = self._resolve_initial()
        return self._documents.to_dict(self._initial)

    def _resolve_initial(self) -> SlotsDocument:
        kafka = self._kafka()
        found = kafka.live(self._options.subscription, with_ids=True)
        self._check_missing(found, frozenset())
        return starting_document(self._options, kafka, found)

    def getDefaultReadLimit(self) -> ReadLimit:
        """``maxOffsetsPerTrigger`` as a row cap, else ``minOffsetsPerTrigger``, else all.

        ``maxBytesPerTrigger`` is applied from the options (see :meth:`_plan`): the API has no
        byte limit, so it asks for a row limit that admits everything.

        The Python API carries one limit; when both options are set, the minimum is applied
        from the options whenever the engine passes a limit other than ``ReadAllAvailable``.
        """
        options = self._options
        if options.max_offsets_per_trigger is not None:
            return ReadMaxRows(options.max_offsets_per_trigger)
        if options.min_offsets_per_trigger is not None:
            return ReadMinRows(options.min_offsets_per_trigger)
        if options.max_event_time_drift_ms is not None or options.max_bytes_per_trigger:
            # Alignment and the byte cap limit what a batch reads; the engine passes
            # ReadAllAvailable only where it must read everything at once (Trigger.Once), and
            # then both yield.
            return ReadMaxRows(MAX_OFFSET)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Fix the end of an AvailableNow run: the partitions and offsets that exist now."""
        kafka = self._kafka()
        self._available_now_target = kafka.latest(kafka.partitions(self._options.subscription))

    @planning_call()
    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        """Plan the next batch: fetch from Kafka, let ``state.batch_boundary`` decide, serialize.

        Spark asks for the next batch only once the one ending at ``start`` is committed, and
        it calls ``commit`` for a batch only when it plans the next one: publishing ``start``
        here is what lets lag tools see the last batch of an AvailableNow run.
        """
        document = self._documents.checkpointed(start, "the start of the next batch")
        self._group.commit(document.state)
        end = self._kafka().look_up_and_plan(
            self._options.subscription,
            lambda found, now: self._plan(start, document, found, now, limit),
        )
        if end is start:
            collect_while_idle()  # no batch: Spark asks again after its polling delay
        return end

    def _plan(
        self,
        start: dict,
        document: SlotsDocument,
        found: LiveTopics,
        now: KafkaNow,
        limit: ReadLimit,
    ) -> dict:
        """Plan the batch after ``start`` from what Kafka answered; may run twice (see caller).

        Run by :meth:`KafkaMetadata.look_up_and_plan`, again when a plan that failed was
        made across a topic's re-creation, so it only sets this reader's own fields, each one
        afresh.
        """
        options, target = self._options, self._available_now_target
        self._check_missing(found, document.state.topics() | frozenset(document.topic_ids))
        carried = reconcile(
            document, now, fail_on_data_loss=options.fail_on_data_loss, target=target
        )
        _report(carried.losses)
        self._latest = now.latest
        must_read = target is not None or isinstance(limit, ReadAllAvailable)
        if must_wait(
            carried,
            now.latest,
            min_records=options.min_offsets_per_trigger,
            max_trigger_delay_ms=options.max_trigger_delay_ms,
            now_ms=time.time() * 1000,
            last_batch_ms=self._last_trigger_ms,
            must_read=must_read,
        ):
            return start
        ends = target_ends(carried, now.latest, target)
        cut = self._limits.cut(
            self._kafka(),
            carried.known,
            ends,
            now.latest,
            document,
            limit,
            available_now=target is not None,
        )
        end = plan_batch_end(
            document,
            carried,
            now,
            earliest=self._kafka().earliest(sorted(carried.joining)),
            slots=slot_count(options, len(carried.live), document.state.num_slots),
            ends=ends,
            aligned=cut.aligned,
            event_time=cut.event_time,
            max_records=cut.max_records,
            byte_cap=cut.byte_cap,
            subscribed=[t for t in document.topic_ids if options.subscription.matches(t)],
        )
        self._backlog = end.backlog
        log_rebalance(document.state, end.rebalance)
        if end.document is None:
            return start
        self._last_trigger_ms = time.time() * 1000  # maxTriggerDelay counts from here
        self._planned = end.document
        return self._documents.to_dict(end.document)

    def _check_missing(self, found: LiveTopics, known_topics: frozenset[str]) -> None:
        """Warn at once about a subscribed topic that does not exist; fail once it stays so.

        A typo in ``subscribe`` would otherwise leave the query idle for ever. A topic this
        query has read before and that has gone is data loss, reported elsewhere.
        """
        options = self._options
        timeout_ms = options.missing_topic_timeout_ms
        check = self._missing.check(
            found.missing,
            frozenset(map(itemgetter(0), found.partitions)) | known_topics,  # C-level pass
            now_s=time.monotonic(),
            timeout_ms=timeout_ms,
        )
        self._missing = check.watch
        for topic in check.new:
            logger.warning(
                "subscribed topic %r does not exist on %s; the query reads nothing from it "
                "and fails if it still does not exist after 'missingTopicTimeout' (%d s). "
                "Check its name in %s",
                topic,
                options.bootstrap_servers,
                timeout_ms // 1000,
                options.subscription.describe(),
            )
        if check.overdue:
            msg = (
                f"subscribed topic {', '.join(check.overdue)} has not existed on "
                f"{options.bootstrap_servers} for {timeout_ms // 1000} s "
                "('missingTopicTimeout'). Check the name in "
                f"{options.subscription.describe()}, create the topic, or raise "
                "'missingTopicTimeout'"
            )
            raise MissingTopicError(msg, check.overdue)

    def reportLatestOffset(self) -> dict | None:
        """Show the latest offsets and the backlog as ``latestOffset`` in query progress.

        The latest offsets are in Spark's per-topic form; the backlog is what is left after
        the batch.

        The Python data source API has no custom metrics, so the backlog that Spark's
        built-in source reports as ``offsetsBehindLatest`` metrics travels here instead.
        Also sends the batch's topic-id check (see :meth:`KafkaMetadata.look_up_and_plan`).
        """
        report = None
        if self._latest is not None:
            report = {
                "latest": self._latest_by_topic.report(self._latest),
                "backlog": self._backlog,
            }
        if self._metadata is not None:
            # Spark calls this right after latestOffset and then writes the batch to its offset
            # log: the batch's id check is sent now, to be answered while Spark does so.
            self._metadata.send_check()
        return report

    def commit(self, end: dict) -> None:
        """With ``commitOffsetsToGroup``, publish the batch's end offsets to that group."""
        self._group.commit(self._documents.checkpointed(end, "the end of a committed batch").state)

    @planning_call()
    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """Cut ``[start, end)`` into tasks; a partition whose offset went back reads nothing."""
        start_document = self._documents.checkpointed(start, "the start of a batch")
        end_document = self._documents.checkpointed(end, "the end of a batch")
        since = self._recreated_since(end_document)
        start_state = reading_start(start_document, end_document, since)
        tasks = plan_input_partitions(start_state, end_document.state, self._options)
        collect_while_idle()  # the batch now runs on the executors
        return tasks

    def _recreated_since(self, end: SlotsDocument) -> tuple[str, ...]:
        """Topics of a planned batch re-created since it was planned; fail or report them.

        If a topic was re-created after the batch's offsets were looked up, its planned
        offsets hold other records, which must not be read as the planned ones. The planned
        ones are gone, so under ``failOnDataLoss=false`` the batch reads nothing of that topic
        and the next batch starts the new topic from its earliest offset. A batch this reader
        planned is checked against the description sent after its offsets (see
        :meth:`KafkaMetadata.look_up_and_plan`); one planned by an earlier run of the query,
        replayed after a restart, against the topics as they are now.
        """
        if not end.topic_ids:
            return ()
        planned = dict(end.topic_ids)
        in_slots = end.state.topics()
        topics = sorted(topic for topic in planned if topic in in_slots)
        kafka = self._kafka()
        checked = kafka.checked() if end is self._planned else None
        now = dict(checked.topic_ids) if checked is not None else kafka.topic_ids(topics)
        changed = recreated_topics({t: planned[t] for t in topics}, now)
        if changed:
            _report([recreation_loss(changed, planned, now, self._options.fail_on_data_loss)])
        return changed

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Read one task's ranges on an executor, with one consumer for all of them."""
        return self._read_task(partition, self._settings)

    def stop(self) -> None:
        """Drop the Kafka clients when the query ends."""
        if self._metadata is not None:
            self._metadata.close()
            self._metadata = None
        self._group.close()


def _report(losses: Iterable[DataLoss]) -> None:
    """Raise the first fatal data loss; log the others as warnings."""
    for loss in losses:
        if loss.fatal:
            raise DataLossError(loss.message)
        logger.warning("%s", loss.message)
