"""Helpers for reading with Spark in integration tests: both Kafka sources, and query waits."""

from __future__ import annotations

import json
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

OUR_FORMAT = "kafka-rescalable"
BUILTIN_FORMAT = "kafka"


def batch_read(
    spark: SparkSession, fmt: str, bootstrap: str, topic: str, **options: str
) -> DataFrame:
    """A batch read of ``topic`` through ``fmt`` with the given extra options."""
    reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap)
    reader = reader.option("subscribe", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def run_available_now(query: StreamingQuery, timeout_s: float = 240.0) -> None:
    """Wait for an AvailableNow query to finish by itself; fail with its error otherwise."""
    finished = query.awaitTermination(timeout_s)
    if not finished:
        query.stop()
        raise AssertionError(f"query {query.name} did not finish within {timeout_s} s")
    if query.exception() is not None:
        raise AssertionError(f"query failed: {query.exception()}")


def offset_log(checkpoint: Path) -> dict[int, dict]:
    """The source's offset document per batch id, as Spark wrote it into the checkpoint."""
    documents = {}
    for path in sorted((checkpoint / "offsets").iterdir()):
        if path.name.isdigit():
            lines = path.read_text().splitlines()
            documents[int(path.name)] = json.loads(lines[-1])
    return documents


def wait_until(condition, what: str, timeout_s: float = 120.0, interval_s: float = 0.5) -> None:
    """Poll ``condition`` until it is true, or fail naming ``what`` was awaited."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(interval_s)
