"""The Arrow cutting kernel: which rows of a consumed batch their offset ranges want.

Pure: pyarrow and :mod:`state` values only, no Kafka client, so it is tested on batches built
in memory. :mod:`kafka_rescalable.executor.range_reader` calls it for each ``consume()`` batch
without
error events (nearly all of them) and does the I/O its answer asks for (un-assigning the
partitions it finished); :mod:`kafka_rescalable.executor.range_events` applies the same rule record
by
record to the rare batch that holds an error event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from kafka_rescalable.state import OffsetRange

__all__ = ["Cut", "RangeKey", "take_in_range"]

RangeKey = tuple[str, int]
"""A partition inside the executors' hot loops: ``(topic, partition)``, a plain tuple.

A validated :class:`state.TopicPartition` costs its checks per record; the loops only look
ranges up by it.
"""

# Columns of the batch, as kafka_rescalable.schema lays them out.
_TOPIC, _PARTITION, _OFFSET = 2, 3, 4


@dataclass(frozen=True)
class Cut:
    """The rows of one batch that their ranges want, and the ranges that batch finished.

    ``rows`` is ``None`` when no row is wanted. ``finished`` lists, in the order met, the
    partitions whose range ended in this batch: the caller stops reading them.
    """

    rows: pa.RecordBatch | None
    finished: tuple[RangeKey, ...]


def take_in_range(
    batch: pa.RecordBatch, remaining: Mapping[RangeKey, OffsetRange], single_topic: str | None
) -> Cut:
    """Cut ``batch`` (records, no error event) to the rows their ranges want.

    The rule, which :func:`kafka_rescalable.executor.range_events.accept_with_events` applies record
    by record, is computed once per run of consecutive records of one partition: a run of a
    partition not in ``remaining`` (or finished earlier in this batch) is dropped; otherwise
    its records are kept up to the first one at or past ``until - 1``, which is kept itself
    when it is below ``until``, and the partition is finished. Records below the range's start
    are dropped.

    Parameters
    ----------
    batch
        Rows laid out as :func:`kafka_rescalable.schema.arrow_schema` says.
    remaining
        The range still to read of each partition; not changed.
    single_topic
        The topic of every row, when the caller knows they all share one; the topic column is
        then not compared.
    """
    count = batch.num_rows
    partitions = batch.column(_PARTITION)
    offsets = batch.column(_OFFSET)
    if count > 1:
        changes = pc.not_equal(partitions.slice(1), partitions.slice(0, count - 1))
        if single_topic is None:
            topic_column = batch.column(_TOPIC)
            changes = pc.or_(
                changes, pc.not_equal(topic_column.slice(1), topic_column.slice(0, count - 1))
            )
        starts = [0, *(index + 1 for index in pc.indices_nonzero(changes).to_pylist())]
    else:
        starts = [0]
    first_rows = pa.array(starts, pa.int64())
    run_partitions = partitions.take(first_rows).to_pylist()
    if single_topic is None:
        run_topics = batch.column(_TOPIC).take(first_rows).to_pylist()
    else:
        run_topics = [single_topic] * len(starts)
    bounds = [*starts, count]
    kept: list[list[int]] = []
    finished: dict[RangeKey, None] = {}  # ordered, and a fast lookup
    for index, key in enumerate(zip(run_topics, run_partitions, strict=True)):
        offset_range = remaining.get(key)
        if offset_range is None or key in finished:
            continue  # fetched before its range finished; not ours to emit
        low, high = bounds[index], bounds[index + 1]
        last = offset_range.until - 1
        run = offsets.slice(low, high - low)
        stop = high
        extremes = pc.min_max(run)
        if extremes["max"].as_py() >= last:
            first = pc.indices_nonzero(pc.greater_equal(run, last))[0].as_py()
            stop = low + first + (1 if run[first].as_py() < offset_range.until else 0)
            finished[key] = None
        if stop == low:
            continue
        pieces = [[low, stop]]
        if extremes["min"].as_py() < offset_range.start:
            # Records below the range: left from an earlier assignment of a reused consumer.
            # librdkafka drops those itself; this keeps reuse from ever changing the rows.
            pieces = _at_or_above(offsets, low, stop, offset_range.start)
        for piece in pieces:
            if kept and kept[-1][1] == piece[0]:
                kept[-1][1] = piece[1]
            else:
                kept.append(piece)
    return Cut(_rows(batch, kept), tuple(finished))


def _rows(batch: pa.RecordBatch, kept: list[list[int]]) -> pa.RecordBatch | None:
    """Return the rows of ``batch`` in the ``[low, stop)`` pieces ``kept``, a slice if one."""
    if not kept:
        return None
    if len(kept) == 1:
        low, stop = kept[0]
        return batch if stop - low == batch.num_rows else batch.slice(low, stop - low)
    rows = [row for low, stop in kept for row in range(low, stop)]
    return batch.take(pa.array(rows, pa.int64()))


def _at_or_above(offsets: pa.Array, low: int, stop: int, start: int) -> list[list[int]]:
    """Return the runs of rows in ``[low, stop)`` whose offset is at least ``start``."""
    pieces: list[list[int]] = []
    for row, offset in enumerate(offsets.slice(low, stop - low).to_pylist(), low):
        if offset < start:
            continue
        if pieces and pieces[-1][1] == row:
            pieces[-1][1] = row + 1
        else:
            pieces.append([row, row + 1])
    return pieces
