"""``parallelism=auto``: the slot count follows the application's cores between batches."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from integration_tests.cluster import StandaloneCluster
from integration_tests.fake_spark_ui import FakeSparkUi
from integration_tests.kafka_helpers import BackgroundProducer, Record, create_topic, produce
from integration_tests.query_process import start_query_process, stop_query_process
from integration_tests.spark_helpers import (
    offset_log,
    read_positions,
    run_available_now,
    slot_count,
    slots_of,
    start_parquet_stream,
    wait_until,
)
from kafka_rescalable.driver.cluster_cores import application_cores


def auto_slots(
    spark: SparkSession, bootstrap: str, topic: str, tmp_path: Path, partitions: int, **options: str
) -> int:
    """Read a new topic with ``parallelism=auto`` to its end; return the slots of the last batch."""
    create_topic(bootstrap, topic, partitions=partitions)
    produce(bootstrap, topic, [Record(value=b"%d" % i) for i in range(10 * partitions)])
    checkpoint, output = tmp_path / "checkpoint", tmp_path / "out"
    run_available_now(
        start_parquet_stream(
            spark, bootstrap, topic, output, checkpoint, available_now=True,
            parallelism="auto", **options,
        )
    )
    assert spark.read.parquet(str(output)).count() == 10 * partitions
    documents = offset_log(checkpoint)
    return slot_count(documents[max(documents)])


def test_auto_in_local_mode_uses_the_local_cores(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    assert auto_slots(spark, kafka_bootstrap, topic_name, tmp_path, 5) == 2, "local[2]: 2 cores"


def latest_slot_count(checkpoint: Path) -> int | None:
    if not (checkpoint / "offsets").exists():
        return None
    documents = offset_log(checkpoint)
    return slot_count(documents[max(documents)]) if documents else None


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
                driver = start_query_process(
                    "integration_tests.auto_query",
                    [cluster.url, kafka_bootstrap, topic_name, str(output), str(checkpoint)],
                    log,
                )
            try:
                slots_become(1, "starting with one 1-core worker")
                cluster.start_worker("w2", cores=2)
                slots_become(3, "adding a 2-core worker")
                cluster.kill("w2")
                slots_become(1, "killing that worker")
                produced = producer.stop()
                # The running query reads the rest, on the one 1-core worker left.
                wait_until(
                    lambda: (
                        driver.poll() is None
                        and len(set(read_positions(spark, output))) >= len(produced)
                    ),
                    "the query to write every produced record",
                    timeout_s=120,
                    interval_s=2,
                )
            finally:
                stop_query_process(driver, grace_s=60)
    finally:
        cluster.stop()
    # A first batch planned before the worker's executor registers sees no executor cores;
    # auto then keeps the default of one slot per partition (6) until the next batch.
    settled = history[1:] if history[:1] == [6] else history
    assert settled[:1] == [1] and 3 in settled and settled[-1] == 1, history
    for document in offset_log(checkpoint).values():
        slots = slots_of(document)
        assert all(slots), "no idle slot: 6 partitions always cover every slot"
    # Whatever the slot changes did, the output holds every record once.
    assert read_positions(spark, output) == produced
    (tmp_path / "slot_history.txt").write_text(" -> ".join(map(str, history)))
    print("slot history:", " -> ".join(map(str, history)))


def test_parallelism_ui_url_is_the_ui_auto_asks(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    # The fake UI reports 2 + 3 + 2 = 7 cores where the real local[2] driver has 2: seven
    # slots prove the option's address was asked and the driver's own UI was not.
    with FakeSparkUi([2, 3, 2]) as ui:
        slots = auto_slots(
            spark, kafka_bootstrap, topic_name, tmp_path, 8, parallelismUiUrl=ui.url
        )
    assert slots == 7


def test_application_cores_refuses_a_history_server_and_counts_executors_only() -> None:
    with FakeSparkUi([1, 4]) as ui:
        assert application_cores(ui.url) == 5
    with FakeSparkUi([1, 4], applications=2) as ui:
        assert application_cores(ui.url) is None
