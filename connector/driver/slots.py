"""The reader slots on the driver: how many, the first assignment, its log, the tasks of a batch.

The decisions are pure (``state.plan_tasks`` cuts the tasks, ``kafka_rescalable.state.parallelism``
counts the
slots); this module feeds them the options, asks the cluster for its cores when
``parallelism`` is ``auto``, and writes the log lines.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from kafka_rescalable._logging import logger
from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.driver.cluster_cores import application_cores
from kafka_rescalable.driver.kafka_metadata import KafkaMetadata, LiveTopics
from kafka_rescalable.driver.positions import check_assigned, resolve_start
from kafka_rescalable.state import (
    OffsetState,
    PartitionOffset,
    Rebalance,
    SlotsDocument,
    TopicPartition,
    carried_topic_ids,
    plan_tasks,
    rebalance,
)
from kafka_rescalable.state.assignment_text import describe_assignment, summarize_assignment
from kafka_rescalable.state.parallelism import BY_CORES, CORES_UNKNOWN, choose_slot_count
from kafka_rescalable.task import KafkaInputPartition

__all__ = [
    "log_assignment",
    "log_rebalance",
    "plan_input_partitions",
    "slot_count",
    "starting_document",
    "starting_state",
]


def plan_input_partitions(
    start: OffsetState, end: OffsetState, options: KafkaSourceOptions
) -> list[KafkaInputPartition]:
    """One input partition per planned task; empty ranges give none, as Spark expects."""
    tasks = plan_tasks(
        start,
        end,
        min_partitions=options.min_partitions,
        max_records_per_partition=options.max_records_per_partition,
        min_records_per_partition=options.min_records_per_partition,
    )
    return [KafkaInputPartition(task.slot, tuple(task.ranges)) for task in tasks]


def slot_count(options: KafkaSourceOptions, partition_count: int, current_slots: int = 0) -> int:
    """How many reader slots the next batch has, by ``state.parallelism.choose_slot_count``.

    Only ``auto`` asks the driver's REST API for the application's cores; the rule then logs
    a change of count at INFO, and a warning when the cores could not be read.
    """
    parallelism = options.parallelism
    cores = application_cores(options.parallelism_ui_url) if parallelism.kind == "auto" else None
    chosen = choose_slot_count(
        parallelism.kind,
        parallelism.count,
        partition_count=partition_count,
        current_slots=current_slots,
        cores=cores,
    )
    if chosen.reason == CORES_UNKNOWN:
        logger.warning(
            "parallelism=auto: the driver's REST API gave no executor cores (is spark.ui.enabled "
            "false? set 'parallelismUiUrl' if the UI is elsewhere); keeping %d reader slots",
            chosen.count,
        )
    elif chosen.reason == BY_CORES and chosen.count != current_slots:
        logger.info(
            "parallelism=auto: the application has %d cores, using %d reader slots",
            chosen.count,
            chosen.count,
        )
    return chosen.count


def starting_state(
    options: KafkaSourceOptions, metadata: KafkaMetadata, live: Collection[TopicPartition]
) -> OffsetState:
    """Spread the ``live`` partitions at their starting offsets over the first slots.

    The starting offsets are ``startingOffsets`` (or a timestamp option), or with
    ``startingOffsetsFromGroup`` that group's committed offsets where it has some.

    Raises
    ------
    InvalidOptionError
        When ``assign`` or ``startingOffsets`` names partitions that do not exist.
    DataLossError
        When a group's committed offset is out of range under ``failOnDataLoss``.
    """
    check_assigned(options, live)
    offsets = resolve_start(options, live, metadata)
    sub_states = [PartitionOffset(tp.topic, tp.partition, o) for tp, o in offsets.items()]
    return rebalance(OffsetState.of([]), slot_count(options, len(live)), sub_states).state


def starting_document(
    options: KafkaSourceOptions, metadata: KafkaMetadata, found: LiveTopics
) -> SlotsDocument:
    """Return a new streaming query's first document: :func:`starting_state`, logged, with ids.

    The topic ids of the partitions found are recorded from the start, so a topic deleted and
    re-created before the first batch ends is recognised as such.
    """
    live = found.partitions
    state = starting_state(options, metadata, live)
    log_assignment("Initial assignment", state)
    ids = carried_topic_ids({}, found.topic_ids, {tp.topic for tp in live})
    return SlotsDocument(state, topic_ids=ids)


def log_rebalance(current: OffsetState, result: Rebalance) -> None:
    """Log a batch boundary's rebalance when it changed anything: count, moves, joins, leaves."""
    if (
        result.moved
        or result.added
        or result.removed
        or (result.state.num_slots != current.num_slots)
    ):
        log_assignment(
            f"Reader slots {current.num_slots} -> {result.state.num_slots} (moved "
            f"{len(result.moved)}, joined {len(result.added)}, left {len(result.removed)})",
            result.state,
        )


def log_assignment(what: str, state: OffsetState) -> None:
    """Log the summary at INFO and the whole list at DEBUG: one line each, short at any size."""
    logger.info("%s: %s", what, summarize_assignment(state))
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("%s, by slot: %s", what, describe_assignment(state))
