"""The decoding micro-benchmark runs both paths and holds their rows equal (no timing here)."""

from __future__ import annotations

from benchmarks.micro.avro_decoding import measure_decoding


def test_both_cases_run_on_both_paths_with_the_same_rows() -> None:
    runs = measure_decoding(records=300, runs=1)

    assert [(run.case, run.path) for run in runs] == [
        ("plain", "native"),
        ("plain", "fallback"),
        ("framed, 2 ids", "native"),
        ("framed, 2 ids", "fallback"),
    ]
    assert all(run.micros_per_record > 0 for run in runs)
