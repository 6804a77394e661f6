"""A streaming query with ``parallelism=auto`` (or another), run as its own process.

Usage: python -m integration_tests.auto_query MASTER BOOTSTRAP TOPIC OUTPUT CHECKPOINT
[PARALLELISM]

Runs until it is terminated (SIGTERM stops it cleanly; SIGKILL is a crash the checkpoint must
survive); the tests and the soak run (``integration_tests.soak``) watch the checkpoint's offset log.
"""

from __future__ import annotations

import signal
import sys

from integration_tests.query_process import query_session
from integration_tests.spark_helpers import kafka_stream


def main(
    master: str,
    bootstrap: str,
    topic: str,
    output: str,
    checkpoint: str,
    parallelism: str = "auto",
) -> None:
    """Run the query on ``master`` until SIGTERM, which stops it cleanly."""
    spark = query_session(
        master,
        f"parallelism-{parallelism}",
        {
            "spark.executor.cores": "1",
            "spark.executor.memory": "512m",
            "spark.ui.showConsoleProgress": "false",
        },
    )
    query = (
        kafka_stream(spark, bootstrap, topic, parallelism=parallelism)
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
