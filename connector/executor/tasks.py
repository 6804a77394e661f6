"""How an executor reads one task.

The driver plans :class:`connector.task.KafkaInputPartition` values; Spark pickles each to an
executor, where :func:`read_input_partition` reads its ranges with the settings that travel on
the pickled reader (:func:`connector.task.read_settings`). :mod:`connector.source` hands this
function to the readers, so the driver never imports this package.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from connector.executor.range_reader import read_ranges
from connector.formats.decoding import decode_batch
from connector.task import KafkaInputPartition, RangeReadSettings

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
    return (decode_batch(batch, plan) for batch in batches)
