"""Errors: what a job catches, inside Spark and in its own process.

Run by integration_tests/test_docs_snippets.py against a real broker (``DOCS_TOPIC`` exists).
"""

import os
import socket

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "shop-events")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:in-spark]
from pyspark.errors import AnalysisException

try:
    (
        spark.read.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffset", "earliest")  # misspelt: startingOffsets
        .load()
    )
except AnalysisException as error:
    if "kafka_rescalable.errors.InvalidOptionError" not in str(error):
        raise
    ours = "kafka_rescalable.errors.InvalidOptionError: "
    message = next(line for line in str(error).splitlines() if line.startswith(ours))
    print(message)  # ...: Invalid option 'startingoffset': ... Did you mean 'startingOffsets'?
# --8<-- [end:in-spark]

taken = socket.socket()
taken.bind(("127.0.0.1", 0))
taken.listen()
port = taken.getsockname()[1]

# --8<-- [start:in-process]
from kafka_rescalable import MetricsEndpointError
from kafka_rescalable.metrics import publish

try:
    publish(spark, port=port)  # a port something else already listens on
except MetricsEndpointError as error:  # raised here, in the driver's own process
    endpoint_error = error
    print(error)  # names the address and the port, and how to pick others
# --8<-- [end:in-process]
taken.close()
