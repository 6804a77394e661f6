"""Admission control: cap the records of one micro-batch, shared among partitions by backlog."""

from __future__ import annotations

from collections.abc import Mapping

from kafka_rescalable.state.partitions import TopicPartition

__all__ = ["cap_end_offsets"]


def cap_end_offsets(
    start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int], max_records: int
) -> dict[TopicPartition, int]:
    """End offsets that admit at most ``max_records`` records in total.

    Each partition gets a share of the cap proportional to its backlog (largest remainders
    first, ties by topic-partition, so the result is deterministic). A partition with a small
    backlog is never starved: while the cap allows, every partition with data gets at least one
    record, taken from the largest shares.
    """
    backlog = {tp: max(0, latest[tp] - start[tp]) for tp in latest if tp in start}
    total = sum(backlog.values())
    if total <= max_records:
        return {tp: start[tp] + n for tp, n in backlog.items()} | _untouched(start, latest)
    shares = {tp: max_records * n // total for tp, n in backlog.items()}
    left = max_records - sum(shares.values())
    by_remainder = sorted(backlog, key=lambda tp: (-(max_records * backlog[tp] % total), tp))
    for tp in by_remainder[:left]:
        shares[tp] += 1
    starving = sorted(tp for tp, n in backlog.items() if n > 0 and shares[tp] == 0)
    for tp in starving:
        richest = max(shares, key=lambda other: (shares[other], other))
        if shares[richest] <= 1:
            break
        shares[richest] -= 1
        shares[tp] = 1
    return {tp: start[tp] + shares[tp] for tp in backlog} | _untouched(start, latest)


def _untouched(
    start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """Partitions known only on one side keep their latest offset; the caller decides."""
    return {tp: offset for tp, offset in latest.items() if tp not in start}
