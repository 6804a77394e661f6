"""Plan one micro-batch: turn ``[start, end)`` into the tasks Spark runs.

Planning never changes what is checkpointed: the offset state keeps one offset per
partition, and cutting a range into pieces only changes how many tasks read it. So a batch
re-planned after a failure, with other options even, reads exactly the same records.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from itertools import chain, compress, count
from operator import attrgetter, itemgetter, sub

from kafka_rescalable.state.offset_state import OffsetState, sums_per_slot
from kafka_rescalable.state.partitions import (
    OffsetRange,
    check_int,
    slot_setters,
    trusted_offset_range,
)

__all__ = ["PlannedTask", "plan_tasks"]


@dataclass(frozen=True, slots=True)
class PlannedTask:
    """One Spark task of a batch: offset ranges read, in order, by one consumer.

    Parameters
    ----------
    slot : int
        The reader slot the ranges belong to. When a slot's ranges were cut so that idle
        slots get work, every piece keeps the index of the slot it was cut from, so several
        tasks may share a slot. When a small batch was coalesced, a task reads the ranges of
        several whole slots and is named after the first of them.
    ranges : tuple of OffsetRange
        At least one range, none empty, in ``(topic, partition)`` order.

    Raises
    ------
    TypeError
        When a field has the wrong type.
    ValueError
        When ``slot`` is negative, or ``ranges`` is empty or holds an empty range: an
        empty task would make Spark schedule a task that reads nothing.
    """

    slot: int
    ranges: tuple[OffsetRange, ...]

    def __post_init__(self) -> None:
        """Validate once: a task reaches the executors and must not be empty there."""
        check_int("slot", self.slot)
        if not isinstance(self.ranges, tuple) or not all(
            isinstance(r, OffsetRange) for r in self.ranges
        ):
            msg = f"ranges: must be a tuple of OffsetRange, got {self.ranges!r}"
            raise TypeError(msg)
        if not self.ranges or any(r.size == 0 for r in self.ranges):
            msg = f"ranges: must hold at least one range and no empty range, got {self.ranges!r}"
            raise ValueError(msg)

    @property
    def records(self) -> int:
        """Offsets this task reads (an upper bound of its records, see ``OffsetRange``)."""
        return sum(r.size for r in self.ranges)


def plan_tasks(
    start: OffsetState,
    end: OffsetState,
    *,
    min_partitions: int | None = None,
    max_records_per_partition: int | None = None,
    min_records_per_partition: int | None = None,
) -> tuple[PlannedTask, ...]:
    """Cut the batch ``[start, end)`` into tasks.

    A small batch is read by fewer tasks than it has slots with data (*coalescing*): with
    ``min_records_per_partition`` ``M`` set and no ``max_records_per_partition``, the batch
    gets at most ``max(ceil(D / M), min_partitions or 1)`` tasks, each reading the ranges of
    whole slots, the slots spread so the tasks' sizes are even (largest first onto the
    smallest task). Every task costs the engine a fixed start-up, which for a Python source is
    larger than reading a few thousand records; the slots, what is checkpointed, do not change.

    Each slot of ``end`` with something to read gives its ranges (see
    :meth:`OffsetState.ranges_to`). With ``T = max(end.num_slots, min_partitions or 0)`` and
    ``D`` the offsets to read, the batch gets ``max(min(T, D), sum(ceil(D_s / cap)))`` tasks,
    where ``D_s`` is slot ``s``'s share and ``cap`` is ``max_records_per_partition`` (the sum
    counts one task per slot with data when there is no cap). So when fewer partitions have
    data than there are slots, long ranges are cut so that every slot has work, as Spark's
    ``minPartitions`` does, but never into pieces of zero offsets.

    How many tasks a slot gets: each slot first gets the fewest that respect the cap; each
    further task goes to the slot whose tasks are currently the largest (``D_s / n_s``, ties
    to the lower slot). A slot's ranges, read as one sequence, are then cut into that many
    contiguous pieces whose sizes differ by at most one, so the pieces of a Kafka partition
    stay contiguous and in order, and a piece may end one range and start the next.

    Parameters
    ----------
    start : OffsetState
        The batch start (the previous batch's end).
    end : OffsetState
        The batch end; its slots are the assignment the batch is read with.
    min_partitions : int, optional
        Spark's ``minPartitions``: the least number of tasks wanted, ``>= 1``.
    max_records_per_partition : int, optional
        Spark's ``maxRecordsPerPartition``: the most offsets one task reads, ``>= 1``.
    min_records_per_partition : int, optional
        The fewest offsets worth a task of their own, ``>= 1``; see coalescing above.

    Returns
    -------
    tuple of PlannedTask
        Ordered by slot, then by position in the slot's ranges; empty when nothing is to be
        read (Spark plans no partition for an empty batch).

    Raises
    ------
    OffsetRegressionError
        When a partition's end offset is before its start offset: the caller applies its
        data-loss policy first.
    TypeError, ValueError
        When an option is not a positive int; the message names it.
    """
    _check_option("min_partitions", min_partitions)
    _check_option("max_records_per_partition", max_records_per_partition)
    _check_option("min_records_per_partition", min_records_per_partition)
    if start == end:
        return ()
    loaded = _loaded_slots(start.ranges_to(end))
    if not loaded:
        return ()
    total = sum(records for _, _, records in loaded)
    if min_records_per_partition is not None and max_records_per_partition is None:
        worth = max(-(-total // min_records_per_partition), min_partitions or 1)
        if worth < len(loaded):
            return _coalesced(loaded, worth)
    wanted = min(max(end.num_slots, min_partitions or 0), total)
    cap = max_records_per_partition
    pieces = {slot: 1 if cap is None else -(-records // cap) for slot, _, records in loaded}
    extra = wanted - sum(pieces.values())
    if extra > 0:
        _add_pieces(pieces, {slot: records for slot, _, records in loaded}, extra)

    # The tasks are built from ranges already checked, and are not empty by construction.
    tasks = []
    for slot, ranges, records in loaded:
        if pieces[slot] == 1:
            tasks.append(_planned_task(slot, ranges))
        else:
            tasks += (_planned_task(slot, chunk) for chunk in _cut(ranges, records, pieces[slot]))
    return tuple(tasks)


class _Share:
    """A slot's offsets per task, ``records / pieces``: ordered largest first, then by slot.

    Compared exactly, by cross-multiplying: floats would round large offset counts, and
    ``Fraction`` normalizes and checks types at every step.
    """

    __slots__ = ("pieces", "records", "slot")

    def __init__(self, records: int, pieces: int, slot: int) -> None:
        self.records = records
        self.pieces = pieces
        self.slot = slot

    def __lt__(self, other: _Share) -> bool:
        mine = self.records * other.pieces
        theirs = other.records * self.pieces
        return mine > theirs or (mine == theirs and self.slot < other.slot)


def _add_pieces(pieces: dict[int, int], records_of: dict[int, int], extra: int) -> None:
    """Give ``extra`` more tasks, one at a time, to the slot whose tasks are the largest."""
    # A slot whose tasks are one offset each cannot be cut further.
    queue = [_Share(records_of[s], n, s) for s, n in pieces.items() if n < records_of[s]]
    heapq.heapify(queue)
    for _ in range(extra):
        share = heapq.heappop(queue)  # never empty: the total has at least ``wanted`` offsets
        share.pieces += 1
        pieces[share.slot] = share.pieces
        if share.pieces < share.records:
            heapq.heappush(queue, share)


def _coalesced(
    loaded: list[tuple[int, tuple[OffsetRange, ...], int]], count: int
) -> tuple[PlannedTask, ...]:
    """Spread whole slots over ``count`` tasks: largest slot first, onto the smallest task.

    Each task is named after the first of its slots and reads its ranges in
    ``(topic, partition)`` order; the tasks are ordered by that slot.
    """
    groups: list[list[int]] = [[] for _ in range(count)]
    if count == 1:  # a small batch, read by one task: no placement to decide
        groups[0] = list(map(itemgetter(0), loaded))
    else:
        heap = [(0, index) for index in range(count)]
        # ``loaded`` is in slot order and the sort is stable: largest first, then by slot.
        for slot, _, records in sorted(loaded, key=itemgetter(2), reverse=True):
            size, index = heapq.heappop(heap)
            groups[index].append(slot)
            heapq.heappush(heap, (size + records, index))
    ranges_of = {slot: ranges for slot, ranges, _ in loaded}
    # A task reads each partition once, so ordering by (topic, partition) orders its ranges,
    # with C-level comparisons instead of the dataclass's.
    tasks = [
        _planned_task(
            min(group),
            tuple(sorted(chain.from_iterable(map(ranges_of.__getitem__, group)), key=_key)),
        )
        for group in groups
    ]
    return tuple(sorted(tasks, key=attrgetter("slot")))


def _loaded_slots(
    grouped: tuple[tuple[OffsetRange, ...], ...],
) -> list[tuple[int, tuple[OffsetRange, ...], int]]:
    """``(slot, ranges, offsets)`` of each slot with ranges to read, in slot order.

    In C-level passes over all ranges at once: a slot often holds a single partition, and
    Python-level work per slot cost as much as per range at 10,000 partitions.
    """
    flat = list(chain.from_iterable(grouped))
    sizes = sums_per_slot(map(sub, map(_until, flat), map(_start, flat)), grouped)
    return list(compress(zip(count(), grouped, sizes), grouped))  # noqa: B905 - count() is endless


def _check_option(name: str, value: int | None) -> None:
    if value is not None:  # None: the option is not set
        check_int(name, value, 1)


def _cut(
    ranges: tuple[OffsetRange, ...], records: int, pieces: int
) -> list[tuple[OffsetRange, ...]]:
    """Cut the sequence of ``ranges`` into ``pieces`` contiguous, non-empty chunks.

    Chunk sizes differ by at most one, the longer ones first.
    """
    base, longer = divmod(records, pieces)
    chunks = []
    index, cursor = 0, ranges[0].start
    for number in range(pieces):
        need = base + (1 if number < longer else 0)
        chunk = []
        while need:
            current = ranges[index]
            take = min(need, current.until - cursor)
            if take == current.size:
                chunk.append(current)  # the whole range: the same value
            else:
                chunk.append(
                    trusted_offset_range(current.topic, current.partition, cursor, cursor + take)
                )
            cursor += take
            need -= take
            if cursor == current.until and index + 1 < len(ranges):
                index += 1
                cursor = ranges[index].start
        chunks.append(tuple(chunk))
    return chunks


_start = attrgetter("start")
_until = attrgetter("until")
_key = attrgetter("topic", "partition")
_set_slot, _set_ranges = slot_setters(PlannedTask, "slot", "ranges")


def _planned_task(slot: int, ranges: tuple[OffsetRange, ...]) -> PlannedTask:
    """``PlannedTask(slot, ranges)`` for values known valid, without checking them again."""
    task = object.__new__(PlannedTask)
    _set_slot(task, slot)
    _set_ranges(task, ranges)
    return task
