"""Spark's built-in Kafka source, the reference we compare against, from Maven Central.

Maven Central has no ``spark-sql-kafka-0-10`` for every Spark release a PyPI ``pyspark`` has
(4.3.0 is missing as of 2026-11), and ``spark-token-provider-kafka-0-10`` stops at 4.0.0. So we
pin the newest published set by hand and fetch it without transitive dependencies; Spark
itself ships the rest (Scala, parallel collections, compression codecs). The 4.2.0 source runs
unchanged on Spark 4.2 and 4.3: the integration tests are the proof.
"""

from __future__ import annotations

from pathlib import Path

from kafka_rescalable.testing.jars import resolve_jars

BUILTIN_KAFKA_SOURCE = (
    "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0",
    "org.apache.spark:spark-token-provider-kafka-0-10_2.13:4.0.0",
    "org.apache.kafka:kafka-clients:3.9.2",
    "org.apache.commons:commons-pool2:2.13.1",
)


SPARK_AVRO = ("org.apache.spark:spark-avro_2.13:4.2.0",)
"""Spark's own Avro functions (``from_avro``), pinned like the source: 4.2.0 is the newest on
Maven Central; Spark ships Avro itself (``avro``, ``avro-mapred``, ``xz``), so nothing else is
fetched. The tests' session holds our Avro rows to it; the Avro decoding benchmark times it."""


def spark_avro_jars() -> list[Path]:
    """Return the jar to add to ``spark.jars`` for ``from_avro``; downloaded once, cached."""
    return resolve_jars(SPARK_AVRO, transitive=False)


def builtin_kafka_source_jars() -> list[Path]:
    """Return the jars to put on ``spark.jars`` for ``format("kafka")``; downloaded once, cached."""
    return resolve_jars(BUILTIN_KAFKA_SOURCE, transitive=False)
