"""The Spark ceiling for any Python data source: batches that cost nothing to make.

``format("python-ceiling")`` yields the same prebuilt Arrow record batch (our schema, the
workload's JSON values) over and over, with no Kafka and no per-record work in Python. What a
query reaches with it is what Spark itself can take in from a Python data source on this
machine: its fresh Python process per streaming query, the pickled reader per task, the Arrow
stream from the Python worker into the JVM and the conversion to rows. No Python reader of
Kafka can go faster, since it pays all of that plus the client's own ``consume()``.

It is a reference contender of the benchmark, not part of the product; the workers import it
by name, so the repository root must be on their ``PYTHONPATH``
(:func:`benchmarks.session.spark_session` sees to it).

Options: ``rows`` (total), ``partitions`` (tasks), ``valueBytes`` and ``batchRows``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.types import StructType

from benchmarks.workloads import json_value
from kafka_rescalable.schema import arrow_schema, spark_schema

__all__ = ["CEILING", "CeilingSource", "ceiling_options"]

CEILING = "python-ceiling"
BATCH_ROWS = 10_000
"""Rows per yielded batch: our executors' default ``consume()`` size."""


def ceiling_options(records: int, partitions: int, value_bytes: int) -> dict[str, str]:
    """Return the options that make the ceiling source yield a workload's shape."""
    return {
        "rows": str(records),
        "partitions": str(partitions),
        "valueBytes": str(value_bytes),
        "batchRows": str(BATCH_ROWS),
    }


class _Share(InputPartition):
    """One task's number of rows."""

    def __init__(self, index: int, rows: int) -> None:
        super().__init__(index)
        self.rows = rows


def _lowered(options: Mapping[str, str]) -> dict[str, str]:
    """Spark hands option names over case-insensitively; keep them in one case."""
    return {key.lower(): value for key, value in options.items()}


def _shares(options: Mapping[str, str]) -> list[_Share]:
    rows, tasks = int(options["rows"]), int(options["partitions"])
    base, extra = divmod(rows, tasks)
    return [_Share(k, base + (1 if k < extra else 0)) for k in range(tasks)]


def _batches(options: Mapping[str, str], share: _Share) -> Iterator[pa.RecordBatch]:
    """Yield ``share.rows`` rows as slices of one batch built before the first yield."""
    size = int(options.get("batchrows", str(BATCH_ROWS)))
    value_bytes = int(options["valuebytes"])
    batch = pa.RecordBatch.from_arrays(
        [
            pa.nulls(size, pa.binary()),
            pa.array([json_value(i, value_bytes) for i in range(size)], pa.binary()),
            pa.repeat("ceiling", size).cast(pa.string()),
            pa.repeat(share.value, size).cast(pa.int32()),
            pa.array(range(size), pa.int64()),
            pa.repeat(0, size).cast(pa.timestamp("us", tz="UTC")),
            pa.repeat(0, size).cast(pa.int32()),
        ],
        schema=arrow_schema(False),
    )
    left = share.rows
    while left > 0:
        yield batch if left >= size else batch.slice(0, left)
        left -= size


class _BatchReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = _lowered(options)

    def partitions(self) -> list[_Share]:
        return _shares(self.options)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _Share)
        return _batches(self.options, partition)


class _StreamReader(DataSourceStreamReader):
    """One micro-batch holding every row, then nothing: an AvailableNow query reads it once."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = _lowered(options)

    def initialOffset(self) -> dict:
        return {"done": 0}

    def latestOffset(self) -> dict:
        return {"done": 1}

    def partitions(self, start: dict, end: dict) -> list[_Share]:
        return _shares(self.options) if start["done"] < end["done"] else []

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _Share)
        return _batches(self.options, partition)

    def commit(self, end: dict) -> None:
        """Nothing to release."""


class CeilingSource(DataSource):
    """``format("python-ceiling")``: Spark's intake of a Python source that does no I/O."""

    @classmethod
    def name(cls) -> str:  # noqa: D102 - the DataSource API's
        return CEILING

    def schema(self) -> StructType:  # noqa: D102 - our Kafka schema, so both sinks match
        return spark_schema(False)

    def reader(self, schema: StructType) -> DataSourceReader:  # noqa: D102
        return _BatchReader(self.options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: D102
        return _StreamReader(self.options)
