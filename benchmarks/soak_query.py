"""The soak run's streaming query, in a process of its own so the soak can kill it.

Usage: python -m benchmarks.soak_query MASTER BOOTSTRAP TOPIC OUTPUT CHECKPOINT PARALLELISM

Reads TOPIC from the earliest offsets with our source into a Parquet sink, one trigger a
second, until SIGTERM (a clean stop) or SIGKILL (a crash, which the checkpoint must survive).
"""

from __future__ import annotations

import signal
import sys

from integration_tests.query_process import query_session
from integration_tests.spark_helpers import kafka_stream


def main(
    master: str, bootstrap: str, topic: str, output: str, checkpoint: str, parallelism: str
) -> None:
    """Run the query until SIGTERM stops it."""
    spark = query_session(
        master,
        f"soak-{parallelism}",
        {
            "spark.executor.cores": "1",
            "spark.executor.memory": "512m",
            "spark.ui.showConsoleProgress": "false",
        },
    )
    query = (
        kafka_stream(spark, bootstrap, topic, parallelism=parallelism)
        .select("partition", "offset")
        .writeStream.format("parquet")
        .option("path", output)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="1 second")
        .start()
    )
    signal.signal(signal.SIGTERM, lambda *_: query.stop())
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:7])
