"""A speculative copy that Spark itself launches writes no duplicate under exactly-once.

A driver of its own (``integration_tests.speculation_query``) writes the same rows with
``df.write`` twice, exactly-once and then at-least-once, with ``spark.speculation`` on. In each
write, the first attempt of one task hands half its rows to the sink and stalls; Spark's
speculation launches a copy of it, which waits until some of those rows are in Kafka (inside
the stalled attempt's open transaction, under exactly-once), then writes the whole partition
and succeeds; Spark kills the stalled attempt. The test proves, from Spark's event log, that
Spark launched that copy on another host and the copy succeeded; then that a
``read_committed`` reader of the exactly-once topic sees every row once, though the stalled
attempt's aborted rows are in the log, while the at-least-once topic holds the stalled
attempt's rows a second time (so the first check can fail).

Why two hosts: Spark never runs a speculative copy on a host where an attempt of the same
task is running (``TaskSetManager`` checks ``hasAttemptOnHost``), so ``local[...]`` and
``local-cluster[...]``, all on one host, never speculate. A standalone cluster whose two
1-core workers take the loopback addresses ``127.0.0.1`` and ``127.0.0.2`` is two hosts to
Spark, on one machine.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from integration_tests.cluster import StandaloneCluster
from integration_tests.kafka_helpers import create_topic, read_all
from integration_tests.query_process import start_query_process, stop_query_process
from integration_tests.speculation_query import (
    PARTITIONS,
    ROWS,
    ROWS_PER_PARTITION,
    SLOW_PARTITION,
)

GUARANTEES = ("exactly-once", "at-least-once")


@dataclass(frozen=True)
class TaskAttempt:
    """One task attempt as Spark's event log records it."""

    job_group: str | None
    partition: int
    attempt: int
    host: str
    speculative: bool
    end: str | None
    """``Success``, ``TaskKilled``, ... from the task's end event; ``None`` if it never ended."""


def task_attempts(event_log_dir: Path) -> list[TaskAttempt]:
    """Read the one application's event log: every task attempt, with its job group."""
    (log,) = event_log_dir.iterdir()
    group_of_stage: dict[int, str | None] = {}
    started: dict[int, dict] = {}
    ended: dict[int, str] = {}
    stage_of_task: dict[int, int] = {}
    for line in log.read_text().splitlines():
        event = json.loads(line)
        kind = event["Event"]
        if kind == "SparkListenerJobStart":
            group = (event.get("Properties") or {}).get("spark.jobGroup.id")
            for stage in event["Stage IDs"]:
                group_of_stage[stage] = group
        elif kind == "SparkListenerTaskStart":
            info = event["Task Info"]
            started[info["Task ID"]] = info
            stage_of_task[info["Task ID"]] = event["Stage ID"]
        elif kind == "SparkListenerTaskEnd":
            ended[event["Task Info"]["Task ID"]] = event["Task End Reason"]["Reason"]
    return [
        TaskAttempt(
            job_group=group_of_stage.get(stage_of_task[task]),
            partition=info["Partition ID"],
            attempt=info["Attempt"],
            host=info["Host"],
            speculative=info["Speculative"],
            end=ended.get(task),
        )
        for task, info in started.items()
    ]


def run_driver(bootstrap: str, topics: tuple[str, str], tmp_path: Path) -> Path:
    """Run the writes on a two-host standalone cluster; return the event log's directory."""
    events = tmp_path / "events"
    events.mkdir()
    cluster = StandaloneCluster(tmp_path)
    try:
        cluster.start_master()
        # The driver starts with the workers: it waits for both executors before it writes.
        with open(tmp_path / "driver.log", "wb") as log:
            driver = start_query_process(
                "integration_tests.speculation_query",
                [cluster.url, bootstrap, str(events), *topics],
                log,
            )
        try:
            cluster.start_worker("w1", cores=1, host="127.0.0.1")
            cluster.start_worker("w2", cores=1, host="127.0.0.2")
            with contextlib.suppress(subprocess.TimeoutExpired):
                driver.wait(300)
        finally:
            if driver.poll() is None:
                stop_query_process(driver, grace_s=None)
    finally:
        cluster.stop()
    text = (tmp_path / "driver.log").read_text(errors="replace")
    assert driver.returncode == 0, text[-3000:]
    assert "speculation: both writes done" in text, text[-3000:]
    return events


def test_a_copy_launched_by_spark_speculation_writes_each_row_once(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    exactly, at_least = f"{topic_name}-eo", f"{topic_name}-alo"
    for topic in (exactly, at_least):
        create_topic(kafka_bootstrap, topic, partitions=PARTITIONS)
    events = run_driver(kafka_bootstrap, (exactly, at_least), tmp_path)

    attempts = task_attempts(events)
    for guarantee in GUARANTEES:
        slow = [a for a in attempts if a.job_group == guarantee and a.partition == SLOW_PARTITION]
        (first,) = [a for a in slow if a.attempt == 0]
        copies = [a for a in slow if a.speculative]
        assert copies, f"Spark speculated nothing in the {guarantee} write: {slow}"
        assert all(copy.host != first.host for copy in copies), slow
        assert any(copy.end == "Success" for copy in copies), slow
        print(f"{guarantee}: partition {SLOW_PARTITION}'s attempts:", slow)

    committed = Counter(int(r.value) for r in read_all(kafka_bootstrap, exactly))
    assert set(committed) == set(range(ROWS))
    assert max(committed.values()) == 1
    # The stalled attempt's rows did reach Kafka, in the transaction its copy fenced: a
    # read_uncommitted reader sees them.
    sent = len(read_all(kafka_bootstrap, exactly, isolation_level="read_uncommitted"))
    assert sent > ROWS, "the stalled attempt wrote nothing before its copy: nothing was fenced"

    written = Counter(int(r.value) for r in read_all(kafka_bootstrap, at_least))
    assert set(written) == set(range(ROWS))
    twice = {value for value, count in written.items() if count > 1}
    assert twice, "at-least-once kept no row of the stalled attempt: the checks prove nothing"
    start = SLOW_PARTITION * ROWS_PER_PARTITION
    first_half = range(start, start + ROWS_PER_PARTITION // 2)
    assert twice <= set(first_half), "only the stalled attempt's first half is written twice"
    print(
        f"exactly-once: {len(committed)} rows committed, each once; {sent - ROWS} aborted rows "
        f"of the stalled attempt. at-least-once: {sum(written.values())} records, "
        f"{len(twice)} rows twice"
    )
