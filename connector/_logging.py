"""The connector's logger, visible from inside Spark's Python workers.

Nobody configures logging in the Python processes Spark starts on the driver and executors,
so a plain ``logging.getLogger`` would drop INFO and keep WARNING only through Python's
last-resort handler. Slot changes and data-loss warnings must reach the user: the logger
writes to stderr, which Spark forwards into the driver's and executors' logs. Users can
re-route it like any logger named ``connector``.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["logger"]


def _make_logger() -> logging.Logger:
    log = logging.getLogger("kafka_rescalable")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("kafka-rescalable %(levelname)s: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


logger = _make_logger()
