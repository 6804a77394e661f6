"""The reader slots on the driver: how many, the first assignment, the tasks of a batch.

The decisions are pure (``state.plan_tasks`` cuts the tasks, ``state.parallelism`` counts the
slots); this module feeds them the options, asks the cluster for its cores when
``parallelism`` is ``auto``, and writes the log lines.
"""

from __future__ import annotations

from collections.abc import Collection

from connector._logging import logger
from connector.config.options import KafkaSourceOptions
from connector.driver.cluster_cores import application_cores
from connector.driver.kafka_metadata import KafkaMetadata
from connector.driver.positions import check_assigned, resolve_start
from connector.executor.tasks import KafkaInputPartition
from state import OffsetState, PartitionOffset, TopicPartition, plan_tasks, rebalance
from state.parallelism import BY_CORES, CORES_UNKNOWN, choose_slot_count

__all__ = ["plan_input_partitions", "slot_count", "starting_state"]


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
    """How many reader slots the next batch has, by :func:`state.parallelism.choose_slot_count`.

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
