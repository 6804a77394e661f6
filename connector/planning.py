"""Glue between the pure planner in ``state`` and Spark's input partitions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from connector._logging import logger
from connector.cluster_cores import application_cores
from connector.kafka_clients import executor_config
from connector.options import KafkaSourceOptions
from connector.range_reader import RangeReadSettings, read_ranges
from state import OffsetRange, OffsetState, plan_tasks

__all__ = [
    "KafkaInputPartition",
    "describe_assignment",
    "plan_input_partitions",
    "read_input_partition",
    "read_settings",
    "slot_count",
]



@dataclass(frozen=True)
class KafkaInputPartition(InputPartition):
    """One Spark task: the offset ranges one reader slot reads in this batch.

    ``slot`` is the reader slot the ranges belong to; when a long range was cut so that idle
    slots get work, every piece keeps the slot it was cut from.
    """

    slot: int
    ranges: tuple[OffsetRange, ...]


def plan_input_partitions(
    start: OffsetState, end: OffsetState, options: KafkaSourceOptions
) -> list[KafkaInputPartition]:
    """One input partition per planned task; empty ranges give none, as Spark expects."""
    tasks = plan_tasks(
        start,
        end,
        min_partitions=options.min_partitions,
        max_records_per_partition=options.max_records_per_partition,
    )
    return [KafkaInputPartition(task.slot, tuple(task.ranges)) for task in tasks]


def slot_count(options: KafkaSourceOptions, partition_count: int, current_slots: int = 0) -> int:
    """How many reader slots the next batch has.

    A number given as ``parallelism`` wins. ``auto`` follows the application's executor
    cores; when they cannot be read, the current slot count stays (one slot per partition
    for a new query), with a warning. Unset means one slot per partition, as Spark's built-in
    source has one task per partition.
    """
    if options.parallelism is not None:
        return options.parallelism
    fallback = current_slots or max(1, partition_count)
    if not options.auto_parallelism:
        return max(1, partition_count)
    cores = application_cores(options.parallelism_ui_url)
    if cores is None:
        logger.warning(
            "parallelism=auto: the driver's REST API gave no executor cores (is spark.ui.enabled "
            "false? set 'parallelismUiUrl' if the UI is elsewhere); keeping %d reader slots",
            fallback,
        )
        return fallback
    if cores != current_slots:
        logger.info(
            "parallelism=auto: the application has %d cores, using %d reader slots", cores, cores
        )
    return cores


def read_settings(options: KafkaSourceOptions) -> RangeReadSettings:
    """Return what executors need to read ranges; it travels with the pickled reader."""
    return RangeReadSettings(
        consumer_config=executor_config(options),
        include_headers=options.include_headers,
        fail_on_data_loss=options.fail_on_data_loss,
        poll_timeout_ms=options.poll_timeout_ms,
        batch_size=options.batch_size,
    )


def read_input_partition(
    partition: InputPartition, settings: RangeReadSettings
) -> Iterator[pa.RecordBatch]:
    """Read one task; Spark hands a placeholder partition to a batch plan with no ranges."""
    if not isinstance(partition, KafkaInputPartition):
        return iter(())
    return read_ranges(partition.ranges, settings)


def describe_assignment(state: OffsetState) -> str:
    """``slot 0: orders-0, orders-3; slot 1: ...`` for the driver log."""
    parts = []
    for index, slot in enumerate(state.slots):
        owned = ", ".join(f"{s.topic}-{s.partition}" for s in slot) or "(none)"
        parts.append(f"slot {index}: {owned}")
    return "; ".join(parts)
