"""Spark Connect: a stream through a real local Connect server, rescaled between two runs.

The same process also runs the documentation's Connect snippet, checked here too.

``SparkSession.builder.remote("local[2]")`` starts its Connect server in the client's JVM,
which cannot hold the suite's classic session too (one ``SparkContext`` per JVM), so the
queries run in ``integration_tests.connect_query``, one process and one Connect server for
all of their steps, against the suite's broker.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from integration_tests.connect_query import PARTITIONS, PER_RUN
from integration_tests.kafka_helpers import read_all
from integration_tests.query_process import start_query_process, stop_query_process
from integration_tests.spark_helpers import offset_log, slot_count


def test_a_stream_through_spark_connect_rescales_and_writes_every_record_once(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    out_topic = f"{topic_name}-out"
    log = tmp_path / "connect.log"
    with log.open("wb") as output:
        process = start_query_process(
            "integration_tests.connect_query",
            [kafka_bootstrap, topic_name, out_topic, str(tmp_path), "2", "3"],
            output,
        )
        try:
            returncode = process.wait(300)
        finally:
            if process.poll() is None:
                stop_query_process(process, grace_s=None)
    assert returncode == 0, log.read_text()[-3000:]

    expected = Counter((p, o) for p in range(PARTITIONS) for o in range(2 * PER_RUN))
    rows = pq.read_table(tmp_path / "parquet").select(["partition", "offset"]).to_pylist()
    assert Counter((row["partition"], row["offset"]) for row in rows) == expected
    written = read_all(kafka_bootstrap, out_topic, isolation_level="read_committed")
    assert Counter(tuple(int(n) for n in r.value.decode().split(":")) for r in written) == expected
    # The documentation's Connect snippet, run last in the same session: a copy, exactly once.
    copied = read_all(kafka_bootstrap, f"{out_topic}-docs", isolation_level="read_committed")
    source = read_all(kafka_bootstrap, topic_name)
    assert Counter(r.value for r in copied) == Counter(r.value for r in source)
    assert len(copied) == 2 * PER_RUN * PARTITIONS
    for checkpoint in ("checkpoint-parquet", "checkpoint-kafka"):
        documents = offset_log(tmp_path / checkpoint)
        slots = [slot_count(documents[batch]) for batch in sorted(documents)]
        assert slots[0] == 2 and slots[-1] == 3, (checkpoint, slots)
