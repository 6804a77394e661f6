"""The cycle collector is off inside hot paths and back to its own state after them."""

from __future__ import annotations

import gc
import inspect
import subprocess
import sys

import pytest

from connector._gc import cycle_collector_paused
from connector.driver.stream_reader import KafkaStreamReader


def test_paused_inside_and_on_again_after_even_on_error() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with cycle_collector_paused():
            assert not gc.isenabled()
            raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with cycle_collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_planning_methods_keep_the_signatures_spark_inspects() -> None:
    # Spark's runner tells admission control apart by latestOffset's parameters.
    assert list(inspect.signature(KafkaStreamReader.latestOffset).parameters) == [
        "self", "start", "limit"
    ]
    assert list(inspect.signature(KafkaStreamReader.partitions).parameters) == [
        "self", "start", "end"
    ]


_FREEZE_TWICE = """
import gc
from connector._gc import freeze_startup_heap

cycle = []
cycle.append(cycle)  # garbage from start-up: collected, not frozen
del cycle
assert gc.get_freeze_count() == 0
freeze_startup_heap()
frozen = gc.get_freeze_count()
assert frozen > 0
later = [[] for _ in range(1000)]
freeze_startup_heap()  # once per process: these stay with the collector
assert gc.get_freeze_count() == frozen, (gc.get_freeze_count(), frozen)
print("ok", frozen)
"""


def test_the_startup_heap_is_frozen_once_per_process() -> None:
    # In a process of its own: freezing is process-wide.
    done = subprocess.run(
        [sys.executable, "-c", _FREEZE_TWICE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok ")
