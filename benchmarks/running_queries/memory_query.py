"""Our source's running query as a process of its own, for the memory benchmark.

Usage: python -m benchmarks.running_queries.memory_query BOOTSTRAP TOPIC WORK_DIR

Reads ``TOPIC`` from its end with ``kafka-rescalable`` (default options) in the benchmarks'
``local[2]`` session, ``trigger(processingTime="0 seconds")`` into ``foreachBatch``, which
collects the batch's ``timestamp`` column as Arrow (as the latency benchmark does) and
appends one JSON line per batch to ``WORK_DIR/batches.jsonl``: when it ended, its rows and
the age of its oldest record. The line is all the sink keeps, so the driver's Python process
holds nothing that grows with the records read. Runs until SIGTERM, which stops it cleanly.
A process of its own so that the memory sampled is the query's alone, not the benchmark's.
"""

from __future__ import annotations

import json
import math
import signal
import sys
from pathlib import Path
from typing import Any

from benchmarks.running_queries.steady import steady_query, watch
from benchmarks.session import OURS, spark_session

BATCHES_FILE = "batches.jsonl"


def main(bootstrap: str, topic: str, work_dir: str) -> None:
    """Run the query until SIGTERM."""
    import pyarrow.compute as pc

    work = Path(work_dir)
    spark = spark_session(work / "warehouse")
    log = (work / BATCHES_FILE).open("a", encoding="utf-8")

    def on_batch(stamps: Any, batch_id: int, now: float) -> None:
        rows = len(stamps)
        oldest = now * 1000 - pc.min(stamps).as_py() if rows else None
        line = {"at": now, "batch": batch_id, "rows": rows, "oldest_ms": oldest}
        log.write(json.dumps(line) + "\n")
        log.flush()

    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "startingOffsets": "latest",
    }
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    with steady_query(spark, OURS, options, on_batch, work / "checkpoint") as query:
        # Short steps, so that the signal is seen between Py4J calls, not inside one.
        watch(query, math.inf, "the memory query", 1.0, until=lambda: bool(stopping))
    spark.stop()
    log.close()


if __name__ == "__main__":
    main(*sys.argv[1:4])
