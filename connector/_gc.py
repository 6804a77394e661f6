"""Pausing Python's cycle collector around work that allocates many short-lived objects.

Both hot paths of the connector allocate thousands of GC-tracked objects that reference
counting alone frees: an executor converting one ``consume()`` result (messages, timestamp
tuples), and the driver planning a micro-batch over thousands of partitions (dicts, tuples,
sub-states). Each allocation burst makes the collector run, and its older generations
traverse the whole heap, pyspark's modules included: about 30% of a reader's CPU, and 30 ms
of a 100 ms planning at 2,048 partitions. Neither path creates reference cycles, so pausing
the collector loses nothing; it runs again, if it was on, as soon as the work is done.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cycle_collector_paused", "freeze_startup_heap"]


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


_startup_heap_frozen = False


def freeze_startup_heap() -> None:
    """Collect once, then keep every object alive now out of the cycle collector's passes.

    For the driver's planning process only, called when a stream's first batch is planned.
    Its heap is mostly pyspark's and pyarrow's modules, which live as long as the process;
    yet every few batches the allocations of planning (tens of thousands of sub-states and
    dicts at 10,000 partitions) make the collector run a full pass that walks all of them
    again: some 120 ms a time, measured in ``reportLatestOffset``, which Spark times as part of
    ``latestOffset``. Frozen objects are still freed by reference counting; only a reference
    cycle made before the call and dropped after it would stay, and the collection just
    before the freeze leaves none behind. Once per process: later calls do nothing.
    """
    global _startup_heap_frozen
    if _startup_heap_frozen:
        return
    _startup_heap_frozen = True
    gc.collect()
    gc.freeze()
