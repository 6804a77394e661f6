"""The driver's offset lookups against a real broker answer as ``AdminClient.list_offsets``.

``KafkaMetadata`` asks through ``Consumer.offsets_for_times`` with Kafka's timestamps -1
(latest) and -2 (earliest). These tests hold it to the lookup it replaced for latest, earliest
and timestamps, also under ``read_committed`` with a transaction still open: the last stable
offset there, the high watermark under ``read_uncommitted``.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Iterator, Mapping

import pytest
from confluent_kafka import IsolationLevel, Producer, TopicCollection
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, OffsetSpec

from integration_tests.kafka_helpers import (
    Record,
    create_topic,
    delete_topic,
    produce,
    wait_for_topic,
)
from kafka_rescalable.config.options import parse_options
from kafka_rescalable.driver.kafka_metadata import KafkaMetadata, LiveTopics
from kafka_rescalable.errors import KafkaMetadataError
from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.batch_boundary import KafkaNow

PARTITIONS = 3
COMMITTED = {0: 4, 1: 3, 2: 5}  # records per partition in the committed transaction
OPEN = {0: 2, 1: 0, 2: 3}  # records per partition in the transaction left open
LEVELS = {
    "read_committed": IsolationLevel.READ_COMMITTED,
    "read_uncommitted": IsolationLevel.READ_UNCOMMITTED,
}


def metadata_for(
    bootstrap: str, topic: str, offsets_per_call: int = 2, **extra: str
) -> KafkaMetadata:
    """Return a client asking 2 partitions per offsets call by default: 3 take two calls."""
    options = parse_options(
        {"kafka.bootstrap.servers": bootstrap, "subscribe": topic, **extra}, "stream"
    )
    return KafkaMetadata(options, timeout_s=10.0, offsets_per_call=offsets_per_call)


def admin_offsets(
    bootstrap: str, specs: Mapping[TopicPartition, OffsetSpec], level: IsolationLevel
) -> dict[TopicPartition, int]:
    """Look offsets up as the connector did before: the replaced lookup."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.list_offsets(
        {KafkaTopicPartition(tp.topic, tp.partition): spec for tp, spec in specs.items()},
        isolation_level=level,
        request_timeout=30,
    )
    return {
        TopicPartition(ktp.topic, ktp.partition): future.result().offset
        for ktp, future in futures.items()
    }


@pytest.fixture
def open_transaction(kafka_bootstrap: str, topic_name: str) -> Iterator[list[TopicPartition]]:
    """Make a topic with one committed transaction and, on top, one left open."""
    create_topic(kafka_bootstrap, topic_name, partitions=PARTITIONS)
    producer = Producer(
        {"bootstrap.servers": kafka_bootstrap, "transactional.id": f"tx-{uuid.uuid4().hex}"}
    )
    producer.init_transactions(30)
    for counts, commit in ((COMMITTED, True), (OPEN, False)):
        producer.begin_transaction()
        for partition, count in counts.items():
            for _ in range(count):
                producer.produce(topic_name, value=b"v", partition=partition)
        producer.flush(30)
        if commit:
            producer.commit_transaction(30)
    try:
        yield [TopicPartition(topic_name, p) for p in range(PARTITIONS)]
    finally:
        producer.abort_transaction(30)


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_latest_and_earliest_match_list_offsets_with_a_transaction_open(
    kafka_bootstrap: str, topic_name: str, open_transaction: list[TopicPartition], level: str
) -> None:
    # Each committed transaction ends with a commit marker that takes an offset.
    stable = {tp: COMMITTED[tp.partition] + 1 for tp in open_transaction}
    high = {tp: stable[tp] + OPEN[tp.partition] for tp in open_transaction}
    assert stable != high, "the open transaction must hold records in some partition"
    with metadata_for(kafka_bootstrap, topic_name, **{"kafka.isolation.level": level}) as kafka:
        latest = kafka.latest(open_transaction)
        earliest = kafka.earliest(open_transaction)
    assert latest == (stable if level == "read_committed" else high)
    assert latest == admin_offsets(
        kafka_bootstrap, dict.fromkeys(open_transaction, OffsetSpec.latest()), LEVELS[level]
    )
    assert earliest == {tp: 0 for tp in open_transaction}
    assert earliest == admin_offsets(
        kafka_bootstrap, dict.fromkeys(open_transaction, OffsetSpec.earliest()), LEVELS[level]
    )


def test_without_isolation_level_the_end_is_the_high_watermark(
    kafka_bootstrap: str, topic_name: str, open_transaction: list[TopicPartition]
) -> None:
    """As Java's client and Spark: read_uncommitted unless set (librdkafka's default differs)."""
    with metadata_for(kafka_bootstrap, topic_name) as kafka:
        latest = kafka.latest(open_transaction)
    assert latest == {
        tp: COMMITTED[tp.partition] + 1 + OPEN[tp.partition] for tp in open_transaction
    }


def test_earliest_follows_deleted_records(kafka_bootstrap: str, topic_name: str) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    records = [Record(b"v", partition=p) for p in (0, 1) for _ in range(6)]
    produce(kafka_bootstrap, topic_name, records)
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    deleted = admin.delete_records([KafkaTopicPartition(topic_name, 1, 4)], request_timeout=30)
    for future in deleted.values():
        future.result(30)
    tps = [TopicPartition(topic_name, p) for p in (0, 1)]
    with metadata_for(kafka_bootstrap, topic_name) as kafka:
        earliest = kafka.earliest(tps)
    assert earliest == {tps[0]: 0, tps[1]: 4}
    assert earliest == admin_offsets(
        kafka_bootstrap, dict.fromkeys(tps, OffsetSpec.earliest()), IsolationLevel.READ_UNCOMMITTED
    )


def test_offsets_for_times_match_list_offsets(kafka_bootstrap: str, topic_name: str) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    base = 1_700_000_000_000
    produce(
        kafka_bootstrap,
        topic_name,
        [Record(b"v", partition=p, timestamp_ms=base + 1000 * i) for p in (0, 1) for i in range(5)],
    )
    a, b = TopicPartition(topic_name, 0), TopicPartition(topic_name, 1)
    times = {a: base + 2500, b: base + 60_000}  # b: after every record
    with metadata_for(kafka_bootstrap, topic_name) as kafka:
        found = kafka.offsets_for_times(times)
    assert found == {a: 3, b: -1}
    specs = {tp: OffsetSpec.for_timestamp(ms) for tp, ms in times.items()}
    assert found == admin_offsets(kafka_bootstrap, specs, IsolationLevel.READ_UNCOMMITTED)


def test_a_failed_partition_is_named(kafka_bootstrap: str, topic_name: str) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=1)
    with (
        metadata_for(kafka_bootstrap, topic_name, **{"fetchOffset.numRetries": "0"}) as kafka,
        pytest.raises(KafkaMetadataError, match=f"{topic_name}-7"),
    ):
        kafka.latest([TopicPartition(topic_name, 0), TopicPartition(topic_name, 7)])


def test_one_client_serves_every_batch(kafka_bootstrap: str, topic_name: str) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(kafka_bootstrap, topic_name, [Record(b"v", partition=0)])
    options = parse_options(
        {"kafka.bootstrap.servers": kafka_bootstrap, "subscribe": topic_name}, "stream"
    )
    with KafkaMetadata(options) as kafka:
        client = kafka._connection.client()
        for _ in range(3):
            live = kafka.partitions(options.subscription)
            assert kafka.latest(live) == {
                TopicPartition(topic_name, 0): 1,
                TopicPartition(topic_name, 1): 0,
            }
        assert kafka._connection.client() is client
    with pytest.raises(KafkaMetadataError, match="closed"):
        kafka.latest(live)


@pytest.mark.parametrize("offsets_per_call", [1, 2, 500])
def test_a_lookup_split_into_calls_answers_every_partition(
    kafka_bootstrap: str, topic_name: str, offsets_per_call: int
) -> None:
    create_topic(kafka_bootstrap, topic_name, partitions=5)
    produce(
        kafka_bootstrap,
        topic_name,
        [Record(b"v", partition=p) for p in range(5) for _ in range(p + 1)],
    )
    tps = [TopicPartition(topic_name, p) for p in range(5)]
    with metadata_for(kafka_bootstrap, topic_name, offsets_per_call) as kafka:
        latest = kafka.latest(tps)
        earliest = kafka.earliest(tps[::-1])
    assert latest == {tp: tp.partition + 1 for tp in tps}
    assert earliest == {tp: 0 for tp in tps}
    # Answered in the order asked, even spread over connections: keyed by the very objects
    # asked for, which the planning's other maps share (new keys cost it a lookup by value).
    assert all(map(operator.is_, latest, tps))
    assert all(map(operator.is_, earliest, tps[::-1]))


def _as_found(found: LiveTopics, now: KafkaNow) -> tuple[LiveTopics, KafkaNow]:
    """Keep what Kafka answered, as a plan, to look at it."""
    return found, now


def test_look_up_sees_a_topic_re_created_between_batches(
    kafka_bootstrap: str, topic_name: str
) -> None:
    """The ids checked after one batch stand for the next one's; a new id must still show.

    A topic re-created between two batches is planned with the old id and the new offsets;
    the check sent after those offsets (what the reader's ``partitions`` waits for, before
    any task reads) shows the new id, and the batch after plans with it.
    """
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produce(kafka_bootstrap, topic_name, [Record(b"v", partition=1)] * 3)
    with metadata_for(kafka_bootstrap, topic_name) as kafka:
        subscription = kafka._options.subscription
        found, now = kafka.look_up_and_plan(subscription, _as_found)
        held = kafka.checked()
        again, _ = kafka.look_up_and_plan(subscription, _as_found)
        kafka.checked()  # as the batch's partitions() does, before the topic goes
        delete_topic(kafka_bootstrap, topic_name)
        create_topic(kafka_bootstrap, topic_name, partitions=2)
        wait_for_topic(kafka_bootstrap, topic_name, 2)
        across, later = kafka.look_up_and_plan(subscription, _as_found)
        checked = kafka.checked()
        after, _ = kafka.look_up_and_plan(subscription, _as_found)
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    described = admin.describe_topics(TopicCollection([topic_name]), request_timeout=30)
    new_id = str(described[topic_name].result().topic_id)
    assert now.latest == {TopicPartition(topic_name, 0): 0, TopicPartition(topic_name, 1): 3}
    assert held is not None and held.topic_ids == found.topic_ids == again.topic_ids
    assert across.topic_ids == found.topic_ids, "planned from the check before the deletion"
    assert later.latest == {TopicPartition(topic_name, 0): 0, TopicPartition(topic_name, 1): 0}
    assert checked is not None and checked.topic_ids == {topic_name: new_id} != found.topic_ids
    assert after.topic_ids == {topic_name: new_id}


def test_look_up_sees_new_partitions_and_a_named_topic_one_batch_later(
    kafka_bootstrap: str, topic_name: str
) -> None:
    """What is created while a batch is planned joins the batch after the next one.

    ``subscribe`` lists no topics: the description read after a batch's offsets is the next
    batch's partition list.
    """
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    absent = f"{topic_name}-later"
    options = parse_options(
        {"kafka.bootstrap.servers": kafka_bootstrap, "subscribe": f"{topic_name},{absent}"},
        "stream",
    )
    with KafkaMetadata(options, timeout_s=10.0) as kafka:
        subscription = options.subscription
        first, _ = kafka.look_up_and_plan(subscription, _as_found)
        kafka.checked()  # as the batch's partitions() does
        admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
        admin.create_partitions([NewPartitions(topic_name, 3)])[topic_name].result(30)
        wait_for_topic(kafka_bootstrap, topic_name, 3)
        create_topic(kafka_bootstrap, absent, partitions=1)
        planned_before, _ = kafka.look_up_and_plan(subscription, _as_found)
        seen, now = kafka.look_up_and_plan(subscription, _as_found)
    old = {TopicPartition(topic_name, p) for p in range(2)}
    everything = old | {TopicPartition(topic_name, 2), TopicPartition(absent, 0)}
    assert first.missing == (absent,) and first.partitions == old
    assert planned_before.partitions == old, "planned from the check after the last batch"
    assert seen.partitions == everything and seen.missing == ()
    assert set(seen.topic_ids) == {topic_name, absent}
    assert now.latest == dict.fromkeys(everything, 0)
