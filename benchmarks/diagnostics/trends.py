"""Pure decisions on what a long benchmark sampled: did a query keep up, did memory grow.

Both compare the level of a series near the start of a window with its level near the end.
A level is the mean of the samples in the first (or last) quarter of the window rather than
one sample, because a streaming query's lag is a sawtooth (it rises while a micro-batch runs
and drops when the batch ends) and a JVM's memory moves with its garbage collections: a
single sample at each end would mostly measure where the tooth or the collection happened to
be. No function here reads a clock or a process; the benchmarks feed them plain numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "EDGE",
    "Climb",
    "KeepUp",
    "LagSample",
    "MemoryTrend",
    "Verdict",
    "climb",
    "edge_levels",
    "keep_up",
    "limit_ratio",
    "memory_trend",
]

EDGE = 0.25
"""The share of a window at each end whose samples make the start and end levels."""


def edge_levels(
    points: Sequence[tuple[float, float]], edge: float = EDGE
) -> tuple[float, float, float]:
    """Return the mean value at the start, at the end, and the seconds between the two.

    ``points`` are ``(seconds, value)`` in time order. The start level is the mean over the
    points in the first ``edge`` of the time spanned, the end level over the last ``edge``;
    the seconds between are those between the mean times of the two groups, so that a
    growth per second can be read as ``(end - start) / seconds``.
    """
    if len(points) < 2:
        msg = f"a trend needs at least 2 samples, got {len(points)}"
        raise ValueError(msg)
    if not 0 < edge <= 0.5:
        msg = f"edge must be in (0, 0.5], got {edge}"
        raise ValueError(msg)
    times = [at for at, _ in points]
    if any(later <= earlier for earlier, later in zip(times, times[1:], strict=False)):
        msg = "samples must be in strictly increasing time order"
        raise ValueError(msg)
    first, last = times[0], times[-1]
    reach = edge * (last - first)
    head = [(at, value) for at, value in points if at <= first + reach]
    tail = [(at, value) for at, value in points if at >= last - reach]
    start = sum(value for _, value in head) / len(head)
    end = sum(value for _, value in tail) / len(tail)
    seconds = sum(at for at, _ in tail) / len(tail) - sum(at for at, _ in head) / len(head)
    return start, end, seconds


class Verdict(Enum):
    """What one window at one rate says about a source."""

    KEPT_UP = "kept up"
    FELL_BEHIND = "fell behind"
    PRODUCER_BOUND = "producer-bound"
    """The topic grew slower than asked: the rate was not tested, whatever the source did."""


@dataclass(frozen=True)
class LagSample:
    """Records in the topic and in the sink, counted from the query's starting offsets."""

    at_s: float
    produced: int
    read: int

    @property
    def lag(self) -> int:
        """Records produced that the sink has not received yet."""
        return self.produced - self.read


@dataclass(frozen=True)
class KeepUp:
    """The verdict on one window, with the numbers it was drawn from (records, records/s)."""

    verdict: Verdict
    asked_rate: float
    produced_rate: float
    read_rate: float
    start_lag: float
    end_lag: float
    allowed_growth: float


def keep_up(
    samples: Sequence[LagSample],
    asked_rate: float,
    tolerance_s: float = 1.0,
    producer_shortfall: float = 0.03,
    edge: float = EDGE,
) -> KeepUp:
    """Decide whether a source kept up with ``asked_rate`` over the sampled window.

    Producer-bound first: if the topic grew more than ``producer_shortfall`` (a share) slower
    than asked, the source was never offered the rate, so its lag says nothing about it.
    Otherwise it kept up if its lag at the end (the mean over the window's last ``edge``) is
    at most ``tolerance_s`` seconds of the asked rate above its lag at the start. A lag that
    stays large but does not grow counts as kept up: the source reads as fast as records
    come, it only started behind. Over a 60 s window the default tolerance flags a source
    that reads about 2 % slower than the rate; a shorter window is less sensitive.
    """
    if asked_rate <= 0:
        msg = f"asked_rate must be positive, got {asked_rate}"
        raise ValueError(msg)
    start, end, _ = edge_levels([(s.at_s, s.lag) for s in samples], edge)
    first, last = samples[0], samples[-1]
    seconds = last.at_s - first.at_s
    produced_rate = (last.produced - first.produced) / seconds
    read_rate = (last.read - first.read) / seconds
    allowed = tolerance_s * asked_rate
    if produced_rate < (1 - producer_shortfall) * asked_rate:
        verdict = Verdict.PRODUCER_BOUND
    elif end - start > allowed:
        verdict = Verdict.FELL_BEHIND
    else:
        verdict = Verdict.KEPT_UP
    return KeepUp(verdict, asked_rate, produced_rate, read_rate, start, end, allowed)


@dataclass(frozen=True)
class Climb:
    """How far up the ladder of rates one source got.

    ``highest`` is the highest rate it kept up with, every lower rate kept up too (``None``
    if it kept up with none); ``stopped_at`` the rate where the climb ended and ``why`` the
    verdict there (``None`` for both when it kept up with the whole ladder).
    """

    highest: int | None
    stopped_at: int | None
    why: Verdict | None

    @property
    def limit_found(self) -> bool:
        """Whether the source fell behind: ``highest`` is then its limit, not a lower bound."""
        return self.why is Verdict.FELL_BEHIND

    def describe(self) -> str:
        """Say the highest rate and why the climb ended, for a table cell."""
        highest = "none" if self.highest is None else f"{self.highest:,}"
        if self.why is None:
            return f">= {highest} (the whole ladder)"
        if self.why is Verdict.PRODUCER_BOUND:
            return f">= {highest} (producer-bound at {self.stopped_at:,})"
        return f"{highest} (fell behind at {self.stopped_at:,})"


def climb(verdicts: Mapping[int, Verdict]) -> Climb:
    """Climb the rates in increasing order until the first one not kept up."""
    highest = None
    for rate in sorted(verdicts):
        if verdicts[rate] is not Verdict.KEPT_UP:
            return Climb(highest, rate, verdicts[rate])
        highest = rate
    return Climb(highest, None, None)


def limit_ratio(ours: Climb, builtin: Climb) -> str:
    """Return ours / built-in of the highest rates kept up, marked when only a bound is known.

    A source that never fell behind has only a lower bound, so the ratio is at least (ours)
    or at most (the built-in's) the quotient; with neither limit found it is unknown.
    """
    if ours.highest is None or builtin.highest is None:
        return "n/a (a source kept up with no rate of the ladder)"
    quotient = ours.highest / builtin.highest
    if ours.limit_found and builtin.limit_found:
        return f"{quotient:.2f}"
    if builtin.limit_found:
        return f">= {quotient:.2f} (ours never fell behind)"
    if ours.limit_found:
        return f"<= {quotient:.2f} (the built-in never fell behind)"
    return "n/a (neither source fell behind)"


@dataclass(frozen=True)
class MemoryTrend:
    """Resident memory of one kind of process after warm-up, in MiB."""

    warm_mib: float
    """The first sample at or after the warm-up."""
    last_mib: float
    peak_mib: float
    start_level: float
    end_level: float
    grew: bool


def memory_trend(
    points: Sequence[tuple[float, float]],
    warmup_s: float,
    tolerance_mib: float = 16.0,
    tolerance_share: float = 0.05,
    edge: float = EDGE,
) -> MemoryTrend | None:
    """Summarize ``(seconds, MiB)`` samples after ``warmup_s``; ``None`` if fewer than 2.

    It grew if its level over the last ``edge`` of the time after warm-up exceeds the level
    over the first by more than ``tolerance_mib`` and by more than ``tolerance_share`` of
    it: small steps (a heap region, an allocator arena) are normal, a leak keeps climbing.
    """
    kept = [(at, mib) for at, mib in points if at >= warmup_s]
    if len(kept) < 2:
        return None
    start, end, _ = edge_levels(kept, edge)
    allowed = max(tolerance_mib, tolerance_share * start)
    peak = max(mib for _, mib in kept)
    return MemoryTrend(kept[0][1], kept[-1][1], peak, start, end, end - start > allowed)
