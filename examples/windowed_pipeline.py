"""Windowed ETL with a watermark where one partition lags in event time, with and without alignment.

Usage::

    python examples/windowed_pipeline.py                    # embedded broker, local[2]
    python examples/windowed_pipeline.py --plot alignment.png   # also draw it (needs matplotlib)
    python examples/windowed_pipeline.py --minutes 4            # a shorter run

Sensor readings arrive in a 2-partition topic. Partition 0 holds ten minutes of readings;
partition 1 only its first minute, the other nine arrive later (a gateway that was offline
and now uploads its backlog). The pipeline counts readings per one-minute window with a
30-second watermark and appends finished windows to Parquet.

Run without alignment, the first batch reads partition 0 to minute 10, the watermark jumps
there, and partition 1's backlog arrives "late": Spark drops it. With
``maxEventTimeDrift=20 seconds`` the source holds partition 0 near partition 1's event time,
so every reading is counted. Expected output::

    window    unaligned  aligned
    00:00           120      120
    00:01            60      120
    ...
    total           ...     1200
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from etl_pipeline import example_session
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from kafka_rescalable.state import SlotsDocument
from kafka_rescalable.testing.local_kafka import LocalKafka

T0 = 1_763_700_000_000  # 2025-11-21T04:40:00Z, a whole minute


def produce_readings(bootstrap: str, topic: str, partition: int, seconds: range) -> None:
    """Produce one reading per second of ``seconds``, stamped with that second as event time."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 10})
    for second in seconds:
        reading = {"sensor": f"s{partition}", "value": second % 17}
        producer.produce(
            topic, json.dumps(reading).encode(), partition=partition, timestamp=T0 + second * 1000
        )
    producer.flush(30)


def create_topic(bootstrap: str, topic: str) -> None:
    """Create the 2-partition topic: one partition per sensor, so one can lag behind the other."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(30)


def offsets_in(checkpoint: Path) -> list[dict]:
    """Per batch: the watermark and each partition's next offset, from the offset log."""
    batches = []
    for path in sorted(
        (checkpoint / "offsets").iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else -1
    ):
        if not path.name.isdigit():
            continue
        lines = path.read_text().splitlines()
        # The slots document reads every version and layout the source writes.
        state = SlotsDocument.from_json(lines[-1]).state
        offsets = {tp.partition: offset for tp, offset in state.offsets().items()}
        batches.append({"watermark": json.loads(lines[1])["batchWatermarkMs"], "offsets": offsets})
    return batches


def run(
    spark: SparkSession, bootstrap: str, aligned: bool, work: Path, minutes: int
) -> tuple[dict, list]:
    """One pass of the scenario on a fresh topic; returns window counts and the batch log."""
    topic = f"sensor-readings-{'aligned' if aligned else 'unaligned'}-{int(time.time())}"
    create_topic(bootstrap, topic)
    produce_readings(bootstrap, topic, 0, range(minutes * 60))
    produce_readings(bootstrap, topic, 1, range(60))
    checkpoint, output = work / topic / "checkpoint", work / topic / "windows"
    reader = (
        spark.readStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
    )
    if aligned:
        reader = reader.option("maxEventTimeDrift", "20 seconds").option("idleTimeout", "5 minutes")
    windows = (
        reader.load()
        .withWatermark("timestamp", "30 seconds")
        .groupBy(F.window("timestamp", "1 minute"))
        .count()
    )
    query = (
        windows.writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
        .outputMode("append")
        .trigger(processingTime="300 milliseconds")
        .start()
    )
    try:
        # Wait until partition 1's first minute is read and a committed batch has moved the
        # watermark: only then is the rest of partition 1 "late" for Spark.
        wait_for(lambda: settled(checkpoint), query)
        produce_readings(bootstrap, topic, 1, range(60, minutes * 60))  # the late upload
        produce_readings(bootstrap, topic, 0, range(2000, 2001))  # later readings close
        produce_readings(bootstrap, topic, 1, range(2000, 2001))  # every window
        wait_for(lambda: finished_windows(spark, output) >= minutes, query)
    finally:
        query.stop()
    rows = spark.read.parquet(str(output)).collect()
    counts = {(row.window.start.timestamp() * 1000 - T0) // 60_000: row["count"] for row in rows}
    return counts, offsets_in(checkpoint)


def settled(checkpoint: Path) -> bool:
    """Tell whether a committed batch moved the watermark after partition 1's first minute.

    Only from then on is the rest of partition 1 "late" for Spark.
    """
    if not (checkpoint / "commits").exists():
        return False
    batches = offsets_in(checkpoint)
    committed = len([p for p in (checkpoint / "commits").iterdir() if p.name.isdigit()])
    return (
        bool(batches)
        and committed == len(batches)
        and batches[-1]["offsets"].get(1) == 60
        and batches[-1]["watermark"] > T0
    )


def finished_windows(spark: SparkSession, output: Path) -> int:
    """Count the windows written so far; before the first commit there is no file to read."""
    from pyspark.errors import AnalysisException

    try:
        return spark.read.parquet(str(output)).count()
    except AnalysisException:  # nothing committed yet: no file to take the schema from
        return 0


def wait_for(condition, query, timeout_s: float = 300) -> None:
    """Poll ``condition``, failing at once if the query died instead of waiting out the timeout."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if query.exception() is not None:
            raise RuntimeError(f"the query failed: {query.exception()}")
        if time.monotonic() > deadline:
            raise TimeoutError("the pipeline did not finish in time")
        time.sleep(0.5)


def plot(batches_by_run: dict[str, list], path: Path, minutes: int) -> None:
    """Event-time position of each partition and the watermark, per batch, for both runs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for axis, (title, batches) in zip(axes, batches_by_run.items(), strict=False):
        ids = range(len(batches))
        for partition, colour, width in ((0, "tab:blue", 4.0), (1, "tab:orange", 1.8)):
            # Records carry one second each from T0, so offset n has event time n seconds.
            seconds = [min(b["offsets"].get(partition, 0), minutes * 60) for b in batches]
            axis.step(ids, seconds, where="post", color=colour, linewidth=width, alpha=0.85,
                      label=f"partition {partition} read up to")
        marks = [max(0, (b["watermark"] - T0) / 1000) for b in batches]
        axis.step(ids, marks, where="post", color="black", linestyle="--", label="watermark")
        axis.set_title(title)
        axis.set_xlabel("micro-batch")
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("event time (seconds after start)")
    axes[0].set_ylim(0, minutes * 60 + 30)
    axes[1].legend(loc="lower right")
    figure.suptitle("Partition 1 lags: records below the watermark are dropped as late")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    """Run the scenario without and with alignment and print the window counts side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="Kafka brokers; default: start an embedded broker")
    parser.add_argument("--master", default=os.environ.get("SPARK_MASTER", "local[2]"))
    parser.add_argument("--output", type=Path, default=Path("output/windowed"))
    parser.add_argument("--plot", type=Path, help="write a PNG of both runs (needs matplotlib)")
    parser.add_argument("--minutes", type=int, default=10, help="minutes of readings (>= 3)")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    shutil.rmtree(args.output, ignore_errors=True)

    spark = example_session(args.master, "kafka-rescalable-windowed", 2)
    broker = None if args.bootstrap else LocalKafka()
    try:
        bootstrap = args.bootstrap or broker.start()
        unaligned, unaligned_batches = run(spark, bootstrap, False, args.output, args.minutes)
        aligned, aligned_batches = run(spark, bootstrap, True, args.output, args.minutes)
    finally:
        if broker is not None:
            broker.stop()
        spark.stop()
    print(f"{'window':<8}{'unaligned':>11}{'aligned':>9}")
    for minute in range(args.minutes):
        print(f"00:{minute:02d}   {unaligned.get(minute, 0):>11}{aligned.get(minute, 0):>9}")
    total = range(args.minutes)
    print(f"{'total':<8}{sum(unaligned.get(m, 0) for m in total):>11}"
          f"{sum(aligned.get(m, 0) for m in total):>9}")
    print(f"readings produced: {2 * args.minutes * 60} (plus 2 that close the last windows)")
    if args.plot:
        plot({"without alignment": unaligned_batches,
              "maxEventTimeDrift = 20 seconds": aligned_batches}, args.plot, args.minutes)
        print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
