"""The many-partitions benchmark's pure helpers: cases, when a stream kept up, the tables."""

from __future__ import annotations

import pytest

from benchmarks.running_queries.many_partitions import (
    Case,
    StreamRun,
    WholeRun,
    cases,
    partitions_tables,
)
from benchmarks.session import BUILTIN, OURS


def stream(source: str, rows: int, batch_ms: float | None, **extra: float) -> StreamRun:
    values = {
        "p50_ms": 200.0,
        "p99_ms": 400.0,
        "latest_offset_ms": 120.0,
        "query_planning_ms": 30.0,
        "offset_log_bytes": 11_000,
        "driver_python_mib": 100.0,
        **extra,
    }
    return StreamRun(
        source=source,
        rate=5_000,
        window_s=60.0,
        rows=rows,
        batches=0 if batch_ms is None else 10,
        batch_ms=batch_ms,
        **values,
    )


def test_the_full_run_has_the_issue_cases_and_quick_only_the_small_ones() -> None:
    assert [c.total_partitions for c in cases(quick=False)] == [100, 1_000, 10_000, 1_000]
    assert [c.description for c in cases(quick=False)][-1] == "100 topics x 10 partitions"
    assert [c.total_partitions for c in cases(quick=True)] == [100, 1_000]


def test_kept_up_is_nine_tenths_of_the_rate_in_batches_shorter_than_the_window() -> None:
    assert stream(OURS, 60 * 4_500, 900.0).kept_up
    assert not stream(OURS, 60 * 4_400, 900.0).kept_up
    assert not stream(OURS, 60 * 5_000, 61_000.0).kept_up
    assert not stream(BUILTIN, 0, None).kept_up


def test_tables_give_ratios_and_say_what_did_not_finish() -> None:
    case = Case("p1000", 1, 1_000, 200_000)
    wholes = [WholeRun(OURS, 4.0, 20, 200_000, True), WholeRun(BUILTIN, 300.5, 600, 1, False)]
    streams = [
        stream(OURS, 60 * 5_000, 1_000.0),
        stream(BUILTIN, 0, None, p50_ms=None, p99_ms=None, driver_python_mib=0.0),
    ]
    text = partitions_tables([(case, wholes, streams)], 300.0)
    assert "| 1,000 partitions | 200,000 | 4.0 (20) | did not finish in 300 s | > 75 |" in text
    assert "| 1,000 partitions | kafka | 0 (5,000) | no batch in window | 0 | - |" in text
    assert "| 1,000 partitions | kafka-rescalable | 5,000 (5,000) | yes | 10 | 200 / 400 |" in text
    assert "| 1,000 partitions | < 0.013 | inf | - | - | - | 1.00 | 1.00 |" in text


def test_cases_can_be_chosen_by_key_and_an_unknown_key_names_the_choices() -> None:
    assert [case.key for case in cases(False, ["t100x10", "p10000"])] == ["p10000", "t100x10"]
    assert [case.key for case in cases(False)] == ["p100", "p1000", "p10000", "t100x10"]
    with pytest.raises(SystemExit, match="no case p10000 in this run; choose from p100, p1000"):
        cases(True, ["p10000"])
