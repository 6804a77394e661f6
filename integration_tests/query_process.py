"""Streaming queries in a process of their own, for tests that kill or signal the driver.

The test side starts a script module (``integration_tests.crash_query``,
``integration_tests.auto_query``) with :func:`start_query_process` and ends it with
:func:`stop_query_process`; the script side builds its session with :func:`query_session` and
its source with ``spark_helpers.kafka_stream``. Keeping both halves here means the scripts
hold only what makes each test's query different.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO

__all__ = ["ROOT", "query_session", "start_query_process", "stop_query_process"]

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: the scripts run from it, with it on ``PYTHONPATH``."""


def start_query_process(
    module: str, args: list[str], output: IO[bytes] | int = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    """Run ``python -m module args`` in a new process group, so a kill takes its JVM too."""
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop_query_process(process: subprocess.Popen[bytes], grace_s: float | None) -> None:
    """Stop the process group: SIGTERM with ``grace_s`` to stop cleanly, or SIGKILL at once."""
    if grace_s is not None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace_s)
            return
        except subprocess.TimeoutExpired:
            pass
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)


def query_session(master: str, app_name: str, conf: Mapping[str, str]):
    """Start the script's Spark session; PySpark finds ``kafka-rescalable`` by name."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {"spark.sql.shuffle.partitions": "2", **conf}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
