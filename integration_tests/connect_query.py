"""Our source and sink through Spark Connect, run as a process of its own.

Usage: python -m integration_tests.connect_query BOOTSTRAP TOPIC OUT_TOPIC WORKDIR PARALLELISM...

``SparkSession.builder.remote("local[2]")`` starts a real local Spark Connect server in this
process's JVM (a classic ``SparkContext`` with Connect's plugin) and a Connect client talks to
it over gRPC; the suite's classic session cannot share a JVM with it, hence the process.
Every DataFrame here is a Connect plan: the source is found by name on the server, from the
installed ``pyspark_kafka_rescalable``, with no register call.

For each ``PARALLELISM`` in turn the script runs two AvailableNow queries from the same
checkpoints under ``WORKDIR``: ``TOPIC`` into Parquet (``WORKDIR/parquet``) and into our
exactly-once sink (``OUT_TOPIC``, value ``partition:offset``). Between two runs it appends
``TOPIC``'s second half, 20 more records per partition, so the run at the next parallelism
has new records to read from the rescaled checkpoint. Last, in the same Connect session, it
runs the documentation's Connect snippet (``docs/snippets/connect.py``), which copies
``TOPIC`` into ``OUT_TOPIC-docs`` exactly once. It prints nothing; the test reads the Parquet
files, the output topics and the checkpoints.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from integration_tests.docs_snippets import run_snippet
from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.spark_helpers import OUR_FORMAT, kafka_stream, run_available_now

PARTITIONS = 4
PER_RUN = 20


def produce_round(bootstrap: str, topic: str, run: int) -> None:
    """Append ``PER_RUN`` records to every partition, values naming the run."""
    produce(
        bootstrap,
        topic,
        [
            Record(value=f"r{run}-{i}".encode(), partition=i % PARTITIONS)
            for i in range(PER_RUN * PARTITIONS)
        ],
    )


def run_queries(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    out_topic: str,
    workdir: Path,
    parallelism: str,
) -> None:
    """Run both queries to the end of what ``topic`` holds, from their checkpoints."""
    stream = kafka_stream(spark, bootstrap, topic, parallelism=parallelism)
    if not type(stream).__module__.startswith("pyspark.sql.connect."):
        raise TypeError(f"expected a Spark Connect DataFrame, got {type(stream)}")
    to_parquet = (
        stream.select("partition", "offset", "value")
        .writeStream.format("parquet")
        .option("path", str(workdir / "parquet"))
        .option("checkpointLocation", str(workdir / "checkpoint-parquet"))
        .trigger(availableNow=True)
        .start()
    )
    to_kafka = (
        stream.selectExpr("concat(partition, ':', offset) AS value")
        .writeStream.format(OUR_FORMAT)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", out_topic)
        .option("deliveryGuarantee", "exactly-once")
        .option("checkpointLocation", str(workdir / "checkpoint-kafka"))
        .trigger(availableNow=True)
        .start()
    )
    run_available_now(to_parquet)
    run_available_now(to_kafka)


def main(bootstrap: str, topic: str, out_topic: str, workdir: str, *parallelisms: str) -> None:
    """Create the topics, then one run per parallelism, more records between runs."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    create_topic(bootstrap, topic, partitions=PARTITIONS)
    create_topic(bootstrap, out_topic, partitions=2)
    create_topic(bootstrap, f"{out_topic}-docs", partitions=2)
    spark = (
        SparkSession.builder.remote("local[2]")
        .appName("kafka-rescalable-connect")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    try:
        for run, parallelism in enumerate(parallelisms):
            produce_round(bootstrap, topic, run)
            run_queries(spark, bootstrap, topic, out_topic, Path(workdir), parallelism)
        env = {
            "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
            "DOCS_TOPIC": topic,
            "DOCS_OUT_TOPIC": f"{out_topic}-docs",
            "DOCS_WORKDIR": str(Path(workdir) / "docs"),
        }
        run_snippet("connect.py", env)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
