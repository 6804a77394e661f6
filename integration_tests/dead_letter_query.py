"""A query with a dead-letter topic, in a process of its own, for the dead-letter kill test.

Usage: python -m integration_tests.dead_letter_query BOOTSTRAP SOURCE DEAD_LETTERS OUTPUT CHECKPOINT

It reads ``SOURCE``'s JSON values (``id BIGINT``) with ``deadLetterTopic`` set and writes
``partition:offset:id`` of every record that decoded to ``OUTPUT`` with our exactly-once sink.
Small batches, cut into more tasks than the source has partitions (two tasks of one partition
commit dead letters at the same time), and a slow Python UDF keep each micro-batch running
for a while after its reader tasks committed their dead letters: the window the test kills
in. It runs until it is killed.
"""

from __future__ import annotations

import sys
import time

from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from integration_tests.query_process import query_session
from integration_tests.spark_helpers import kafka_stream


@F.udf(StringType())
def slow_position(partition: int, offset: int, record_id: int) -> str:
    """Return ``partition:offset:id`` slowly enough to stretch a batch past its reads."""
    time.sleep(0.004)
    return f"{partition}:{offset}:{record_id}"


def main(bootstrap: str, source: str, dead_letters: str, output: str, checkpoint: str) -> None:
    """Run the query in ``local[2]`` until the process is killed."""
    spark = query_session("local[2]", "dead-letter-query", {"spark.ui.enabled": "false"})
    records = kafka_stream(
        spark,
        bootstrap,
        source,
        valueFormat="json",
        valueSchema="id BIGINT",
        deadLetterTopic=dead_letters,
        maxOffsetsPerTrigger="200",
        minPartitions="4",
        minRecordsPerPartition="1",
    )
    query = (
        records.select(
            F.col("partition").cast("string").alias("key"),
            slow_position("partition", "offset", "value.id").alias("value"),
        )
        .writeStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", output)
        .option("deliveryGuarantee", "exactly-once")
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    query.awaitTermination()


if __name__ == "__main__":
    main(*sys.argv[1:6])
