"""Rescalable offset state: pure values and functions, no Spark and no Kafka client.

The source checkpoints, per reader slot, a list of Kafka partition positions (sub-states), so
the lists can be redistributed when the number of slots changes (Flink's FLIP-8 idea).

- ``state.partitions``: :class:`TopicPartition`, :class:`PartitionOffset`, :class:`OffsetRange`.
- ``state.offset_state``: :class:`OffsetState`, the per-slot sub-states.
- ``state.document``: :class:`SlotsDocument`, the versioned JSON in Spark's offset log.
- ``state.rebalancer``: :func:`rebalance`, the assignment of partitions to slots.
- ``state.parallelism``: :func:`choose_slot_count`, the ``parallelism`` rule.
- ``state.batch_boundary``: where the next micro-batch ends (data loss, minimum and cap,
  AvailableNow target, rebalance, backlog), decided from plain values.
- ``state.batch_edges``: a batch's start clipped to its end, and the backlog its end leaves.
- ``state.admission``: the row cap shared among partitions by backlog.
- ``state.missing_topics``: subscribed topics that do not exist, and since when.
- ``state.group_start``: :func:`start_from_group`, where ``startingOffsetsFromGroup`` starts
  each partition (committed offsets, the fallback, offsets out of range).
- ``state.planning``: :func:`plan_tasks`, the tasks of one micro-batch.
- ``state.topic_identity``: :func:`recreated_topics`, topic ids across batches.
- ``state.assignment_text``: the summary and the full list of an assignment, for logs.
- ``state.event_time``: :func:`alignment_frontier` and the checkpointed event-time clocks.
- ``state.lost_records``: what a task does about records of its range that are gone.
- ``state.errors``: the exceptions.
"""

from state.document import (
    SLOTS_DOCUMENT_VERSION,
    SUPPORTED_VERSIONS,
    TOPIC_IDS_KEY,
    TOPICS_KEY,
    SlotsDocument,
)
from state.errors import (
    DuplicatePartitionError,
    ForeignCheckpointError,
    KafkaRescalableError,
    OffsetDocumentError,
    OffsetRegressionError,
    StateError,
    UnknownPartitionError,
)
from state.event_time import (
    EVENT_TIME_KEY,
    EventTimePositions,
    PartitionClock,
    alignment_frontier,
)
from state.offset_state import OffsetState
from state.partitions import MAX_OFFSET, MAX_PARTITION, OffsetRange, PartitionOffset, TopicPartition
from state.planning import PlannedTask, plan_tasks
from state.rebalancer import Rebalance, rebalance
from state.topic_identity import carried_topic_ids, recreated_topics

__all__ = [
    "EVENT_TIME_KEY",
    "EventTimePositions",
    "PartitionClock",
    "alignment_frontier",
    "carried_topic_ids",
    "recreated_topics",
    "MAX_OFFSET",
    "MAX_PARTITION",
    "SLOTS_DOCUMENT_VERSION",
    "SUPPORTED_VERSIONS",
    "TOPIC_IDS_KEY",
    "TOPICS_KEY",
    "DuplicatePartitionError",
    "ForeignCheckpointError",
    "KafkaRescalableError",
    "OffsetDocumentError",
    "OffsetRange",
    "OffsetRegressionError",
    "OffsetState",
    "PartitionOffset",
    "PlannedTask",
    "Rebalance",
    "SlotsDocument",
    "StateError",
    "TopicPartition",
    "UnknownPartitionError",
    "plan_tasks",
    "rebalance",
]
