"""The pure decisions of the sustained-rate and memory benchmarks: lag and memory series in."""

from __future__ import annotations

import pytest

from benchmarks.diagnostics.trends import (
    Climb,
    LagSample,
    Verdict,
    climb,
    edge_levels,
    keep_up,
    limit_ratio,
    memory_trend,
)

RATE = 10_000


def window(read_at, produced_share: float = 1.0, seconds: int = 60) -> list[LagSample]:
    """One sample a second: the topic grows at ``produced_share`` of RATE, the sink as told."""
    return [
        LagSample(float(t), int(produced_share * RATE * t), int(read_at(t)))
        for t in range(seconds + 1)
    ]


def test_edge_levels_average_each_quarter_and_time_the_gap_between_them() -> None:
    points = [(float(t), 10.0 * t) for t in range(9)]
    # First quarter: t 0..2 (mean 10 at t 1); last: t 6..8 (mean 70 at t 7).
    assert edge_levels(points) == (10.0, 70.0, 6.0)
    assert edge_levels([(0.0, 5.0), (1.0, 7.0)]) == (5.0, 7.0, 1.0)


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ([(0.0, 1.0)], "at least 2"),
        ([(0.0, 1.0), (0.0, 2.0)], "increasing"),
        ([(1.0, 1.0), (0.0, 2.0)], "increasing"),
    ],
)
def test_edge_levels_refuse_too_few_or_unordered_samples(points, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        edge_levels(points)


def test_edge_levels_refuse_an_edge_beyond_half() -> None:
    with pytest.raises(ValueError, match="edge"):
        edge_levels([(0.0, 1.0), (1.0, 2.0)], edge=0.6)


@pytest.mark.parametrize("phase", [0, 1, 2])
def test_a_sawtooth_lag_from_3_second_batches_kept_up(phase: int) -> None:
    # Each batch ends every 3 s and takes everything produced until then.
    result = keep_up(window(lambda t: RATE * (t - (t + phase) % 3)), RATE)
    assert result.verdict is Verdict.KEPT_UP
    assert result.produced_rate == RATE
    assert abs(result.end_lag - result.start_lag) <= RATE


def test_reading_5_percent_slower_than_the_rate_fell_behind() -> None:
    result = keep_up(window(lambda t: 0.95 * RATE * t), RATE)
    assert result.verdict is Verdict.FELL_BEHIND
    assert result.read_rate == pytest.approx(0.95 * RATE, rel=1e-3)
    assert result.end_lag - result.start_lag > result.allowed_growth == RATE


def test_a_large_lag_that_does_not_grow_kept_up() -> None:
    assert keep_up(window(lambda t: RATE * (t - 20)), RATE).verdict is Verdict.KEPT_UP


def test_catching_up_after_start_kept_up() -> None:
    # 30 s of records behind when the window opens, then reading 2 s of them a second.
    lag = [RATE * max(0, 30 - t) for t in range(61)]
    samples = [LagSample(float(t), RATE * (t + 40), RATE * (t + 40) - lag[t]) for t in range(61)]
    result = keep_up(samples, RATE)
    assert result.verdict is Verdict.KEPT_UP
    assert result.end_lag < result.start_lag


def test_a_topic_growing_slower_than_asked_is_producer_bound_whatever_the_lag() -> None:
    keeping = keep_up(window(lambda t: 0.8 * RATE * t, produced_share=0.8), RATE)
    assert keeping.verdict is Verdict.PRODUCER_BOUND
    assert keeping.produced_rate == pytest.approx(0.8 * RATE)
    falling = keep_up(window(lambda t: 0.5 * RATE * t, produced_share=0.8), RATE)
    assert falling.verdict is Verdict.PRODUCER_BOUND


def test_a_producer_a_little_short_of_the_rate_still_tests_the_source() -> None:
    samples = window(lambda t: 0.98 * RATE * t, produced_share=0.98)
    assert keep_up(samples, RATE).verdict is Verdict.KEPT_UP


def test_keep_up_refuses_a_rate_of_zero() -> None:
    with pytest.raises(ValueError, match="asked_rate"):
        keep_up(window(lambda t: 0), 0)


def test_the_climb_stops_at_the_first_rate_not_kept_up() -> None:
    kept, fell = Verdict.KEPT_UP, Verdict.FELL_BEHIND
    result = climb({100_000: fell, 25_000: kept, 50_000: kept, 200_000: kept})
    assert result == Climb(50_000, 100_000, fell)
    assert result.limit_found
    assert result.describe() == "50,000 (fell behind at 100,000)"


def test_a_climb_over_the_whole_ladder_is_only_a_lower_bound() -> None:
    result = climb({25_000: Verdict.KEPT_UP, 50_000: Verdict.KEPT_UP})
    assert result == Climb(50_000, None, None)
    assert not result.limit_found
    assert result.describe() == ">= 50,000 (the whole ladder)"


def test_a_climb_ended_by_the_producer_is_a_lower_bound() -> None:
    result = climb({25_000: Verdict.KEPT_UP, 50_000: Verdict.PRODUCER_BOUND})
    assert not result.limit_found
    assert result.describe() == ">= 25,000 (producer-bound at 50,000)"


def test_falling_behind_at_the_lowest_rate_keeps_up_with_none() -> None:
    result = climb({25_000: Verdict.FELL_BEHIND, 50_000: Verdict.KEPT_UP})
    assert result == Climb(None, 25_000, Verdict.FELL_BEHIND)
    assert result.describe() == "none (fell behind at 25,000)"


def test_the_limit_ratio_says_when_it_is_only_a_bound() -> None:
    fell = Verdict.FELL_BEHIND
    at_50k = Climb(50_000, 100_000, fell)
    at_100k = Climb(100_000, 200_000, fell)
    open_100k = Climb(100_000, 200_000, Verdict.PRODUCER_BOUND)
    assert limit_ratio(at_50k, at_100k) == "0.50"
    assert limit_ratio(open_100k, at_50k).startswith(">= 2.00")
    assert limit_ratio(at_50k, open_100k).startswith("<= 0.50")
    assert limit_ratio(open_100k, Climb(400_000, None, None)).startswith("n/a")
    assert limit_ratio(Climb(None, 25_000, fell), at_50k).startswith("n/a")


def test_flat_memory_with_noise_did_not_grow() -> None:
    points = [(15.0 * i, 300.0 + (8 if i % 2 else -8)) for i in range(40)]
    trend = memory_trend(points, warmup_s=100)
    assert trend is not None
    assert not trend.grew
    assert (trend.warm_mib, trend.last_mib, trend.peak_mib) == (308.0, 308.0, 308.0)


def test_memory_climbing_steadily_grew() -> None:
    points = [(15.0 * i, 300.0 + 2 * i) for i in range(40)]  # 8 MiB a minute
    trend = memory_trend(points, warmup_s=100)
    assert trend is not None and trend.grew
    assert trend.warm_mib == 314.0  # the sample at 105 s
    assert trend.last_mib == trend.peak_mib == 378.0


def test_memory_growth_during_warm_up_does_not_count() -> None:
    points = [(15.0 * i, min(100.0 + 50 * i, 400.0)) for i in range(40)]
    trend = memory_trend(points, warmup_s=100)
    assert trend is not None and not trend.grew


def test_a_small_share_of_a_large_process_is_not_growth() -> None:
    points = [(15.0 * i, 1_000.0 + i) for i in range(40)]  # 1,000 to 1,039 MiB: under 5 %
    trend = memory_trend(points, warmup_s=0)
    assert trend is not None and not trend.grew


def test_too_few_samples_after_warm_up_give_no_trend() -> None:
    assert memory_trend([(0.0, 1.0), (200.0, 2.0)], warmup_s=100) is None
