"""Keeping Python's cycle collector off the paths that allocate many short-lived objects.

Both hot paths of the connector allocate thousands of GC-tracked objects that reference
counting alone frees: an executor converting one ``consume()`` result (messages, timestamp
tuples), and the driver planning a micro-batch over thousands of partitions (dicts, tuples,
sub-states). Each allocation burst makes the collector run, and its older generations
traverse the whole heap, pyspark's modules included: about 30% of a reader's CPU, and 30 ms
of a 100 ms planning at 2,048 partitions. Neither path creates reference cycles.

An executor pauses the collector around each conversion (:func:`cycle_collector_paused`).
The driver's planning process goes further (:func:`planning_call`): pausing it only inside
the reader's calls left what they kept alive in the youngest generation, and the first
allocations after the call, in Spark's runner serializing the answer, paid for traversing
it (see :func:`planning_call`).
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from kafka_rescalable._logging import logger

__all__ = [
    "IDLE_COLLECTION_INTERVAL_S",
    "SOURCE_RUNNER_MODULE",
    "collect_while_idle",
    "cycle_collector_paused",
    "in_source_runner",
    "planning_call",
]

SOURCE_RUNNER_MODULE: Final = "pyspark.sql.streaming.python_streaming_source_runner"
"""The module Spark runs (``python -m``) as the process that hosts a stream's reader."""

IDLE_COLLECTION_INTERVAL_S: Final = 60.0
"""At most one full collection this often in the planning process, in its idle time."""


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Disable the cycle collector for the block (or decorated call), then restore it."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class _PlanningHeap:
    """The process-wide collector state of the planning process: set once, then read."""

    frozen = False
    collector_handed_over = False  # automatic collection off for good; see planning_call
    last_collection = 0.0  # time.monotonic() of the last idle-time collection
    collecting = False


def in_source_runner() -> bool:
    """Whether this process is Spark's runner of a stream's reader, and nothing else.

    Spark starts it as ``python -m`` :data:`SOURCE_RUNNER_MODULE`, one per streaming source,
    and it only ever calls that source's reader.
    """
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", None) == SOURCE_RUNNER_MODULE


@contextmanager
def planning_call(*, runner: bool | None = None) -> Iterator[None]:
    """Wrap one of the stream reader's planning calls (``latestOffset``, ``partitions``).

    In Spark's runner of the reader (``runner``; by default :func:`in_source_runner`), the
    first call collects once, freezes what is alive (pyspark's and pyarrow's modules, which
    live as long as the process) and turns automatic collection off for the process's life.
    Pausing the collector for the call only, as before, was not enough: at 10,000 partitions
    the call keeps tens of thousands of new objects alive (the planned document, caches), all
    left in the youngest generation, so the runner's own allocations right after the call
    (serializing the answer, then ``reportLatestOffset``'s) made the collector traverse them
    (20-50 ms, some 120 ms when it went on to a full pass), inside Spark's ``latestOffset``
    time. The process makes no reference cycles the collector finds (none in a whole
    10,000-partition run, ``benchmarks/RESULTS.md``, fifteenth session); what one rare path
    might make is collected by :func:`collect_while_idle`.

    Anywhere else (a reader planned in-process, as unit tests and ``benchmarks.micro`` do) the
    start-up heap is frozen once and the collector is paused for the call only, so no
    process but Spark's runner is left without it.
    """
    state = _PlanningHeap
    if not state.frozen:
        state.frozen = True
        gc.collect()
        gc.freeze()
    if runner if runner is not None else in_source_runner():
        if not state.collector_handed_over:
            state.collector_handed_over = True
            state.last_collection = time.monotonic()
            gc.disable()
        yield
        return
    with cycle_collector_paused():
        yield


def collect_while_idle(*, interval_s: float = IDLE_COLLECTION_INTERVAL_S) -> bool:
    """Start a full collection in a thread of its own, if due; return whether one started.

    Called where the planning process goes idle: after ``partitions`` (the batch then runs
    on the executors) and after a ``latestOffset`` that planned no batch. Only where
    :func:`planning_call` turned automatic collection off, and at most once per
    ``interval_s``. A collection holds the interpreter for some 100 ms at 10,000 partitions;
    a call that arrives meanwhile waits for it.
    """
    state = _PlanningHeap
    now = time.monotonic()
    if not state.collector_handed_over or state.collecting:
        return False
    if now - state.last_collection < interval_s:
        return False
    state.last_collection, state.collecting = now, True
    threading.Thread(target=_collect, name="planning-gc", daemon=True).start()
    return True


def _collect() -> None:
    started = time.perf_counter()
    try:
        freed = gc.collect()
    finally:
        _PlanningHeap.collecting = False
    logger.debug(
        "planning process: idle-time cycle collection freed %d objects in %.0f ms",
        freed,
        (time.perf_counter() - started) * 1000,
    )
