"""The Protobuf decoding micro-benchmark runs both paths with the same rows (no timing here)."""

from __future__ import annotations

import pytest

native = pytest.importorskip("kafka_rescalable_native")
if not hasattr(native, "ProtobufDecoder"):
    pytest.skip("the installed native core predates ProtobufDecoder", allow_module_level=True)

from benchmarks.micro.protobuf_decoding import measure_decoding  # noqa: E402


def test_both_cases_run_on_both_paths_with_the_same_rows() -> None:
    runs = measure_decoding(records=300, runs=1)

    assert [(run.case, run.path) for run in runs] == [
        ("plain", "native"),
        ("plain", "fallback"),
        ("framed", "native"),
        ("framed", "fallback"),
    ]
    assert all(run.micros_per_record > 0 for run in runs)
