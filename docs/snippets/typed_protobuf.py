"""Typed records: Protobuf messages read with a descriptor set.

Run by integration_tests/test_docs_snippets.py against a real broker: ``DOCS_TOPIC`` holds
bare ``shop.Order`` messages and ``DOCS_DESCRIPTOR_SET`` is the descriptor set of their
``.proto`` (``protoc --include_imports --descriptor_set_out``).
"""

import os

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
topic = os.environ.get("DOCS_TOPIC", "orders")
descriptor_set = os.environ.get("DOCS_DESCRIPTOR_SET", "/path/to/order.desc")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:read]
orders = (
    spark.read.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("valueFormat", "protobuf")
    .option("valueSchema", descriptor_set)  # a descriptor set, read on the driver
    .option("valueMessage", "shop.Order")  # the message's full name, with its package
    .load()
)
decoded = orders.select("value.id", "value.customer", "value.status", "value.lines")
# --8<-- [end:read]
rows = decoded.collect()
