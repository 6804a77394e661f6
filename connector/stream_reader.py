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
from connector.admission import cap_end_offsets
from connector.alignment import align_end_offsets
from connector.errors import DataLossError, InvalidOptionError
from connector.kafka_metadata import KafkaMetadata, describe_partitions, missing_partitions
from connector.options import AssignPartitions, KafkaSourceOptions
from connector.planning import (
    describe_assignment,
    plan_input_partitions,
    read_input_partition,
    read_settings,
    slot_count,
)
from connector.positions import resolve_bound
from state import (
    EVENT_TIME_KEY,
    MAX_OFFSET,
    EventTimePositions,
    OffsetState,
    PartitionOffset,
    SlotsDocument,
    TopicPartition,
    rebalance,
)

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

    def __getstate__(self) -> dict[str, Any]:
        """Ship the reader to executors without its live Kafka clients or cached documents."""
        state = dict(self.__dict__)
        state["_metadata"] = None
        state["_group_committer"] = None
        state["_documents"] = _DocumentCache()  # executors never plan: ship no documents
        return state

    def _kafka(self) -> KafkaMetadata:
        if self._metadata is None:
            self._metadata = KafkaMetadata(self._options)
        return self._metadata

    def _slot_count(self, partition_count: int, current_slots: int = 0) -> int:
        """Return the slot count for the next batch (see :func:`connector.planning.slot_count`)."""
        return slot_count(self._options, partition_count, current_slots)

    def initialOffset(self) -> dict:
        """Resolve ``startingOffsets`` for the partitions that exist when the query starts."""
        options = self._options
        kafka = self._kafka()
        live = kafka.partitions(options.subscription)
        if isinstance(options.subscription, AssignPartitions):
            absent = missing_partitions(options.subscription.partitions, live)
            if absent:
                msg = f"{describe_partitions(absent)} do not exist on {options.bootstrap_servers}"
                raise InvalidOptionError("assign", msg)
        offsets = resolve_bound(options.starting, "startingOffsets", live, kafka)
        sub_states = [PartitionOffset(tp.topic, tp.partition, o) for tp, o in offsets.items()]
        state = rebalance(OffsetState.of([]), self._slot_count(len(live)), sub_states).state
        logger.info(
            "Initial assignment over %d slots: %s", state.num_slots, describe_assignment(state)
        )
        return SlotsDocument(state).to_dict()

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
        document = self._documents.parse(start)
        current = document.state
        # Spark asks for the next batch only once the one ending at ``start`` is committed,
        # and it calls commit() for a batch only when it plans the next one: publishing
        # ``start`` here is what lets lag tools see the last batch of an AvailableNow run.
        self._commit_to_group(current)
        kafka = self._kafka()
        live = kafka.partitions(self._options.subscription)
        known = current.offsets()
        target = self._available_now_target
        if target is not None:
            live = frozenset(tp for tp in live if tp in target or tp in known)
        self._report_removed(frozenset(known.keys() - live))
        joining = kafka.earliest([tp for tp in live if tp not in known])
        latest = kafka.latest(live)
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
        end_state = result.state.with_offsets(ends)
        self._backlog = backlog_report(end_state, latest)
        if end_state == current:
            return start  # nothing to read and nothing moved: no batch, even if clocks ticked
        self._last_trigger_ms = time.time() * 1000  # maxTriggerDelay counts from here
        return self._documents.to_dict(SlotsDocument(end_state, extras))

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
        # Sorted for stable messages; only the few that went back are sorted, not all.
        for tp in sorted(tp for tp, end in ends.items() if end < known[tp]):
            msg = (
                f"{tp.topic}-{tp.partition}: the latest offset {ends[tp]} is below the "
                f"checkpointed position {known[tp]}; the topic was probably deleted and "
                "re-created, so records may have been missed"
            )
            if self._options.fail_on_data_loss:
                raise DataLossError(msg + ". Set 'failOnDataLoss' to false to go on.")
            logger.warning("%s; continuing from %d because failOnDataLoss is false", msg, ends[tp])
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
        self._commit_to_group(self._documents.parse(end).state)

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
        start_state = self._documents.parse(start).state
        end_state = self._documents.parse(end).state
        return plan_input_partitions(clip_to(start_state, end_state), end_state, self._options)

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


def group_committer(options: KafkaSourceOptions, group: str) -> Any:
    """Return a consumer that never subscribes: it only commits offsets for ``group``."""
    from confluent_kafka import Consumer

    return Consumer(
        {
            **options.kafka_settings,
            "bootstrap.servers": options.bootstrap_servers,
            "group.id": group,
            "enable.auto.commit": False,
        }
    )


def clip_to(start: OffsetState, end: OffsetState) -> OffsetState:
    """``start``, with each partition whose offset in ``end`` is lower moved back to it.

    Such a partition went back (deleted and re-created, with ``failOnDataLoss`` false): it
    reads nothing this batch. Partitions only in ``start`` keep their offsets. Keyed by
    ``(topic, partition)`` tuples, as a batch of thousands of partitions has no partition to
    clip almost always and should not pay for building keyed offset maps to find that out.
    """
    end_at = {(sub.topic, sub.partition): sub.offset for slot in end.slots for sub in slot}
    back: dict[TopicPartition, int] = {}
    for slot in start.slots:
        for sub in slot:
            until = end_at.get((sub.topic, sub.partition), sub.offset)
            if until < sub.offset:
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
