"""The cycle collector is off inside hot paths and back to its own state after them."""

from __future__ import annotations

import gc
import inspect

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
        "self",
        "start",
        "limit",
    ]
    assert list(inspect.signature(KafkaStreamReader.partitions).parameters) == [
        "self",
        "start",
        "end",
    ]
