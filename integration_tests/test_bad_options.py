"""Bad options through real Spark: the error that reaches the user names the option."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from integration_tests.kafka_helpers import create_topic
from integration_tests.spark_helpers import OUR_FORMAT

# (options besides bootstrap servers, mode, option named, what the message must also say)
CASES = [
    ({}, "batch", "subscribe/subscribePattern/assign", "exactly one"),
    ({"subscribe": "{t}", "subscribePattern": "x.*"},
     "batch", "subscribe/subscribePattern/assign", "exactly one"),
    ({"subscribe": "{t}", "startingOffsets": "latest"}, "batch", "startingOffsets", "'earliest'"),
    ({"subscribe": "{t}", "endingOffsets": "earliest"}, "batch", "endingOffsets", "'latest'"),
    ({"subscribe": "{t}", "endingOffsets": "latest"},
     "stream", "endingOffsets", "only valid for batch"),
    ({"subscribe": "{t}", "startingOffsets": "{{\"{t}\":{{\"0\":0}}}}"},
     "batch", "startingOffsets", "missing {t}-1"),
    ({"subscribe": "{t}", "startingOffsets": "{{\"{t}\":{{\"0\":0,\"1\":0,\"7\":0}}}}"},
     "batch", "startingOffsets", "{t}-7, which do not exist"),
    ({"subscribe": "{t}", "startingOffsets": "sometime"},
     "stream", "startingOffsets", "'earliest', 'latest'"),
    ({"assign": "{{\"{t}\":[0,5]}}"}, "batch", "assign", "{t}-5 do not exist"),
    ({"subscribe": "{t}", "failOnDataLoss": "maybe"},
     "stream", "failOnDataLoss", "'true' or 'false'"),
    ({"subscribe": "{t}", "parallelism": "-3"}, "stream", "parallelism", "positive integer"),
    ({"subscribe": "{t}", "kafka.auto.offset.reset": "earliest"},
     "batch", "kafka.auto.offset.reset", "startingOffsets"),
    ({"subscribe": "{t}", "kafka.value.deserializer": "org.X"},
     "stream", "kafka.value.deserializer", "DataFrame operations"),
    ({"subscribe": "{t}", "kafka.ssl.truststore.location": "/t.jks"},
     "batch", "kafka.ssl.truststore.location", "PEM"),
    ({"subscribe": "{t}", "kafka.fetch.min.bytez": "1"},
     "batch", "kafka.fetch.min.bytez", "librdkafka"),
    ({"subscribe": "{t}", "maxOffsetPerTrigger": "10"},
     "stream", "maxoffsetpertrigger", "maxOffsetsPerTrigger"),
]


def error_text(spark: SparkSession, mode: str, bootstrap: str, options: dict[str, str]) -> str:
    """Run the read and return the text of the error the user would see."""
    if mode == "batch":
        reader = spark.read.format(OUR_FORMAT).option("kafka.bootstrap.servers", bootstrap)
        with pytest.raises(Exception) as caught:
            reader.options(**options).load().collect()
        return str(caught.value)
    reader = spark.readStream.format(OUR_FORMAT).option("kafka.bootstrap.servers", bootstrap)
    try:
        query = reader.options(**options).load().writeStream.format("noop").start()
    except Exception as exc:  # some errors surface when the query is planned
        return str(exc)
    try:
        query.awaitTermination(120)
    except Exception as exc:  # awaitTermination re-raises the query's failure
        return str(exc)
    finally:
        query.stop()
    raise AssertionError("the query should have failed")


@pytest.mark.parametrize(("options", "mode", "option", "words"), CASES)
def test_error_names_the_option(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_name: str,
    options: dict[str, str],
    mode: str,
    option: str,
    words: str,
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    filled = {key: value.format(t=topic_name) for key, value in options.items()}
    text = error_text(spark, mode, kafka_bootstrap, filled)
    assert f"Invalid option '{option}'" in text
    assert words.format(t=topic_name) in text
