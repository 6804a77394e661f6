"""The latency benchmark's pure helpers: percentiles, ratios, summaries and the tables."""

from __future__ import annotations

import math

import pytest

from benchmarks.running_queries.latency import (
    LatencyRun,
    LatencySummary,
    latency_tables,
    mean_durations,
    percentile,
    ratio,
    summarize,
    summarize_tasks,
)
from benchmarks.session import BUILTIN, OURS


def test_percentile_is_the_nearest_rank() -> None:
    values = list(range(1, 101))  # 1..100
    assert percentile(values, 50) == 50
    assert percentile(values, 90) == 90
    assert percentile(values, 99) == 99
    assert percentile(values, 100) == 100
    assert percentile([7.0], 50) == 7.0
    assert percentile([1, 2, 3, 4], 50) == 2
    assert percentile([1, 2, 3, 4], 51) == 3


@pytest.mark.parametrize("q", [0, -1, 101])
def test_percentile_refuses_a_rank_outside_0_to_100(q: float) -> None:
    with pytest.raises(ValueError, match="q must be"):
        percentile([1, 2], q)


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)


def test_summarize_sorts_and_handles_no_rows() -> None:
    assert summarize([30, 10, 20, 40]) == LatencySummary(4, 20, 40, 40, 40)
    assert summarize([]) == LatencySummary(0, 0.0, 0.0, 0.0, 0.0)


def test_ratio_is_ours_over_the_builtin() -> None:
    assert ratio(300, 200) == 1.5
    assert ratio(0, 0) == 1.0
    assert math.isinf(ratio(5, 0))


def test_task_summary_averages_in_milliseconds_and_counts_reuse() -> None:
    records = [
        {
            "setup_s": 0.004,
            "first_record_s": 0.02,
            "end_wait_s": 0.0,
            "empty_polls": 1,
            "release_s": 0.002,
            "total_s": 0.03,
            "reused": False,
        },
        {
            "setup_s": 0.0,
            "first_record_s": None,
            "end_wait_s": 0.01,
            "empty_polls": 0,
            "release_s": 0.0,
            "total_s": 0.01,
            "reused": True,
        },
    ]
    summary = summarize_tasks(records)
    assert summary is not None
    assert (summary.tasks, summary.reused) == (2, 1)
    assert summary.setup_ms == pytest.approx(2.0)
    assert summary.first_record_ms == pytest.approx(20.0)  # tasks without a record left out
    assert summary.end_wait_ms == pytest.approx(5.0)
    assert summary.empty_polls == 0.5
    assert summary.total_ms == pytest.approx(20.0)
    assert summarize_tasks([]) is None


def test_mean_durations_count_batches_with_rows_only() -> None:
    progress = [
        {"numInputRows": 10, "durationMs": {"latestOffset": 10, "addBatch": 100}},
        {"numInputRows": 0, "durationMs": {"latestOffset": 1000}},
        {"numInputRows": 5, "durationMs": {"latestOffset": 20, "addBatch": 300}},
    ]
    means = mean_durations(progress)
    assert means["latestOffset"] == 15
    assert means["addBatch"] == 200
    assert means["walCommit"] == 0
    assert mean_durations([]) == {}


def run(source: str, p50: float, p99: float, batches: int, round_number: int = 0) -> LatencyRun:
    return LatencyRun(
        source=source,
        rate=10_000,
        round=round_number,
        window_s=30.0,
        latency=LatencySummary(100, p50, p50, p99, p99),
        batches=batches,
        durations={},
        tasks=None,
    )


def test_batches_per_minute_scale_the_window() -> None:
    assert run(OURS, 1, 1, 45).batches_per_minute == 90


def test_the_ratio_table_uses_the_median_of_rounds() -> None:
    runs = [
        run(OURS, 300, 900, 60),
        run(BUILTIN, 200, 600, 120),
        run(BUILTIN, 400, 600, 120, 1),
        run(OURS, 500, 300, 60, 1),
    ]
    table = latency_tables(runs)
    # ours p50 median 400 over the built-in's 300; p99 600 / 600; batches 120 / 240.
    assert "| 10,000 | 1.33 | 1.33 | 1.00 | 1.00 | 0.50 |" in table
