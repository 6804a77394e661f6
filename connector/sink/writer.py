"""The sink's Spark writers: batch (``df.write``) and streaming (``df.writeStream``).

Both are Arrow writers: PySpark hands each task its partition as Arrow record batches, which
the sink converts a column at a time. They are built on the driver, where the options and
the input schema are checked, and pickled to the executors, where ``write`` runs once per
task. Which micro-batch a task belongs to, and which query, Spark tells the task through its
local properties (``streaming.sql.batchId``, ``sql.streaming.queryId``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from kafka_rescalable._executor_guard import ShippedToExecutors
from kafka_rescalable._logging import logger
from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.sink.options import KafkaSinkOptions, parse
from kafka_rescalable.sink.producing import write_at_least_once
from kafka_rescalable.sink.rows import SinkColumns
from kafka_rescalable.sink.transactions import SinkTask, write_exactly_once

__all__ = ["KafkaBatchWriter", "KafkaStreamWriter", "SinkCommitMessage", "make_writer"]

BATCH_ID_PROPERTY: Final = "streaming.sql.batchId"
QUERY_ID_PROPERTY: Final = "sql.streaming.queryId"


@dataclass
class SinkCommitMessage(WriterCommitMessage):
    """One task's report to the driver: its sink partition and what it wrote.

    ``already_committed`` says the task found its rows committed by an earlier attempt.
    """

    partition: int
    records: int
    already_committed: bool


def _write_task(
    options: KafkaSinkOptions, columns: SinkColumns, batches: Iterator[Any], write_id: str
) -> SinkCommitMessage:
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context else 0
    if options.exactly_once:
        batch = context.getLocalProperty(BATCH_ID_PROPERTY) if context else None
        query = context.getLocalProperty(QUERY_ID_PROPERTY) if context else None
        task = SinkTask(
            query_id=query or write_id,
            batch_id=int(batch) if batch is not None else 0,
            partition=partition,
            attempt=context.attemptNumber() if context else 0,
        )
        outcome = write_exactly_once(options, columns, task, batches)
    else:
        outcome = write_at_least_once(options, columns, batches)
    return SinkCommitMessage(partition, outcome.records, outcome.already_committed)


def _summary(messages: list[Any]) -> str:
    done = [m for m in messages if isinstance(m, SinkCommitMessage)]
    records = sum(m.records for m in done)
    skipped = sum(1 for m in done if m.already_committed)
    return f"{records} records from {len(done)} tasks ({skipped} found already committed)"


class KafkaBatchWriter(ShippedToExecutors, DataSourceArrowWriter):
    """Write a DataFrame to Kafka once (``df.write.format("kafka-rescalable").save()``).

    Under exactly-once, one ``save()`` is one set of transactional ids: a retried or
    speculative task of this job writes its partition once.
    """

    def __init__(self, options: KafkaSinkOptions, columns: SinkColumns) -> None:
        self._options = options
        self._columns = columns
        self._write_id = f"batch-{uuid.uuid4()}"

    def write(self, iterator: Iterator[Any]) -> SinkCommitMessage:
        """Write one task's rows; see the module doc."""
        return _write_task(self._options, self._columns, iterator, self._write_id)

    def commit(self, messages: list[Any]) -> None:
        """Log what the job wrote: every task has already committed its own rows."""
        logger.info("Kafka sink wrote %s", _summary(messages))

    def abort(self, messages: list[Any]) -> None:
        """Log the failure: transactions of failed tasks were aborted or will be fenced."""
        logger.warning("Kafka sink job failed after %s", _summary(messages))


class KafkaStreamWriter(ShippedToExecutors, DataSourceStreamArrowWriter):
    """Write each micro-batch to Kafka (``df.writeStream.format("kafka-rescalable")``)."""

    def __init__(self, options: KafkaSinkOptions, columns: SinkColumns) -> None:
        self._options = options
        self._columns = columns
        self._write_id = f"stream-{uuid.uuid4()}"

    def write(self, iterator: Iterator[Any]) -> SinkCommitMessage:
        """Write one task's rows of the current micro-batch; see the module doc."""
        return _write_task(self._options, self._columns, iterator, self._write_id)

    def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803 (Spark's name)
        """Log what the batch wrote: each task committed its own transaction already.

        Under exactly-once, ``read_committed`` readers have seen each task's rows since that
        task committed, possibly before the rest of the batch.
        """
        logger.info("Kafka sink batch %d: %s", batchId, _summary(messages))

    def abort(self, messages: list[Any], batchId: int) -> None:  # noqa: N803 (Spark's name)
        """Log the failure; a rerun of the batch writes only what no attempt committed."""
        logger.warning("Kafka sink batch %d failed after %s", batchId, _summary(messages))


def make_writer(
    raw_options: Mapping[str, str], schema: StructType, overwrite: bool, streaming: bool
) -> KafkaBatchWriter | KafkaStreamWriter:
    """Check the options and the input schema, and return the batch or streaming writer.

    Raises
    ------
    InvalidOptionError
        For a bad option, or the ``overwrite`` save mode (Kafka topics are append-only).
    SinkInputError
        For input columns the sink cannot write, or a typed column whose format's encoder
        refuses its type (the encoders are built here once, so that this fails before any
        task runs).
    """
    if overwrite:
        msg = "Kafka topics are append-only; write with mode('append')"
        raise InvalidOptionError("mode", f"'overwrite' is not supported: {msg}")
    options = parse(raw_options)
    columns = SinkColumns.from_schema(schema, options.topic, options.payloads)
    columns.encoders()
    if streaming:
        return KafkaStreamWriter(options, columns)
    return KafkaBatchWriter(options, columns)
