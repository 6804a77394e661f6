"""The encoding micro-benchmark runs both paths and holds their payloads equal (no timing)."""

from __future__ import annotations

from benchmarks.micro.avro_encoding import measure_encoding


def test_both_cases_run_on_both_paths_with_the_same_payloads() -> None:
    runs = measure_encoding(records=300, runs=1)

    assert [(run.case, run.path) for run in runs] == [
        ("plain", "bulk"),
        ("plain", "per record"),
        ("framed", "bulk"),
        ("framed", "per record"),
    ]
    assert all(run.micros_per_record > 0 for run in runs)
