"""What one Spark task is, and how an executor reads it.

The driver plans :class:`KafkaInputPartition` values; Spark pickles each to an executor, where
:func:`read_input_partition` reads its ranges with the settings that travel on the pickled
reader (:func:`read_settings`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from connector.config.options import KafkaSourceOptions
from connector.executor.range_reader import RangeReadSettings, read_ranges
from connector.formats.decoding import DecodePlan, decode_batch
from connector.kafka_clients import executor_config
from state import OffsetRange

__all__ = ["KafkaInputPartition", "read_input_partition", "read_settings"]


@dataclass(frozen=True)
class KafkaInputPartition(InputPartition):
    """One Spark task: the offset ranges one reader slot reads in this batch.

    ``slot`` is the reader slot the ranges belong to; when a long range was cut so that idle
    slots get work, every piece keeps the slot it was cut from.
    """

    slot: int
    ranges: tuple[OffsetRange, ...]


def read_settings(
    options: KafkaSourceOptions, decode: DecodePlan | None = None
) -> RangeReadSettings:
    """Return what executors need to read ranges; it travels with the pickled reader.

    ``decode`` says how typed keys and values are decoded (see :mod:`connector.formats`).
    """
    return RangeReadSettings(
        consumer_config=executor_config(options),
        include_headers=options.include_headers,
        fail_on_data_loss=options.fail_on_data_loss,
        poll_timeout_ms=options.poll_timeout_ms,
        batch_size=options.batch_size,
        decode=decode,
    )


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
