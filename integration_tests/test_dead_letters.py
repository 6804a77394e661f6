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

Two limits fail a query rather than lose or repeat a dead letter: a dead letter larger than
the dead-letter topic takes, and a marker longer than Kafka keeps beside an offset.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

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


JSON_IDS = {"valueFormat": "json", "valueSchema": "id BIGINT"}
"""Options of a source whose values are JSON objects with a numeric ``id``."""


def _failure(query: StreamingQuery, timeout_s: float = 120.0) -> str:
    """Wait for ``query`` to fail; return the text of its error (the user's traceback)."""
    try:
        finished = query.awaitTermination(timeout_s)
    except Exception as exc:  # awaitTermination re-raises the query's failure
        return str(exc)
    query.stop()
    raise AssertionError(f"the query did not fail within {timeout_s} s (finished: {finished})")


def test_a_dead_letter_larger_than_the_topic_takes_fails_the_query_naming_both_limits(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    """A bad record larger than the dead-letter topic's ``max.message.bytes`` fails the query.

    The broker refuses the dead letter (``MSG_SIZE_TOO_LARGE``); no retry can succeed, so the
    task fails with a ``DeadLetterWriteError`` naming the topic's limit and the producer's
    (``kafka.message.max.bytes``), and the aborted transaction leaves nothing in the topic.
    The session is ``local[2]``: one failure fails the task, no retries.
    """
    source, dead, table = f"{topic_name}-in", f"{topic_name}-dead", f"dl_{topic_name[2:14]}"
    create_topic(kafka_bootstrap, source, partitions=1)
    create_topic(kafka_bootstrap, dead, partitions=1, config={"max.message.bytes": "2000"})
    big = 10
    records = [
        Record(
            value=b"\xff" + b"x" * 10_000 if i == big else json.dumps({"id": i}).encode(),
            key=b"k%d" % i,
            partition=0,
        )
        for i in range(15)
    ]
    produce(kafka_bootstrap, source, records)
    options = {**JSON_IDS, "deadLetterTopic": dead, "maxOffsetsPerTrigger": "5"}
    query = (
        kafka_stream(spark, kafka_bootstrap, source, **options)
        .select("offset", "value.id")
        .writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    started = time.monotonic()
    error = _failure(query)
    took = time.monotonic() - started

    assert "DeadLetterWriteError" in error, error
    assert f"a dead letter is larger than {dead!r} or the producer accepts" in error, error
    assert "raise the topic's max.message.bytes" in error, error
    assert "'kafka.message.max.bytes'" in error, error
    assert "too large" in error.lower(), "the broker's refusal is quoted"
    assert took < 60, f"a refusal no retry helps took {took:.0f} s to fail the query"
    assert read_all(kafka_bootstrap, dead, "read_committed", 60) == []
    # Batches 0 and 1 (offsets 0-9) committed; batch 2, with the large record, failed whole.
    written = sorted(row.offset for row in spark.table(table).collect())
    assert big not in written
    assert written == list(range(big))


MARKER_PADDING = 1_000_000
"""Records before the ones read: their offsets make each marker interval 18 bytes of JSON."""


def _pad(bootstrap: str, topic: str, count: int) -> None:
    """Append ``count`` empty records to partition 0 of ``topic``, fast (no callbacks)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 100,
            "batch.size": 4_000_000,
            "compression.type": "lz4",
            "queue.buffering.max.messages": 2_000_000,
        }
    )
    for _ in range(count):
        producer.produce(topic, b"", partition=0)
    assert producer.flush(120) == 0, "the padding was not all delivered"


def _marker_length(intervals: list[list[int]]) -> int:
    """Bytes of a version-1 marker of batch 0 holding ``intervals`` (compact, sorted JSON)."""
    document = {"batch": 0, "done": intervals, "version": 1}
    return len(json.dumps(document, separators=(",", ":"), sort_keys=True))


def _committed_marker(bootstrap: str, group: str, topic: str) -> tuple[int, str]:
    """Return the offset and metadata ``group`` has committed on partition 0 of ``topic``."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (committed,) = consumer.committed([TopicPartition(topic, 0)], timeout=30)
    finally:
        consumer.close()
    return committed.offset, committed.metadata or ""


def _dead_letter_offsets(bootstrap: str, topic: str, source: str) -> Counter[int]:
    """Count the committed dead letters (``read_committed``) of partition 0 of ``source``."""
    found: Counter[int] = Counter()
    for letter in read_all(bootstrap, topic, "read_committed", 60):
        headers = dict(letter.headers)
        assert headers[f"{HEADER_PREFIX}topic"] == source.encode()
        assert headers[f"{HEADER_PREFIX}partition"] == b"0"
        found[int(headers[f"{HEADER_PREFIX}offset"])] += 1
    return found


def test_a_marker_past_kafkas_metadata_limit_fails_the_batch_and_commits_nothing_of_its_piece(
    spark: SparkSession, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    """Pieces of one partition leaving more marker intervals than 4,096 bytes hold fail the batch.

    One partition, read from offset 1,000,000 in one batch cut into one-record pieces
    (``maxRecordsPerPartition=1``), every other record bad: each bad piece commits an interval
    of its own (its neighbours, good, commit nothing, so no two intervals touch and merge).
    The piece whose interval would make the marker longer than Kafka's offset metadata limit
    fails with a ``DeadLetterWriteError`` naming both options, before its transaction commits:
    the dead-letter topic holds exactly the dead letters the committed marker records, once.
    A restart with ``maxRecordsPerPartition`` raised (the remedy the error gives) replays the
    batch in one piece and writes the missing dead letters, each once.
    """
    source, dead = f"{topic_name}-in", f"{topic_name}-dead"
    prefix = f"{topic_name}-dl"
    create_topic(kafka_bootstrap, source, partitions=1)
    create_topic(kafka_bootstrap, dead, partitions=1)
    _pad(kafka_bootstrap, source, MARKER_PADDING)
    records = [
        Record(value=b"\xffnot json %d" % i if i % 2 == 0 else b'{"id": %d}' % i, partition=0)
        for i in range(460)
    ]
    offsets = [offset for _, offset in produce(kafka_bootstrap, source, records)]
    bad = offsets[0::2]
    assert offsets[0] >= MARKER_PADDING and offsets[-1] < 10 * MARKER_PADDING, "7-digit offsets"
    # The most intervals of one-offset bad pieces a marker can hold; the next one fails.
    fits = max(
        k for k in range(len(bad) + 1) if _marker_length([[o, o + 1] for o in bad[:k]]) <= 4096
    )
    assert fits < len(bad), "enough bad pieces to pass the limit"
    checkpoint = tmp_path / "checkpoint"

    def start(**options: str) -> StreamingQuery:
        return (
            kafka_stream(
                spark,
                kafka_bootstrap,
                source,
                deadLetterTopic=dead,
                deadLetterTransactionalIdPrefix=prefix,
                startingOffsets=json.dumps({source: {"0": offsets[0]}}),
                **JSON_IDS,
                **options,
            )
            .writeStream.format("noop")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )

    query = start(maxRecordsPerPartition="1")
    error = _failure(query, timeout_s=240)
    assert "DeadLetterWriteError" in error, error
    assert f"the dead-letter marker of batch 0 holds {fits + 1} intervals" in error, error
    assert "more than Kafka keeps beside an offset (4096 bytes)" in error, error
    assert "Raise maxRecordsPerPartition or lower minPartitions" in error, error
    assert _last(checkpoint, "commits") == -1, "the batch did not commit"

    # What is committed is what the marker records: the failing piece aborted its dead letter.
    marker_offset, metadata = _committed_marker(kafka_bootstrap, f"{prefix}-{query.id}", source)
    marker = json.loads(metadata)
    assert marker["batch"] == 0 and len(metadata) <= 4096
    assert len(marker["done"]) == fits, "every piece that fitted committed, none beyond"
    recorded = {o for o in bad if any(s <= o < u for s, u in marker["done"])}
    assert marker_offset == max(u for _, u in marker["done"])
    found = _dead_letter_offsets(kafka_bootstrap, dead, source)
    assert max(found.values()) == 1, "a dead letter written twice"
    assert set(found) == recorded, "the dead letters committed are exactly those the marker holds"
    assert len(found) == fits < len(bad)

    # The remedy the error names: fewer pieces. The replay writes only what is missing.
    query = start(maxRecordsPerPartition="1000")
    run_available_now(query)
    found = _dead_letter_offsets(kafka_bootstrap, dead, source)
    assert set(found) == set(bad) and max(found.values()) == 1
    _, metadata = _committed_marker(kafka_bootstrap, f"{prefix}-{query.id}", source)
    assert json.loads(metadata)["done"] == [[offsets[0], offsets[-1] + 1]]
