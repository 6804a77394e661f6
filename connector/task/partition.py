"""The input partition Spark pickles from the driver to an executor, and how one is read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from kafka_rescalable.state import OffsetRange
from kafka_rescalable.task.settings import RangeReadSettings

__all__ = ["KafkaInputPartition", "ReadTask"]


@dataclass(frozen=True)
class KafkaInputPartition(InputPartition):
    """One Spark task: the offset ranges one reader slot reads in this batch.

    ``slot`` is the reader slot the ranges belong to; when a long range was cut so that idle
    slots get work, every piece keeps the slot it was cut from.
    """

    slot: int
    ranges: tuple[OffsetRange, ...]


ReadTask = Callable[[InputPartition, RangeReadSettings], Iterator[pa.RecordBatch]]
"""Read one task on an executor into Arrow batches, with the settings the reader carries.

:mod:`kafka_rescalable.source` passes :func:`kafka_rescalable.executor.tasks.read_input_partition`.
The
readers keep it as an attribute, so it is pickled with them: it must be a module-level
function, which pickle ships by name (and the executor then imports its module).
"""
