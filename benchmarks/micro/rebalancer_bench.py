"""Micro-benchmark of :func:`state.rebalance`: time and partitions moved, no Kafka, no Spark.

Inputs (partition lists, starting states) are built before the clock starts; the time is
the call alone, median of a few runs. Partitions are spread over topics of 1,000 partitions
(``t000-0`` ... ``t099-999`` for 100,000), as a large subscription would be.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from benchmarks.diagnostics.profiling import profile_call
from kafka_rescalable.state import OffsetState, PartitionOffset, rebalance

__all__ = [
    "RebalanceCase",
    "RebalanceResult",
    "cases",
    "live_partitions",
    "measure_rebalance",
    "minimum_moves",
    "profile_rebalance",
]


@dataclass(frozen=True)
class RebalanceCase:
    """One rebalance: ``partitions`` partitions from ``from_slots`` (0: empty) to ``to_slots``."""

    partitions: int
    from_slots: int
    to_slots: int

    @property
    def description(self) -> str:
        """``100,000 partitions, 900 -> 1,000 slots`` (``empty`` for no slots)."""
        start = "empty" if self.from_slots == 0 else f"{self.from_slots:,}"
        return f"{self.partitions:,} partitions, {start} -> {self.to_slots:,} slots"


@dataclass(frozen=True)
class RebalanceResult:
    """Median milliseconds over ``runs`` calls, and the partitions the call moved."""

    case: RebalanceCase
    runs: int
    median_ms: float
    moved: int
    minimum_moved: int


def cases(quick: bool) -> tuple[RebalanceCase, ...]:
    """Return the issue's cases; all of them in quick mode too, since they take seconds."""
    del quick
    return (
        RebalanceCase(100_000, 0, 1_000),
        RebalanceCase(100_000, 900, 1_000),
        RebalanceCase(2_048, 4, 400),
        RebalanceCase(2_048, 400, 4),
    )


def live_partitions(count: int, per_topic: int = 1_000) -> list[PartitionOffset]:
    """``count`` partitions at offset 0, ``per_topic`` per topic."""
    return [PartitionOffset(f"t{i // per_topic:03d}", i % per_topic, 0) for i in range(count)]


def minimum_moves(current: OffsetState, to_slots: int) -> int:
    """Count the fewest partitions a count-balanced assignment over ``to_slots`` slots moves.

    Everything in slots ``>= to_slots`` moves; of the rest, each slot keeps at most its quota
    (``P // N``, or one more for ``P % N`` slots, best given to the fullest slots).
    """
    total = sum(len(slot) for slot in current.slots)
    base, extra = divmod(total, to_slots)
    held = sorted((len(slot) for slot in current.slots[:to_slots]), reverse=True)
    kept = sum(min(h, base + (1 if rank < extra else 0)) for rank, h in enumerate(held))
    return total - kept


def measure_rebalance(case: RebalanceCase, runs: int) -> RebalanceResult:
    """Time ``runs`` calls of ``case`` and count the partitions moved."""
    live = live_partitions(case.partitions)
    current = (
        OffsetState.empty()
        if case.from_slots == 0
        else rebalance(OffsetState.empty(), case.from_slots, live).state
    )
    times = []
    moved = 0
    for _ in range(runs):
        began = time.perf_counter()
        result = rebalance(current, case.to_slots, live)
        times.append((time.perf_counter() - began) * 1000)
        moved = len(result.moved)
    return RebalanceResult(
        case=case,
        runs=runs,
        median_ms=statistics.median(times),
        moved=moved,
        minimum_moved=minimum_moves(current, case.to_slots),
    )


def profile_rebalance(case: RebalanceCase) -> str:
    """Profile one call of ``case`` with cProfile."""
    live = live_partitions(case.partitions)
    current = (
        OffsetState.empty()
        if case.from_slots == 0
        else rebalance(OffsetState.empty(), case.from_slots, live).state
    )
    return profile_call(lambda: rebalance(current, case.to_slots, live))
