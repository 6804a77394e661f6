"""Typed records: Avro framed for a schema registry, read typed and written back typed.

Run by integration_tests/test_docs_snippets.py against a real broker and a real
Confluent-compatible registry: ``DOCS_TOPIC`` holds orders written by confluent-kafka's
``AvroSerializer``; ``DOCS_OUT_TOPIC`` exists and is empty.
"""

import os

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
registry = os.environ.get("SCHEMA_REGISTRY_URL", "http://registry:8081")
topic = os.environ.get("DOCS_TOPIC", "orders")
out_topic = os.environ.get("DOCS_OUT_TOPIC", "orders-by-customer")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:read]
orders = (
    spark.read.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("valueFormat", "avro")
    .option("schema.registry.url", registry)  # reader schema: the subject's latest version
    .load()
)
decoded = orders.select("value.id", "value.customer", "value.amount")
# --8<-- [end:read]
rows = decoded.collect()

# --8<-- [start:write]
from pyspark.sql import functions as F

totals = orders.groupBy(F.col("value.customer").alias("customer")).agg(
    F.count("*").alias("orders"), F.sum("value.amount").alias("amount")
)
(
    totals.select(F.col("customer").alias("key"), F.struct("orders", "amount").alias("value"))
    .write.format("kafka-rescalable")
    .mode("append")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("topic", out_topic)
    .option("keyFormat", "string")
    .option("valueFormat", "avro")  # schema derived from the struct, registered by the sink
    .option("schema.registry.url", registry)
    .save()
)
# --8<-- [end:write]
