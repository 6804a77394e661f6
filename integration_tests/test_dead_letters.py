"""Dead letters exactly once across a SIGKILL: raw, with their headers, never in the output.

A topic mixes JSON records that decode with some that do not (text that is no JSON, an id
that is no number). A query (``integration_tests.dead_letter_query``) reads it with
``deadLetterTopic`` into our exactly-once sink. The test SIGKILLs the query's process when a
micro-batch's dead letters are committed but the batch is not (``commits/N`` missing): the
restart replays that batch, and must not write its dead letters again. It also replays them
in tasks that share a partition (``minPartitions`` above the partition count), whose commits
fence each other.

A ``read_committed`` reader then finds every bad record once in the dead-letter topic, with
its raw key, value and headers and ours, none in the output, and every good record once in
the output.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from integration_tests.kafka_helpers import Record, create_topic, produce, read_all
from integration_tests.query_process import start_query_process, stop_query_process
from integration_tests.spark_helpers import (
    OUR_FORMAT,
    batch_read,
    kafka_stream,
    run_available_now,
    wait_until,
)
from kafka_rescalable.state.dead_letters import HEADER_PREFIX

PARTITIONS = 2
RECORDS = 800
TRIES = 3
"""Kills to redo when the batch committed between the watcher's look and the kill."""


def _record(i: int) -> Record:
    if i % 9 == 4:
        value = b"\xffnot json %d" % i
    elif i % 9 == 7:
        value = b'{"id": "not a number %d"}' % i
    else:
        value = json.dumps({"id": i}).encode()
    return Record(
        value=value,
        key=b"k%d" % i,
        headers=(("trace", b"t%d" % i),),
        timestamp_ms=1_700_000_000_000 + i,
        partition=i % PARTITIONS,
    )


def _bad(i: int) -> bool:
    return i % 9 in (4, 7)


def _last(checkpoint: Path, log: str) -> int:
    folder = checkpoint / log
    if not folder.is_dir():
        return -1
    return max((int(p.name) for p in folder.iterdir() if p.name.isdigit()), default=-1)


class _DeadLetterWatch:
    """Reads the dead-letter topic as it grows (``read_committed``): the batches it holds."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.batches: set[int] = set()
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "dead-letter-watch",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        self._consumer.assign(
            [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)]
        )

    def poll(self) -> set[int]:
        """Read what arrived; return the batch ids seen so far."""
        for message in self._consumer.consume(500, timeout=0.05):
            if message.error() is None:
                headers = dict(message.headers() or ())
                self.batches.add(int(headers[f"{HEADER_PREFIX}batch.id"]))
        return self.batches

    def close(self) -> None:
        """Close the consumer."""
        self._consumer.close()


def _kill_after_dead_letters(
    process: subprocess.Popen[bytes], watch: _DeadLetterWatch, checkpoint: Path, log: Path
) -> int | None:
    """SIGKILL once a batch's dead letters are committed and the batch is not; return it.

    ``None`` when Spark committed the batch between the last look and the kill.
    """
    deadline = time.monotonic() + 240
    try:
        while True:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-3000:]
                raise AssertionError(f"the query process exited ({process.returncode}):\n{tail}")
            committed = _last(checkpoint, "commits")
            open_batches = [b for b in watch.poll() if b > committed and b >= 1]
            if open_batches:
                break
            assert time.monotonic() < deadline, "no batch with committed dead letters in 240 s"
            time.sleep(0.02)
    finally:
        stop_query_process(process, grace_s=None)
    batch = min(open_batches)
    return batch if _last(checkpoint, "commits") < batch else None


def test_dead_letters_are_written_once_across_a_kill_and_never_reach_the_output(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    source, dead, output = (f"{topic_name}-{name}" for name in ("in", "dead", "out"))
    for topic in (source, dead, output):
        create_topic(kafka_bootstrap, topic, partitions=PARTITIONS)
    records = [_record(i) for i in range(RECORDS)]
    positions = produce(kafka_bootstrap, source, records)
    by_position = dict(zip(positions, range(RECORDS), strict=True))
    bad = {p for p, i in by_position.items() if _bad(i)}
    good = set(by_position) - bad
    checkpoint, log = tmp_path / "checkpoint", tmp_path / "query.log"
    arguments = [kafka_bootstrap, source, dead, output, str(checkpoint)]

    watch = _DeadLetterWatch(kafka_bootstrap, dead)
    try:
        for _ in range(TRIES):
            with log.open("ab") as out:
                process = start_query_process("integration_tests.dead_letter_query", arguments, out)
            killed_in = _kill_after_dead_letters(process, watch, checkpoint, log)
            if killed_in is not None:
                break
        else:
            raise AssertionError(f"{TRIES} kills all came after their batch committed")
    finally:
        watch.close()
    assert _last(checkpoint, "offsets") >= killed_in > _last(checkpoint, "commits")

    with log.open("ab") as out:
        process = start_query_process("integration_tests.dead_letter_query", arguments, out)
    try:
        wait_until(
            lambda: (
                process.poll() is None
                and len(read_all(kafka_bootstrap, output, "read_committed", 60)) >= len(good)
                and len(read_all(kafka_bootstrap, dead, "read_committed", 60)) >= len(bad)
            ),
            "every good record in the output and every bad one in the dead-letter topic",
            timeout_s=240,
            interval_s=3,
        )
        assert _last(checkpoint, "commits") > killed_in, "the killed batch was replayed"
    finally:
        stop_query_process(process, grace_s=None)

    letters = read_all(kafka_bootstrap, dead, "read_committed", 60)
    found = Counter()
    for letter in letters:
        headers = dict(letter.headers)
        position = (
            int(headers[f"{HEADER_PREFIX}partition"]),
            int(headers[f"{HEADER_PREFIX}offset"]),
        )
        found[position] += 1
        original = records[by_position[position]]
        assert (letter.key, letter.value) == (original.key, original.value)
        assert letter.headers[0] == original.headers[0], "the record's own headers come first"
        assert headers[f"{HEADER_PREFIX}topic"] == source.encode()
        assert int(headers[f"{HEADER_PREFIX}timestamp"]) == original.timestamp_ms
        assert headers[f"{HEADER_PREFIX}reason"].startswith(b"value: ")
    twice = sorted(p for p, n in found.items() if n > 1)
    assert not twice, f"dead letters written twice: {twice[:10]}"
    assert set(found) == bad

    written = Counter()
    for row in read_all(kafka_bootstrap, output, "read_committed", 60):
        partition, offset, record_id = row.value.decode().split(":")
        position = (int(partition), int(offset))
        assert int(record_id) == by_position[position]
        written[position] += 1
    assert not set(written) & bad, "a record that did not decode reached the output"
    assert set(written) == good and max(written.values()) == 1


def test_a_batch_read_twice_by_foreach_batch_writes_each_dead_letter_once(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    """A second read of a batch finds the first's marker and writes no dead letter again.

    ``foreachBatch`` reading its DataFrame twice reads each batch twice. Also: the reason is
    ``decodeError``'s, and ``spark.read`` refuses the option, saying what to use instead.
    """
    source, dead = f"{topic_name}-in", f"{topic_name}-dead"
    create_topic(kafka_bootstrap, source, partitions=PARTITIONS)
    create_topic(kafka_bootstrap, dead, partitions=1)
    records = [_record(i) for i in range(60)]
    positions = produce(kafka_bootstrap, source, records)
    bad = {p for p, i in zip(positions, range(60), strict=True) if _bad(i)}
    options = {"valueFormat": "json", "valueSchema": "id BIGINT"}
    reads: list[list[tuple[int, int]]] = []

    def twice(batch: DataFrame, _batch_id: int) -> None:
        for _ in range(2):
            reads.append(sorted((r.partition, r.offset) for r in batch.collect()))

    query = (
        kafka_stream(
            spark,
            kafka_bootstrap,
            source,
            deadLetterTopic=dead,
            maxOffsetsPerTrigger="25",
            **options,
        )
        .writeStream.foreachBatch(twice)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    run_available_now(query)

    assert reads[0::2] == reads[1::2], "both reads of a batch see the same records"
    assert sorted(p for read in reads[0::2] for p in read) == sorted(set(positions) - bad)
    letters = read_all(kafka_bootstrap, dead, "read_committed", 60)
    reasons = {
        (
            int(dict(letter.headers)[f"{HEADER_PREFIX}partition"]),
            int(dict(letter.headers)[f"{HEADER_PREFIX}offset"]),
        ): dict(letter.headers)[f"{HEADER_PREFIX}reason"].decode()
        for letter in letters
    }
    assert len(letters) == len(bad) and set(reasons) == bad
    permissive = batch_read(
        spark, OUR_FORMAT, kafka_bootstrap, source, mode="PERMISSIVE", **options
    )
    assert reasons == {
        (row.partition, row.offset): row.decodeError
        for row in permissive.where("decodeError IS NOT NULL").collect()
    }

    with pytest.raises(PySparkException) as refused:
        batch_read(
            spark, OUR_FORMAT, kafka_bootstrap, source, deadLetterTopic=dead, **options
        ).collect()
    assert "'deadLetterTopic'" in str(refused.value) and "readStream" in str(refused.value)
