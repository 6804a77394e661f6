"""Where an executor task's time goes: getting a consumer, waiting for records, the range's end.

Off unless asked for, and then free of cost on the read path: :func:`start` returns ``None``
and the reader skips every timing call. Two ways to turn it on, both read when a task starts:

- the ``connector`` logger at DEBUG in the Python workers: one line per task;
- the environment variable ``KAFKA_RESCALABLE_TASK_TIMINGS`` naming a file, inherited by the
  Python workers from the process that starts Spark: one JSON line per task is appended to it
  (the latency benchmark reads them). Lines are short and written with one ``write`` on a
  file opened for appending, so tasks of several workers do not interleave within a line.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Final

from kafka_rescalable._logging import logger

__all__ = ["TIMINGS_ENV", "TaskTiming", "start"]

TIMINGS_ENV: Final = "KAFKA_RESCALABLE_TASK_TIMINGS"
"""Names the file that receives one JSON line of timings per task."""


@dataclass
class TaskTiming:
    """One task's timings in seconds, filled in by the range reader as it goes.

    ``setup_s`` is getting a consumer (building one, or borrowing one from the worker's pool:
    ``reused``); ``first_record_s`` runs from the first assignment to the first record;
    ``consume_s`` is the time spent inside ``consume()``, ``empty_polls`` and ``empty_s``
    the calls that returned nothing and their time; ``end_wait_s`` runs from the last record
    a round kept to the end of that round (waiting for end-of-log events or for offsets that
    hold no record); ``release_s`` is giving the consumer back (or closing it); ``total_s``
    runs from the task's start to its end, including the time Spark spends on the batches
    the task yields.
    """

    started: float = field(default_factory=time.monotonic)
    ranges: int = 0
    rows: int = 0
    reused: bool = False
    setup_s: float = 0.0
    first_record_s: float | None = None
    consume_s: float = 0.0
    empty_polls: int = 0
    empty_s: float = 0.0
    end_wait_s: float = 0.0
    release_s: float = 0.0
    total_s: float = 0.0

    def finish(self) -> None:
        """Stamp the total and report the task where timings were asked for."""
        self.total_s = time.monotonic() - self.started
        record = {key: value for key, value in asdict(self).items() if key != "started"}
        record["pid"] = os.getpid()
        record["at"] = time.time()
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("task timing: %s", json.dumps(record))
        path = os.environ.get(TIMINGS_ENV)
        if path:
            _append(path, json.dumps(record) + "\n")


def _append(path: str, line: str) -> None:
    """Append one line to the timings file; a file that cannot be written is only a warning.

    Timings are diagnostics: a JVM keeps the environment it started with, so a file named
    there can outlive its folder, and a task must not fail because of it.
    """
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as error:
        logger.warning("task timings not written to %s (%s=%s): %s", path, TIMINGS_ENV, path, error)
        return
    try:
        os.write(descriptor, line.encode())
    finally:
        os.close(descriptor)


def start() -> TaskTiming | None:
    """Return a task's timing record when timings are on, else ``None``."""
    if os.environ.get(TIMINGS_ENV) or logger.isEnabledFor(logging.DEBUG):
        return TaskTiming()
    return None
