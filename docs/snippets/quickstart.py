"""Getting started: read a topic as a stream and as a batch, query it in SQL, write to Kafka.

The pages include its sections (``--8<--`` markers). integration_tests/test_docs_snippets.py
runs the whole file against the test suite's broker and Spark session; by hand:
``KAFKA_BOOTSTRAP_SERVERS=host:9092 DOCS_TOPIC=shop-events python docs/snippets/quickstart.py``
(the topics must exist: ``DOCS_TOPIC`` with JSON events, ``DOCS_OUT_TOPIC`` to write to).
"""

# --8<-- [start:setup]
import os

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")  # your brokers
topic = os.environ.get("DOCS_TOPIC", "shop-events")  # a topic of JSON events
workdir = os.environ.get("DOCS_WORKDIR", "/tmp/kafka-rescalable-docs")

spark = SparkSession.builder.master("local[2]").getOrCreate()
# --8<-- [end:setup]

# --8<-- [start:stream]
events = (
    spark.readStream.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", "earliest")
    .option("parallelism", "4")  # ours: reader slots; default one per partition
    .load()
)
query = (
    events.selectExpr("CAST(value AS STRING) AS json", "timestamp")
    .writeStream.format("parquet")
    .option("path", f"{workdir}/events")
    .option("checkpointLocation", f"{workdir}/events-checkpoint")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
# --8<-- [end:stream]

# --8<-- [start:batch]
everything = (
    spark.read.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .option("startingOffsets", "earliest")  # the default for a batch read
    .option("endingOffsets", "latest")  # the default, and batch only
    .load()
)
per_partition = everything.groupBy("partition").count().orderBy("partition").collect()
# --8<-- [end:batch]

# --8<-- [start:sql]
spark.sql(f"""
    CREATE OR REPLACE TEMPORARY VIEW shop_events USING `kafka-rescalable`
    OPTIONS ('kafka.bootstrap.servers' '{bootstrap}', 'subscribe' '{topic}')
""")
in_sql = spark.sql("SELECT partition, count(*) AS n FROM shop_events GROUP BY partition")
# --8<-- [end:sql]
sql_rows = in_sql.collect()

out_topic = os.environ.get("DOCS_OUT_TOPIC", "shop-orders")
# --8<-- [start:write]
orders = spark.createDataFrame(
    [("alice", '{"item": "book", "qty": 1}'), ("bob", '{"item": "pen", "qty": 3}')],
    "key STRING, value STRING",
)
(
    orders.write.format("kafka-rescalable")
    .mode("append")  # required: Spark's default mode, ErrorIfExists, is refused
    .option("kafka.bootstrap.servers", bootstrap)
    .option("topic", out_topic)
    .save()
)
# --8<-- [end:write]
