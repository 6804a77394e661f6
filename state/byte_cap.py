"""The byte cap (``maxBytesPerTrigger``): end offsets whose records fit a number of bytes.

Kafka's offsets say how many records wait, not how large they are, so the byte cap needs the
sizes of the records it may admit. The driver reads them (a *size probe*) and this module
decides from them, in steps: :func:`byte_capped_ends` either decides the batch's ends from
the sizes known so far, or answers which partitions it needs more sizes of, and how many
bytes more are worth reading before the answer is "too big" anyway. The driver reads those
and asks again, so it reads about the records the batch admits, not the whole backlog.

The cap is spread over partitions by the same policy as the row cap
(:func:`~kafka_rescalable.state.admission.cap_end_offsets`, shares proportional to backlog,
every partition with records at least one): the byte cap picks the largest record count
whose shares fit the bytes, and with ``maxOffsetsPerTrigger`` the smaller count wins. The
bound, exact because the sizes are the records' own: a batch holds at most ``max_bytes``
bytes, except that every partition with records waiting reads at least its first one, so a
batch whose first records alone exceed the cap reads exactly those (one record per partition:
the overshoot).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafka_rescalable.state.admission import cap_end_offsets
from kafka_rescalable.state.partitions import TopicPartition

__all__ = ["ByteCap", "RecordSizes", "byte_capped_ends"]


@dataclass(frozen=True)
class RecordSizes:
    """The sizes of one partition's records from ``start``, known for offsets below ``until``.

    An offset below ``until`` without a record (a transaction marker, a compacted record)
    holds no bytes, so the sizes of any offset range inside ``[start, until)`` are known.

    Parameters
    ----------
    start : int
        The batch's start offset of the partition.
    until : int
        Sizes are known for every offset in ``[start, until)``.
    offsets : tuple of int
        The offsets of the records read, ascending, all in ``[start, until)``.
    cumulative : tuple of int
        ``cumulative[i]``: the bytes of the records ``offsets[0]`` to ``offsets[i]``.
    """

    start: int
    until: int
    offsets: tuple[int, ...] = ()
    cumulative: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        """Refuse sizes that do not line up: a policy fed them would count wrong bytes."""
        if self.until < self.start or len(self.offsets) != len(self.cumulative):
            msg = f"record sizes from {self.start} until {self.until} do not line up"
            raise ValueError(msg)

    @property
    def total(self) -> int:
        """The bytes of every record known."""
        return self.cumulative[-1] if self.cumulative else 0

    def bytes_before(self, offset: int) -> int:
        """Sum the bytes of the records in ``[start, offset)``; ``offset`` at most ``until``."""
        if offset > self.until:
            msg = f"sizes are known until offset {self.until}, not {offset}"
            raise ValueError(msg)
        index = bisect_left(self.offsets, offset)
        return self.cumulative[index - 1] if index else 0

    def rebased(self, start: int) -> RecordSizes | None:
        """Give the sizes from ``start`` on, or ``None`` if ``start`` is outside what is known.

        The records a size probe read past one batch's end are the next batch's first: kept,
        the probe reads each record of a backlog about once, not once per batch it waits in.
        """
        if not self.start <= start <= self.until:
            return None
        index = bisect_left(self.offsets, start)
        dropped = self.cumulative[index - 1] if index else 0
        cumulative = tuple(n - dropped for n in self.cumulative[index:])
        return RecordSizes(start, self.until, self.offsets[index:], cumulative)

    def extended(self, records: Iterable[tuple[int, int]], until: int) -> RecordSizes:
        """Add ``(offset, size)`` records read from ``self.until`` on; sizes known to ``until``.

        Records at or past ``until`` are left out: the caller read beyond what it asked for.
        """
        offsets, cumulative = list(self.offsets), list(self.cumulative)
        running = self.total
        for offset, size in records:
            if offset < self.until or offset >= until or (offsets and offset <= offsets[-1]):
                continue  # already known, past the end asked for, or a repeat
            running += size
            offsets.append(offset)
            cumulative.append(running)
        return RecordSizes(self.start, max(until, self.until), tuple(offsets), tuple(cumulative))


@dataclass(frozen=True)
class ByteCap:
    """One step of the byte cap: the decided ends, or which sizes to read first.

    Parameters
    ----------
    ends : Mapping[TopicPartition, int] or None
        The end offsets of the batch, or ``None`` while sizes are missing.
    records : int
        The offsets the decided ends admit, all partitions together.
    by_bytes : bool
        Whether the bytes held the batch back (rather than the row cap or the records
        available).
    need : Mapping[TopicPartition, int]
        While undecided: read each partition's sizes up to this offset...
    budget : int
        ...but stop once this many more bytes were read: past it, the answer is known.
    """

    ends: Mapping[TopicPartition, int] | None
    records: int = 0
    by_bytes: bool = False
    need: Mapping[TopicPartition, int] = field(default_factory=dict)
    budget: int = 0


_TOO_BIG = -1


def byte_capped_ends(
    start: Mapping[TopicPartition, int],
    ends: Mapping[TopicPartition, int],
    sizes: Mapping[TopicPartition, RecordSizes],
    *,
    max_bytes: int,
    max_records: int | None = None,
    settle: bool = False,
) -> ByteCap:
    """Cap ``ends`` so the batch's records fit ``max_bytes`` (and ``max_records``).

    Parameters
    ----------
    start : Mapping[TopicPartition, int]
        Where each partition of ``ends`` starts.
    ends : Mapping[TopicPartition, int]
        Where each partition would end without the caps (never below its start).
    sizes : Mapping[TopicPartition, RecordSizes]
        The sizes read so far; a partition missing here has none known.
    max_bytes : int
        The byte cap.
    max_records : int, optional
        The row cap; the smaller record count wins.
    settle : bool
        Decide now, taking sizes not known as too large (the size probe ran out of time):
        the batch then admits what is known to fit, and at least one record per partition.

    Returns
    -------
    ByteCap
        The ends, or what to read before asking again. The record count admitted is the
        largest found (by doubling from one per partition, then halving the gap) whose shares
        hold at most ``max_bytes``; as shares need not grow with the count in every partition
        (the largest-remainder method's paradox), a larger count might sometimes fit too, but
        never one that is admitted does not.
    """
    backlog = {tp: max(0, end - start[tp]) for tp, end in ends.items()}
    total = sum(backlog.values())
    high = total if max_records is None else min(total, max_records)
    floor = min(sum(1 for n in backlog.values() if n > 0), high)

    def shares(records: int) -> dict[TopicPartition, int]:
        if records >= total:
            return dict(ends)
        return cap_end_offsets(start, ends, records)

    def weigh(records: int) -> tuple[int, dict[TopicPartition, int]]:
        """Weigh ``records`` offsets: bytes (``_TOO_BIG`` past the cap), and what is missing."""
        weight, missing = 0, {}
        for tp, end in shares(records).items():
            known = sizes.get(tp) or RecordSizes(start[tp], start[tp])
            if end <= known.until:
                weight += known.bytes_before(end)
            else:
                weight += known.total
                missing[tp] = end
        if weight > max_bytes or (missing and settle):
            return _TOO_BIG, {}
        return weight, missing

    fits, too_big = floor, None
    while (trial := _next_trial(fits, too_big, high)) is not None:
        weight, missing = weigh(trial)
        if missing:
            return ByteCap(None, need=missing, budget=max_bytes - weight)
        if weight == _TOO_BIG:
            too_big = trial
        else:
            fits = trial
    return ByteCap(shares(fits), records=fits, by_bytes=too_big is not None)


def _next_trial(fits: int, too_big: int | None, high: int) -> int | None:
    """Double the count that fits until one is too big, then halve the gap; ``None``: done."""
    if too_big is None:
        return min(high, max(2 * fits, fits + 1)) if fits < high else None
    return (fits + too_big) // 2 if too_big - fits > 1 else None
