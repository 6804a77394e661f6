"""How an executor reads one task.

The driver plans :class:`kafka_rescalable.task.KafkaInputPartition` values; Spark pickles each to an
executor, where :func:`read_input_partition` reads its ranges with the settings that travel on
the pickled reader (:func:`kafka_rescalable.task.read_settings`). :mod:`kafka_rescalable.source`
hands this
function to the readers, so the driver never imports this package.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from kafka_rescalable.executor.dead_letters import decode_with_dead_letters
from kafka_rescalable.executor.range_reader import read_ranges
from kafka_rescalable.formats.decoding import decode_batch
from kafka_rescalable.task import KafkaInputPartition, RangeReadSettings

__all__ = ["read_input_partition"]


def read_input_partition(
    partition: InputPartition, settings: RangeReadSettings
) -> Iterator[pa.RecordBatch]:
    """Read one task; Spark hands a placeholder partition to a batch plan with no ranges."""
    if not isinstance(partition, KafkaInputPartition):
        return iter(())
    batches = read_ranges(partition.ranges, settings)
    plan = settings.decode
    if plan is None:
        return batches
    if settings.dead_letters is not None:
        return decode_with_dead_letters(batches, partition.ranges, plan, settings.dead_letters)
    return (decode_batch(batch, plan) for batch in batches)
