"""``parallelism=auto``: the slot count follows the application's cores between batches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from integration_tests.cluster import StandaloneCluster
from integration_tests.kafka_helpers import BackgroundProducer, Record, create_topic, produce
from integration_tests.spark_helpers import (
    offset_log,
    read_positions,
    run_available_now,
    slots_of,
    start_parquet_stream,
    wait_until,
)

ROOT = Path(__file__).resolve().parent.parent


def test_auto_in_local_mode_uses_the_local_cores(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=5)
    produce(kafka_bootstrap, topic_name, [Record(value=b"%d" % i) for i in range(50)])
    checkpoint = tmp_path / "checkpoint"
    run_available_now(
        start_parquet_stream(
            spark, kafka_bootstrap, topic_name, tmp_path / "out", checkpoint,
            available_now=True, parallelism="auto",
        )
    )
    documents = offset_log(checkpoint)
    assert len(documents[max(documents)]["slots"]) == 2, "local[2] has two cores"


def latest_slot_count(checkpoint: Path) -> int | None:
    if not (checkpoint / "offsets").exists():
        return None
    documents = offset_log(checkpoint)
    return len(documents[max(documents)]["slots"]) if documents else None


def test_auto_follows_executors_added_and_removed(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=6)
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    cluster = StandaloneCluster(tmp_path)
    history: list[int] = []

    def slots_become(count: int, what: str) -> None:
        def reached() -> bool:
            assert driver.poll() is None, (tmp_path / "driver.log").read_text()[-3000:]
            current = latest_slot_count(checkpoint)
            if current is not None and (not history or history[-1] != current):
                history.append(current)
            return current == count

        wait_until(reached, f"{count} reader slots after {what}", timeout_s=180)

    try:
        cluster.start_master()
        cluster.start_worker("w1", cores=1)
        with BackgroundProducer(kafka_bootstrap, topic_name, partitions=6, batch=10) as producer:
            with open(tmp_path / "driver.log", "wb") as log:
                driver = subprocess.Popen(
                    [sys.executable, "-m", "integration_tests.auto_query", cluster.url,
                     kafka_bootstrap, topic_name, str(output), str(checkpoint)],
                    cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                )
            try:
                slots_become(1, "starting with one 1-core worker")
                cluster.start_worker("w2", cores=2)
                slots_become(3, "adding a 2-core worker")
                cluster.kill("w2")
                slots_become(1, "killing that worker")
            finally:
                driver.send_signal(signal.SIGTERM)
                try:
                    driver.wait(60)
                except subprocess.TimeoutExpired:
                    os.killpg(driver.pid, signal.SIGKILL)
                    driver.wait(30)
            produced = producer.stop()
    finally:
        cluster.stop()
    assert history[:1] == [1] and 3 in history and history[-1] == 1, history
    for document in offset_log(checkpoint).values():
        slots = slots_of(document)
        assert all(slots), "no idle slot: 6 partitions always cover every slot"
    # Whatever the slot changes did, the output holds every record once.
    run_available_now(
        start_parquet_stream(
            spark, kafka_bootstrap, topic_name, output, checkpoint, available_now=True,
            parallelism="2",
        )
    )
    assert read_positions(spark, output) == produced
    (tmp_path / "slot_history.txt").write_text(" -> ".join(map(str, history)))
    print("slot history:", " -> ".join(map(str, history)))
