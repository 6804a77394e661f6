"""Metrics: publish every query's lag for Prometheus, and the same numbers as log lines.

Run by integration_tests/test_docs_snippets.py against a real broker: ``DOCS_TOPIC`` holds a
few records. The check between the sections (hidden from the page) scrapes the endpoint.
"""

import os
import time
import urllib.request

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "shop-events")
workdir = os.environ.get("DOCS_WORKDIR", "/tmp/kafka-rescalable-docs")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:publish]
from kafka_rescalable.metrics import publish

metrics = publish(spark, port=0)  # port=0: a free port; metrics.port says which
print(f"serving http://127.0.0.1:{metrics.port}/metrics")
query = (
    spark.readStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", "earliest")
    .load()
    .writeStream.format("noop")
    .option("checkpointLocation", f"{workdir}/metrics-checkpoint")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
# --8<-- [end:publish]

# Spark hands progress to listeners asynchronously: wait for the batch's series.
deadline = time.monotonic() + 60
scraped = ""
while f'topic="{topic}"' not in scraped and time.monotonic() < deadline:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics.port}/metrics") as answer:
        scraped = answer.read().decode()
    time.sleep(0.5)

# --8<-- [start:stop]
metrics.stop()  # stops listening and serving; `with publish(...) as metrics:` does the same
# --8<-- [end:stop]

# --8<-- [start:log]
import logging

from kafka_rescalable.metrics import log_progress

progress_log = log_progress(spark)  # one INFO line per batch on "kafka_rescalable.metrics"
logging.getLogger("kafka_rescalable.metrics").setLevel(logging.DEBUG)  # and one per partition
# --8<-- [end:log]
progress_log.stop()
logging.getLogger("kafka_rescalable.metrics").setLevel(logging.NOTSET)  # as it was, for others
