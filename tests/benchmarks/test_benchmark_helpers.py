"""The benchmarks' pure helpers: record values, client-limit shares, fewest possible moves."""

from __future__ import annotations

import json

import pytest

from benchmarks.micro.rebalancer_bench import live_partitions, minimum_moves
from benchmarks.whole_queries.client_limit import shares
from benchmarks.workloads import USERS, Workload, json_value
from kafka_rescalable.state import OffsetState, rebalance


@pytest.mark.parametrize("size", [100, 2000])
def test_values_are_json_of_the_exact_size(size: int) -> None:
    for index in (0, 7, 12_345, 4_999_999):
        value = json_value(index, size)
        assert len(value) == size
        parsed = json.loads(value)
        assert parsed["id"] == index
        assert parsed["user"] == f"u{index % USERS:03d}"
        assert parsed["amount"] == index % 1000 / 10


def test_a_workload_refuses_values_too_small_for_the_fields() -> None:
    with pytest.raises(ValueError, match="value_bytes"):
        Workload("tiny", 10, 20, 1)


def test_partitions_are_dealt_round_robin_over_processes() -> None:
    assert shares({0: 10, 1: 20, 2: 30}, 2) == [((0, 0, 10), (2, 0, 30)), ((1, 0, 20),)]


def test_a_lone_partition_is_cut_into_contiguous_pieces() -> None:
    assert shares({0: 11}, 2) == [((0, 0, 6),), ((0, 6, 11),)]


def test_minimum_moves_matches_the_rebalancer_without_weights() -> None:
    live = live_partitions(2_048, per_topic=1_000)
    four = rebalance(OffsetState.empty(), 4, live).state
    assert minimum_moves(four, 400) == len(rebalance(four, 400, live).moved) == 2_024
    assert minimum_moves(OffsetState.empty(), 10) == 0


def test_the_ceiling_source_yields_every_row_once_in_our_schema() -> None:
    from benchmarks.whole_queries.ceiling_source import _batches, _lowered, _shares, ceiling_options
    from kafka_rescalable.schema import arrow_schema

    options = _lowered({**ceiling_options(25_001, 3, 100), "batchRows": "4000"})
    shares = _shares(options)
    assert [share.rows for share in shares] == [8_334, 8_334, 8_333]
    batches = [batch for share in shares for batch in _batches(options, share)]
    assert sum(batch.num_rows for batch in batches) == 25_001
    assert all(batch.schema == arrow_schema(False) for batch in batches)
    assert max(batch.num_rows for batch in batches) == 4_000
    assert json.loads(batches[0].column("value")[7].as_py())["id"] == 7
    assert len(batches[0].column("value")[7].as_py()) == 100


def test_the_start_up_profile_imports_pyspark_from_sparks_zip() -> None:
    from benchmarks.diagnostics.startup_profile import runner_import_profile, spark_python_path

    assert spark_python_path().split(":")[0].endswith("pyspark.zip")
    profile = runner_import_profile(repeats=1, top=5)
    names = [name for name, _ in profile.costliest]
    assert "pyspark" in names and "kafka_rescalable" in names
    assert profile.from_zip_s > 0 and profile.from_site_s > 0
    assert "pyspark.zip first" in profile.markdown()


def test_the_python_source_bound_adds_the_ceilings_start_up_to_the_client_time() -> None:
    from benchmarks.report import ThroughputRow, split_table

    rates = dict(ours=400_000.0, builtin=600_000.0, ceiling=700_000.0, client=1_000_000.0)
    row = ThroughputRow(
        workload=Workload("w", 1_000_000, 100, 1),
        query="noop",
        **rates,
        ours_first=1.0,
        builtin_first=1.0,
        ours_in_batches=1.0,
        builtin_in_batches=1.0,
        ceiling_in_batches=1.0,
        ours_outside_s=1.5,
        builtin_outside_s=0.1,
        ceiling_outside_s=1.0,
    )
    assert row.python_source_bound == 500_000  # 1 s reading at the client limit + 1 s start-up
    assert "| 500,000 | 0.83 |" in split_table([row])
