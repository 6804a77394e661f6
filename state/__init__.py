"""Rescalable offset state: pure values and functions, no Spark and no Kafka client.

The source checkpoints, per reader slot, a list of Kafka partition positions (sub-states), so
the lists can be redistributed when the number of slots changes (Flink's FLIP-8 idea).

- ``kafka_rescalable.state.partitions``: :class:`TopicPartition`, :class:`PartitionOffset`,
  :class:`OffsetRange`.
- ``kafka_rescalable.state.offset_state``: :class:`OffsetState`, the per-slot sub-states.
- ``kafka_rescalable.state.document``: :class:`SlotsDocument`, the versioned JSON in Spark's offset
  log.
- ``kafka_rescalable.state.rebalancer``: :func:`rebalance`, the assignment of partitions to slots.
- ``kafka_rescalable.state.parallelism``: :func:`choose_slot_count`, the ``parallelism`` rule.
- ``kafka_rescalable.state.batch_boundary``: where the next micro-batch ends (data loss, minimum
  and cap,
  AvailableNow target, rebalance, backlog), decided from plain values.
- ``kafka_rescalable.state.batch_edges``: a batch's start clipped to its end, and the backlog its
  end leaves.
- ``kafka_rescalable.state.admission``: the row cap shared among partitions by backlog.
- ``kafka_rescalable.state.byte_cap``: the byte cap, the row cap's shares fitted to record
  sizes.
- ``kafka_rescalable.state.missing_topics``: subscribed topics that do not exist, and since when.
- ``kafka_rescalable.state.group_start``: :func:`start_from_group`, where
  ``startingOffsetsFromGroup`` starts
  each partition (committed offsets, the fallback, offsets out of range).
- ``kafka_rescalable.state.planning``: :func:`plan_tasks`, the tasks of one micro-batch.
- ``kafka_rescalable.state.topic_identity``: :func:`recreated_topics`, topic ids across batches.
- ``kafka_rescalable.state.assignment_text``: the summary and the full list of an assignment, for
  logs.
- ``kafka_rescalable.state.event_time``: :func:`alignment_frontier` and the checkpointed event-time
  clocks.
- ``kafka_rescalable.state.lost_records``: what a task does about records of its range that are
  gone.
- ``kafka_rescalable.state.errors``: the exceptions.
"""

from kafka_rescalable.state.document import (
    SLOTS_DOCUMENT_VERSION,
    SUPPORTED_VERSIONS,
    TOPIC_IDS_KEY,
    TOPICS_KEY,
    SlotsDocument,
)
from kafka_rescalable.state.errors import (
    DuplicatePartitionError,
    ForeignCheckpointError,
    KafkaRescalableError,
    OffsetDocumentError,
    OffsetRegressionError,
    StateError,
    UnknownPartitionError,
)
from kafka_rescalable.state.event_time import (
    EVENT_TIME_KEY,
    EventTimePositions,
    PartitionClock,
    alignment_frontier,
)
from kafka_rescalable.state.offset_state import OffsetState
from kafka_rescalable.state.partitions import (
    MAX_OFFSET,
    MAX_PARTITION,
    OffsetRange,
    PartitionOffset,
    TopicPartition,
)
from kafka_rescalable.state.planning import PlannedTask, plan_tasks
from kafka_rescalable.state.rebalancer import Rebalance, rebalance
from kafka_rescalable.state.topic_identity import carried_topic_ids, recreated_topics

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
