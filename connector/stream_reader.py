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

from connector._logging import logger
from connector.admission import cap_end_offsets
from connector.alignment import align_end_offsets
from connector.errors import DataLossError, InvalidOptionError
from connector.kafka_metadata import KafkaMetadata, describe_partitions, missing_partitions
from connector.options import AssignPartitions, KafkaSourceOptions
from connector.planning import (
    describe_assignment,
    slot_count,
    plan_input_partitions,
    read_input_partition,
    read_settings,
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

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_metadata"] = None
        state["_group_committer"] = None
        return state

    def _kafka(self) -> KafkaMetadata:
        if self._metadata is None:
            self._metadata = KafkaMetadata(self._options)
        return self._metadata

    def _slot_count(self, partition_count: int, current_slots: int = 0) -> int:
        """The slot count for the next batch (see :func:`connector.planning.slot_count`)."""
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
        logger.info("Initial assignment over %d slots: %s", state.num_slots, describe_assignment(state))
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

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        """Rebalance the slots and move each partition's offset to its end for this batch."""
        document = SlotsDocument.from_dict(start)
        current = document.state
        # Spark asks for the next batch only once the one ending at ``start`` is committed,
        # and it calls commit() for a batch only when it plans the next one: publishing
        # ``start`` here is what lets lag tools see the last batch of an AvailableNow run.
        self._commit_to_group(current)
        kafka = self._kafka()
        live = kafka.partitions(self._options.subscription)
        target = self._available_now_target
        if target is not None:
            live = frozenset(tp for tp in live if tp in target or tp in current.partitions())
        self._report_removed(current.partitions() - live)
        known = current.offsets()
        joining = kafka.earliest([tp for tp in live if tp not in known])
        latest = kafka.latest(live)
        self._latest = latest
        if self._should_wait(known, latest, limit) and not joining:
            return start
        ends, extras = self._end_offsets(known, latest, limit, document.extras)
        weights = {tp: max(0, latest[tp] - known.get(tp, joining.get(tp, 0))) for tp in live}
        sub_states = [
            PartitionOffset(tp.topic, tp.partition, known.get(tp, joining.get(tp, 0))) for tp in live
        ]
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
        return SlotsDocument(end_state, extras).to_dict()

    def _should_wait(
        self,
        known: Mapping[TopicPartition, int],
        latest: Mapping[TopicPartition, int],
        limit: ReadLimit,
    ) -> bool:
        """``minOffsetsPerTrigger``: skip this trigger until enough records wait, but never
        for longer than ``maxTriggerDelay`` since the last batch. AvailableNow and
        ``ReadAllAvailable`` never wait: they must reach their end."""
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
        """Where each already-known partition's next batch ends (joining ones stay put), and
        the document's other sections. In order: the AvailableNow target, event-time
        alignment, then the row cap, so the cap is shared only by partitions free to move."""
        ends = {tp: latest[tp] for tp in latest if tp in known}
        for tp in sorted(ends):
            if ends[tp] < known[tp]:
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
        """What query progress shows as this source's ``latestOffset``: the latest offsets
        (Spark's per-topic form) and the backlog left after the batch.

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
        self._commit_to_group(SlotsDocument.from_dict(end).state)

    def _commit_to_group(self, state: OffsetState) -> None:
        group = self._options.commit_offsets_to_group
        offsets = state.offsets()
        if group is None or not offsets or offsets == self._group_committed:
            return
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        try:
            if self._group_committer is None:
                self._group_committer = group_committer(self._options, group)
            self._group_committer.commit(
                offsets=[KafkaTopicPartition(tp.topic, tp.partition, o) for tp, o in sorted(offsets.items())],
                asynchronous=False,
            )
            self._group_committed = offsets
        except KafkaException as exc:
            logger.warning("could not commit offsets to consumer group %r: %s", group, exc)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """Cut ``[start, end)`` into tasks; a partition whose offset went back reads nothing."""
        start_state = SlotsDocument.from_dict(start).state
        end_state = SlotsDocument.from_dict(end).state
        end_offsets = end_state.offsets()
        clipped = {
            tp: min(offset, end_offsets[tp])
            for tp, offset in start_state.offsets().items()
            if tp in end_offsets
        }
        return plan_input_partitions(start_state.with_offsets(clipped), end_state, self._options)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Runs on an executor: one consumer reads the task's ranges."""
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
    """A consumer that never subscribes: it only commits offsets for ``group``."""
    from confluent_kafka import Consumer

    return Consumer(
        {
            **options.kafka_settings,
            "bootstrap.servers": options.bootstrap_servers,
            "group.id": group,
            "enable.auto.commit": False,
        }
    )


def backlog_report(end: OffsetState, latest: Mapping[TopicPartition, int]) -> dict[str, Any]:
    """Records between each partition's batch end and its latest offset, summed per slot."""
    behind = {tp: max(0, latest.get(tp, offset) - offset) for tp, offset in end.offsets().items()}
    values = list(behind.values())
    per_slot = [sum(behind[s.topic_partition] for s in slot) for slot in end.slots]
    return {
        "total": sum(values),
        "perSlot": per_slot,
        "perPartition": {
            "min": min(values, default=0),
            "max": max(values, default=0),
            "avg": round(sum(values) / len(values), 1) if values else 0.0,
        },
    }
