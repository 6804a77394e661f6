"""The Kafka sink against a real broker: same records as Spark's sink, and retries written once."""

from __future__ import annotations

import subprocess
import threading
import time
from collections import Counter

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.utils import AnalysisException, PythonException

from integration_tests.kafka_helpers import create_topic, read_all
from integration_tests.query_process import start_query_process
from integration_tests.sink_query import RETRY_ROWS
from kafka_rescalable.errors import KafkaWriteError
from kafka_rescalable.sink.options import KafkaSinkOptions, parse
from kafka_rescalable.sink.rows import SinkColumns
from kafka_rescalable.sink.transactions import SinkTask, write_exactly_once


@pytest.mark.pyspark_versions
def test_records_equal_what_the_builtin_sink_writes(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    ours, theirs = f"{topic_name}-ours", f"{topic_name}-builtin"
    for topic in (ours, theirs):
        create_topic(kafka_bootstrap, topic, partitions=3)
    rows = spark.range(600, numPartitions=3).selectExpr(
        "CASE WHEN id % 7 = 0 THEN NULL ELSE CAST(id % 50 AS STRING) END AS key",
        "CAST(concat('v', id) AS BINARY) AS value",
        "CASE WHEN id % 5 = 0 THEN CAST(id % 3 AS INT) END AS partition",
        "CASE WHEN id % 2 = 0 THEN array("
        " named_struct('key', 'h', 'value', CAST(CAST(id AS STRING) AS BINARY)),"
        " named_struct('key', 'h', 'value', CAST(NULL AS BINARY))) END AS headers",
        "id",
    )
    # Spark's sink sends a null key to the sticky partitioner, ours to a random one: keyless
    # rows must name their partition for the placements to be comparable.
    rows = rows.where("key IS NOT NULL OR partition IS NOT NULL")
    for fmt, topic in (("kafka-rescalable", ours), ("kafka", theirs)):
        (
            rows.drop("id")
            .write.format(fmt)
            .option("kafka.bootstrap.servers", kafka_bootstrap)
            .option("topic", topic)
            .mode("append")
            .save()
        )

    def placed(topic: str) -> Counter:
        return Counter(
            (r.partition, r.key, r.value, r.headers) for r in read_all(kafka_bootstrap, topic)
        )

    expected = placed(theirs)
    assert sum(expected.values()) == rows.count()
    assert placed(ours) == expected


@pytest.mark.pyspark_versions
def test_refused_input_fails_at_save_naming_the_column(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str
) -> None:
    frame = spark.range(3).selectExpr("id AS value")
    with pytest.raises((AnalysisException, PythonException), match="column 'value' has type"):
        frame.write.format("kafka-rescalable").option(
            "kafka.bootstrap.servers", kafka_bootstrap
        ).option("topic", topic_name).mode("append").save()
    with pytest.raises((AnalysisException, PythonException), match="deliveryGuarantee"):
        spark.range(3).selectExpr("CAST(id AS STRING) AS value").write.format(
            "kafka-rescalable"
        ).option("kafka.bootstrap.servers", kafka_bootstrap).option("topic", topic_name).option(
            "deliveryGuarantee", "exactly_once"
        ).mode("append").save()


def _batches(topic: str, values: range) -> list[pa.RecordBatch]:
    text = [str(v) for v in values]
    return [pa.RecordBatch.from_pydict({"value": text, "key": text})]


def _exactly_once_to(bootstrap: str, topic: str) -> tuple[KafkaSinkOptions, SinkColumns]:
    """Create ``topic`` and return exactly-once options and ``key``/``value`` columns for it."""
    create_topic(bootstrap, topic, partitions=2)
    options = parse({"kafka.bootstrap.servers": bootstrap, "deliveryGuarantee": "exactly-once"})
    return options, SinkColumns(has_key=True, topic=topic)


def test_a_second_attempt_after_the_commit_writes_nothing(
    kafka_bootstrap: str, topic_name: str
) -> None:
    options, columns = _exactly_once_to(kafka_bootstrap, topic_name)
    first = write_exactly_once(
        options, columns, SinkTask("q", 4, 1, attempt=0), _batches(topic_name, range(100))
    )
    again = write_exactly_once(
        options, columns, SinkTask("q", 4, 1, attempt=1), _batches(topic_name, range(100))
    )
    replay_of_older = write_exactly_once(
        options, columns, SinkTask("q", 3, 1, attempt=0), _batches(topic_name, range(100))
    )
    next_batch = write_exactly_once(
        options, columns, SinkTask("q", 5, 1, attempt=0), _batches(topic_name, range(100, 150))
    )
    assert (first.records, first.already_committed) == (100, False)
    assert again.already_committed and again.records == 0
    assert replay_of_older.already_committed
    assert next_batch.records == 50
    values = sorted(int(r.value) for r in read_all(kafka_bootstrap, topic_name))
    assert values == list(range(150))


@pytest.mark.parametrize("pause_s", [0.0, 3.0], ids=["at-once", "after-a-refused-record"])
def test_a_speculative_attempt_fences_the_one_still_writing(
    kafka_bootstrap: str, topic_name: str, pause_s: float
) -> None:
    """The fenced attempt fails saying so, and only the speculative one's rows count.

    With ``pause_s``, the fenced attempt writes one more record and waits: Kafka refuses that
    record as fenced and librdkafka makes the producer fatal, so the next record is refused
    with a bare "Local: Fatal error"; the task must still say it was fenced.
    """
    options, columns = _exactly_once_to(kafka_bootstrap, topic_name)
    half_written = threading.Event()
    resume = threading.Event()
    outcome: list[object] = []

    def slow_batches():
        yield from _batches(topic_name, range(0, 100))
        half_written.set()
        resume.wait(60)
        if pause_s:
            yield from _batches(topic_name, range(100, 101))
            time.sleep(pause_s)  # the fenced record's produce request is answered meanwhile
            yield from _batches(topic_name, range(101, 200))
        else:
            yield from _batches(topic_name, range(100, 200))

    def first_attempt() -> None:
        try:
            task = SinkTask("q", 0, 0)
            outcome.append(write_exactly_once(options, columns, task, slow_batches()))
        except KafkaWriteError as error:
            outcome.append(error)

    zombie = threading.Thread(target=first_attempt)
    zombie.start()
    assert half_written.wait(60)
    speculative = write_exactly_once(
        options, columns, SinkTask("q", 0, 0, attempt=1), _batches(topic_name, range(200))
    )
    resume.set()
    zombie.join(120)
    assert speculative.records == 200 and not speculative.already_committed
    assert len(outcome) == 1 and isinstance(outcome[0], KafkaWriteError), outcome
    assert "fenced" in str(outcome[0]).lower()
    values = sorted(int(r.value) for r in read_all(kafka_bootstrap, topic_name))
    assert values == list(range(200))


def test_a_task_killed_and_retried_writes_its_rows_once(
    kafka_bootstrap: str, topic_name: str
) -> None:
    exactly, at_least = f"{topic_name}-eo", f"{topic_name}-alo"
    for topic in (exactly, at_least):
        create_topic(kafka_bootstrap, topic, partitions=2)
    process = start_query_process(
        "integration_tests.sink_query",
        ["retry", kafka_bootstrap, exactly, at_least],
        output=subprocess.PIPE,
    )
    output, _ = process.communicate(timeout=300)
    text = output.decode(errors="replace")
    assert process.returncode == 0, text[-3000:]
    assert "retry: both writes done" in text
    assert "exited unexpectedly" in text, "no attempt was killed: the test would prove nothing"

    def counts(topic: str) -> Counter:
        return Counter(int(r.value) for r in read_all(kafka_bootstrap, topic))

    written_once = counts(exactly)
    assert set(written_once) == set(range(RETRY_ROWS))
    assert max(written_once.values()) == 1
    # The same failure under at-least-once leaves the killed attempt's rows in Kafka too:
    # the check above can fail.
    written_again = counts(at_least)
    assert set(written_again) == set(range(RETRY_ROWS))
    assert sum(written_again.values()) > RETRY_ROWS


@pytest.mark.pyspark_versions
def test_a_refused_option_fails_a_stream_at_start(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path
) -> None:
    stream = spark.readStream.format("rate").load().selectExpr("CAST(value AS STRING) AS value")
    writer = (
        stream.writeStream.format("kafka-rescalable")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", topic_name)
        .option("kafka.acks", "1")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
    )
    with pytest.raises(Exception, match="kafka.acks") as refused:
        query = writer.start()
        query.awaitTermination(60)  # a refusal may surface with the first batch
        query.stop()
    assert "needs 'all'" in str(refused.value)
