"""Two ``df.write`` jobs with a stalled task that Spark's own speculation copies, as a process.

Usage::

    python -m integration_tests.speculation_query MASTER BOOTSTRAP EVENT_LOG_DIR OUT_EO OUT_ALO

Writes the same ``ROWS`` rows (``PARTITIONS`` Spark partitions, each into the Kafka partition
of the same number; key and value are the row's id) with ``df.write`` on ``MASTER``: first
exactly-once into ``OUT_EO`` (job group ``exactly-once``), then at-least-once into ``OUT_ALO``
(job group ``at-least-once``). In each job a UDF stalls the first attempt of partition
``SLOW_PARTITION`` at its middle row for ``STALL_S`` seconds; the other partitions finish at
once, so speculation launches a copy of the stalled task on the other host, which starts
writing once Kafka holds some of the stalled attempt's rows. Spark's event log, in
``EVENT_LOG_DIR``, records every task attempt. Prints ``speculation: both writes done`` at the
end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from integration_tests.query_process import query_session

PARTITIONS: Final = 4
ROWS_PER_PARTITION: Final = 1_000
ROWS: Final = PARTITIONS * ROWS_PER_PARTITION
SLOW_PARTITION: Final = 1
STALL_S: Final = 90.0
"""Long enough for Spark to launch the copy and the copy to finish; Spark then kills the
stalled attempt, so a run does not wait this long unless speculation fails."""

SPECULATION: Final = {
    "spark.speculation": "true",
    "spark.speculation.interval": "100ms",
    "spark.speculation.quantile": "0.5",
    "spark.speculation.multiplier": "1.5",
    "spark.speculation.minTaskRuntime": "500ms",
    # Spark's default also asks a task to process its input slower than the others before it
    # is copied; the stalled task's input rate is not what this test is about.
    "spark.speculation.efficiency.enabled": "false",
}
_SMALL_BATCHES: Final = {
    # Small Arrow batches and socket buffers: the rows before the stall reach the sink, and
    # Kafka, while the UDF still sleeps, instead of waiting in a buffer for the rest.
    "spark.sql.execution.arrow.maxRecordsPerBatch": "50",
    "spark.buffer.size": "1024",
}


def stall_first_attempt(bootstrap: str, topic: str) -> Callable[[Column], Column]:
    """Return a UDF (the row's id as text) that stalls the first attempt of ``SLOW_PARTITION``.

    That attempt sleeps ``STALL_S`` at the partition's middle row, after handing the rows
    before it to the sink. A later attempt (the speculative copy) waits at the partition's
    first row until Kafka's partition ``SLOW_PARTITION`` holds some rows (committed or not):
    Spark may launch the copy before the first attempt's rows reach Kafka, and the test is
    about a copy that finds them there. Every other task runs at full speed.
    """
    first = SLOW_PARTITION * ROWS_PER_PARTITION
    middle = first + ROWS_PER_PARTITION // 2

    @F.udf(StringType(), useArrow=False)
    def value(row: int) -> str:
        from pyspark import TaskContext

        if row in (first, middle):
            attempt = TaskContext.get().attemptNumber()
            if row == middle and attempt == 0:
                time.sleep(STALL_S)
            elif row == first and attempt > 0:
                _wait_until_kafka_holds_rows(bootstrap, topic, SLOW_PARTITION)
        return str(row)

    return value


def _wait_until_kafka_holds_rows(bootstrap: str, topic: str, partition: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    # read_uncommitted: librdkafka's default, read_committed, reports the end of the
    # partition as its last stable offset, which stays put while a transaction is open.
    watch = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "speculation-watch",
            "isolation.level": "read_uncommitted",
        }
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            _, end = watch.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            if end > 0:
                return
            time.sleep(0.1)
    finally:
        watch.close()


def main(master: str, bootstrap: str, event_log_dir: str, *topics: str) -> None:
    """Write the rows once per delivery guarantee (see the module doc)."""
    conf = {
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.executor.cores": "1",
        "spark.executor.memory": "512m",
        # Start the writes only once both 1-core executors, one per host, have registered.
        "spark.cores.max": "2",
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": event_log_dir,
        # One file of JSON lines, which the test reads.
        "spark.eventLog.rolling.enabled": "false",
        "spark.eventLog.compress": "false",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        **SPECULATION,
        **_SMALL_BATCHES,
    }
    spark = query_session(master, "sink-speculation", conf)
    for guarantee, topic in zip(("exactly-once", "at-least-once"), topics, strict=True):
        spark.sparkContext.setJobGroup(guarantee, f"write {ROWS} rows {guarantee}")
        rows = spark.range(ROWS, numPartitions=PARTITIONS).select(
            F.col("id").cast("string").alias("key"),
            stall_first_attempt(bootstrap, topic)("id").alias("value"),
            (F.col("id") / ROWS_PER_PARTITION).cast("int").alias("partition"),
        )
        writer = (
            rows.write.format("kafka-rescalable")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", topic)
            .option("deliveryGuarantee", guarantee)
        )
        if guarantee == "exactly-once":
            # Longer than the stall: the copy's fencing, not Kafka's transaction timeout
            # (60 s), must be what ends the stalled attempt's transaction.
            writer = writer.option("kafka.transaction.timeout.ms", "300000")
        writer.mode("append").save()
    print("speculation: both writes done", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:6])
