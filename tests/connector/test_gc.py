"""The cycle collector is off inside hot paths and back to its own state after them."""

from __future__ import annotations

import gc
import inspect
import subprocess
import sys

import pytest

from kafka_rescalable._gc import cycle_collector_paused
from kafka_rescalable.driver.stream_reader import KafkaStreamReader


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


def _run(code: str) -> str:
    """Run ``code`` in a Python process of its own: the collector's state is process-wide."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


_ELSEWHERE = """
import gc
from kafka_rescalable._gc import in_source_runner, planning_call

assert not in_source_runner()
cycle = []
cycle.append(cycle)  # garbage from start-up: collected, not frozen
del cycle
assert gc.get_freeze_count() == 0
with planning_call():
    assert not gc.isenabled()
frozen = gc.get_freeze_count()
assert frozen > 0
assert gc.isenabled()
later = [[] for _ in range(1000)]
with planning_call():  # frozen once per process: these stay with the collector
    assert not gc.isenabled()
assert gc.get_freeze_count() == frozen, (gc.get_freeze_count(), frozen)
assert gc.isenabled()
print("ok", frozen)
"""


def test_elsewhere_the_heap_is_frozen_once_and_the_collector_paused_per_call() -> None:
    assert _run(_ELSEWHERE).startswith("ok ")


_IN_RUNNER = """
import gc, time, weakref
from kafka_rescalable._gc import collect_while_idle, planning_call

class Node:
    pass

assert gc.isenabled()
with planning_call(runner=True):
    assert not gc.isenabled()
assert not gc.isenabled(), "the runner's collector stays off after the call"
assert gc.get_freeze_count() > 0
with planning_call(runner=True):
    pass
assert not gc.isenabled()
assert not collect_while_idle(), "not due: the first call counts as a collection"

node = Node()
node.self = node  # a cycle only the collector frees
alive = weakref.ref(node)
del node
assert alive() is not None
assert collect_while_idle(interval_s=0.0)
deadline = time.monotonic() + 30
while alive() is not None and time.monotonic() < deadline:
    time.sleep(0.01)
assert alive() is None, "the idle-time collection freed the cycle"
assert not gc.isenabled()
time.sleep(0.1)
assert not collect_while_idle(interval_s=3600.0), "at most once per interval"
print("ok")
"""


def test_in_sparks_runner_the_collector_is_off_and_runs_only_when_idle() -> None:
    assert _run(_IN_RUNNER) == "ok\n"


_DETECTED = """
import importlib.machinery, sys
from kafka_rescalable._gc import SOURCE_RUNNER_MODULE, in_source_runner

assert not in_source_runner()
sys.modules["__main__"].__spec__ = importlib.machinery.ModuleSpec(SOURCE_RUNNER_MODULE, None)
assert in_source_runner()
print("ok")
"""


def test_sparks_runner_is_told_by_the_module_it_runs_as_main() -> None:
    # That Spark starts it so (python -m) is checked on a real stream: test_streaming.py.
    assert _run(_DETECTED) == "ok\n"
