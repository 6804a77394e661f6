"""Reused consumers read exactly what fresh ones read, against the real broker.

The range reader is called directly, in this process, as an executor task would call it: a
sequence of tasks with the same settings borrows the same pooled consumer, and every read is
compared with a read of the same ranges by a consumer no task used before (settings with a
group id of its own are a pool key of their own). The topic holds transactions, so range ends
fall on transaction markers (offsets that hold no record) as well as on records.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

from integration_tests.kafka_helpers import create_topic
from kafka_rescalable import consumer_pool
from kafka_rescalable.consumer_pool import ConsumerPool, process_pool
from kafka_rescalable.executor.range_reader import read_ranges
from kafka_rescalable.kafka_clients import _open_executor_consumer
from kafka_rescalable.state import OffsetRange
from kafka_rescalable.task import RangeReadSettings

PARTITIONS = 4
TRANSACTIONS = 4
PER_TRANSACTION = 10  # per partition; each transaction then ends with a marker per partition


def settings(bootstrap: str, group: str) -> RangeReadSettings:
    """Read settings as the driver ships them; small batches, so reads take several polls."""
    return RangeReadSettings(
        consumer_config={"bootstrap.servers": bootstrap, "group.id": group},
        include_headers=False,
        fail_on_data_loss=True,
        poll_timeout_ms=30_000,
        batch_size=7,
    )


def rows(ranges: list[OffsetRange], read_settings: RangeReadSettings) -> list[tuple]:
    """Every row the reader yields for ``ranges``, in order, as (partition, offset, value)."""
    out = []
    for batch in read_ranges(ranges, read_settings):
        for row in batch.to_pylist():
            out.append((row["partition"], row["offset"], row["value"]))
    return out


def fresh(bootstrap: str, ranges: list[OffsetRange]) -> list[tuple]:
    """Return the rows a consumer no task used before reads."""
    return rows(ranges, settings(bootstrap, f"fresh-{uuid.uuid4()}"))


@pytest.fixture(autouse=True)
def own_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[ConsumerPool]:
    """Give each test a pool of its own, closed while the broker is still up."""
    pool = ConsumerPool(_open_executor_consumer)
    monkeypatch.setattr(consumer_pool, "_process_pool", pool)
    yield pool
    pool.close()


@pytest.fixture
def transactional_topic(kafka_bootstrap: str, topic_name: str) -> str:
    """Return a topic of committed transactions; offsets 10, 21, 32 and 43 are markers."""
    create_topic(kafka_bootstrap, topic_name, PARTITIONS)
    producer = Producer(
        {"bootstrap.servers": kafka_bootstrap, "transactional.id": f"tx-{uuid.uuid4()}"}
    )
    producer.init_transactions(30)
    for transaction in range(TRANSACTIONS):
        producer.begin_transaction()
        for partition in range(PARTITIONS):
            for index in range(PER_TRANSACTION):
                value = b"t%d-p%d-%d" % (transaction, partition, index)
                producer.produce(topic_name, value, partition=partition)
        producer.commit_transaction(30)
    return topic_name


def ranges_of(topic: str, spans: dict[int, tuple[int, int]]) -> list[OffsetRange]:
    """Ranges of ``topic`` from ``{partition: (start, until)}``."""
    return [OffsetRange(topic, p, start, until) for p, (start, until) in spans.items()]


def test_a_reused_consumer_reads_what_a_fresh_one_reads(
    kafka_bootstrap: str, transactional_topic: str
) -> None:
    topic = transactional_topic
    end = TRANSACTIONS * (PER_TRANSACTION + 1)  # records and one marker per transaction
    pooled = settings(kafka_bootstrap, f"pooled-{uuid.uuid4()}")
    pool = process_pool(_open_executor_consumer)
    reused_before = pool.reused
    tasks = [
        # Batch 1, two slots: range ends on a record (9) and on a marker (10 is one).
        ranges_of(topic, {0: (0, 10), 1: (0, 11)}),
        ranges_of(topic, {2: (0, 11), 3: (0, 5)}),
        # Batch 2 after a rescale to one slot: every partition in one task.
        ranges_of(topic, {0: (10, 22), 1: (11, 22), 2: (11, 22), 3: (5, 22)}),
        # Batch 3: partition 2 moved to a slot of its own, the rest in another task.
        ranges_of(topic, {2: (22, end)}),
        ranges_of(topic, {0: (22, end), 1: (22, end), 3: (22, 30)}),
        # A retried task: ranges the consumer has already read past.
        ranges_of(topic, {1: (0, 11), 3: (0, 5)}),
        # Two disjoint ranges of one partition in one task (read in two rounds).
        [*ranges_of(topic, {0: (0, 5)}), *ranges_of(topic, {0: (33, end)})],
    ]
    for ranges in tasks:
        got = rows(ranges, pooled)
        # Partitions interleave as their fetches arrive: compare records, each exactly once.
        assert len(set(got)) == len(got)
        assert sorted(got) == sorted(fresh(kafka_bootstrap, ranges))
        expected = {(r.partition, o) for r in ranges for o in range(r.start, r.until)}
        markers = {(p, o) for p, o in expected if o % (PER_TRANSACTION + 1) == PER_TRANSACTION}
        assert {(p, o) for p, o, _v in got} == expected - markers
    assert pool.reused - reused_before == len(tasks) - 1  # every task after the first


def test_after_a_failed_task_the_next_read_is_unchanged(
    kafka_bootstrap: str, transactional_topic: str
) -> None:
    topic = transactional_topic
    pooled = settings(kafka_bootstrap, f"pooled-{uuid.uuid4()}")
    pool = process_pool(_open_executor_consumer)
    whole = ranges_of(topic, {p: (0, 40) for p in range(PARTITIONS)})
    assert rows(whole, pooled)  # leaves a consumer in the pool
    idle_before = pool.idle_count()

    # A task that fails after its first batch, with records fetched and not yet read.
    batches = read_ranges(whole, pooled)
    next(batches)
    with pytest.raises(RuntimeError):
        batches.throw(RuntimeError("the task failed downstream"))
    assert pool.idle_count() == idle_before - 1  # closed, not returned

    # A task closed early (Spark stopping a task) gives up its consumer the same way.
    early = read_ranges(whole, pooled)
    next(early)
    early.close()

    for ranges in (whole, ranges_of(topic, {1: (15, 30)}), ranges_of(topic, {3: (0, 11)})):
        got = rows(ranges, pooled)
        assert len(set(got)) == len(got)
        assert sorted(got) == sorted(fresh(kafka_bootstrap, ranges))
    assert pool.reused >= 3


def test_a_task_of_many_partitions_closes_its_consumer_instead_of_keeping_it(
    kafka_bootstrap: str, transactional_topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limit lowered to 3, so that this topic's 4 partitions are "many".
    monkeypatch.setattr(consumer_pool, "MAX_POOLED_PARTITIONS", 3)
    topic = transactional_topic
    pooled = settings(kafka_bootstrap, f"pooled-{uuid.uuid4()}")
    pool = process_pool(_open_executor_consumer)
    three = ranges_of(topic, {p: (0, 10) for p in range(3)})
    four = ranges_of(topic, {p: (0, 10) for p in range(PARTITIONS)})
    # Read by consumers of their own first, so that the counts below are the pooled reads'.
    expected = {"three": sorted(fresh(kafka_bootstrap, three))}
    expected["four"] = sorted(fresh(kafka_bootstrap, four))

    assert sorted(rows(three, pooled)) == expected["three"]
    kept, opened = pool.idle_count(), pool.opened
    assert sorted(rows(four, pooled)) == expected["four"]
    assert pool.idle_count() == kept - 1  # the consumer the task reused was closed
    assert sorted(rows(three, pooled)) == expected["three"]
    assert pool.opened == opened + 1  # a new one, kept again
    assert pool.idle_count() == kept
