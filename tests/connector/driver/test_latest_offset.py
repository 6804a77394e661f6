"""``latestOffset`` as Spark calls it: fetch, plan, serialize, with Kafka's answers given.

The planner's decisions have their own property tests (``tests/state/test_batch_boundary.py``);
these check the wiring: what the reader asks Kafka, what it hands back to Spark (the very
``start`` object when there is no batch), and what it shows in the query progress.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping
from typing import TypeVar

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from kafka_rescalable.config.options import parse_options
from kafka_rescalable.driver.kafka_metadata import LiveTopics
from kafka_rescalable.driver.stream_reader import KafkaStreamReader
from kafka_rescalable.errors import DataLossError, MissingTopicError
from kafka_rescalable.executor.tasks import read_input_partition
from kafka_rescalable.state import OffsetState, PartitionOffset, SlotsDocument, TopicPartition
from kafka_rescalable.state.batch_boundary import KafkaNow

_T = TypeVar("_T")

P0, P1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


class KafkaAnswers:
    """What the brokers answer at one batch boundary: set by each test, recorded when asked."""

    def __init__(
        self,
        latest: Mapping[TopicPartition, int],
        topic_id: str = "ID1",
        earliest: int = 0,
        missing: tuple[str, ...] = (),
    ) -> None:
        self.latest = dict(latest)
        self.topic_id = topic_id
        self.earliest_offset = earliest
        self.missing = missing
        self.earliest_asked: list[list[TopicPartition]] = []
        self.id_after = topic_id  # what the check sent after the offsets answers
        self.checks = 0
        self.sent = 0

    def send_check(self) -> None:
        """Record that the id check was sent, as :meth:`KafkaMetadata.send_check` sends it."""
        self.sent += 1

    def checked(self) -> LiveTopics:
        """Answer as :meth:`KafkaMetadata.checked`: the ids read after the last offsets."""
        self.checks += 1
        partitions = frozenset(self.latest)
        return LiveTopics(partitions, {tp.topic: self.id_after for tp in partitions})

    def look_up_and_plan(self, subscription: object, plan: Callable[..., _T]) -> _T:
        """Answer as :meth:`KafkaMetadata.look_up_and_plan`, ids unchanged: plan once."""
        partitions = frozenset(self.latest)
        ids = {tp.topic: self.topic_id for tp in partitions}
        return plan(
            LiveTopics(partitions, ids, self.missing), KafkaNow(partitions, ids, self.latest)
        )

    def earliest(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """Answer as :meth:`KafkaMetadata.earliest`, recording what was asked."""
        self.earliest_asked.append(list(partitions))
        return {tp: self.earliest_offset for tp in partitions}

    def close(self) -> None:
        """Nothing to close: no connection was made."""


def reader(kafka: KafkaAnswers, **options: str) -> KafkaStreamReader:
    raw = {"kafka.bootstrap.servers": "localhost:9", "subscribe": "orders", **options}
    stream = KafkaStreamReader(parse_options(raw, "stream"), read_input_partition)
    stream._metadata = kafka  # type: ignore[assignment]  # the brokers' answers
    return stream


def start_of(offsets: Mapping[TopicPartition, int], topic_id: str = "ID1") -> dict:
    slots = [[PartitionOffset(tp.topic, tp.partition, o)] for tp, o in offsets.items()]
    state = OffsetState.of(slots)
    return SlotsDocument(state, topic_ids={"orders": topic_id}).to_dict()


def offsets_in(document: dict) -> dict[int, int]:
    state = SlotsDocument.from_dict(document).state
    return {tp.partition: offset for tp, offset in state.offsets().items()}


def ids_in(document: dict) -> dict[str, str]:
    """Return the topic ids of a document, wherever its layout keeps them."""
    return dict(SlotsDocument.from_dict(document).topic_ids)


def test_a_batch_ends_at_the_latest_offsets_and_progress_shows_them() -> None:
    kafka = KafkaAnswers({P0: 10, P1: 4})
    stream = reader(kafka)
    end = stream.latestOffset(start_of({P0: 2, P1: 4}), ReadAllAvailable())
    assert offsets_in(end) == {0: 10, 1: 4}
    assert ids_in(end) == {"orders": "ID1"}
    report = stream.reportLatestOffset()
    assert report == {
        "latest": {"orders": {"0": 10, "1": 4}},
        "backlog": {
            "total": 0,
            "perSlot": [0, 0],
            "perPartition": {"min": 0, "max": 0, "avg": 0.0},
        },
    }
    assert kafka.earliest_asked == [[]], "no partition joins: no earliest offset is needed"


def test_nothing_new_hands_spark_back_its_own_start() -> None:
    stream = reader(KafkaAnswers({P0: 5, P1: 4}))
    start = start_of({P0: 5, P1: 4})
    assert stream.latestOffset(start, ReadAllAvailable()) is start


def test_the_row_cap_is_shared_and_the_rest_stays_as_backlog() -> None:
    stream = reader(KafkaAnswers({P0: 100, P1: 100}), maxOffsetsPerTrigger="10")
    end = stream.latestOffset(start_of({P0: 0, P1: 0}), ReadMaxRows(10))
    assert offsets_in(end) == {0: 5, 1: 5}
    assert stream.reportLatestOffset()["backlog"]["total"] == 190


def test_below_the_minimum_the_trigger_is_skipped() -> None:
    stream = reader(KafkaAnswers({P0: 5, P1: 4}), minOffsetsPerTrigger="100", maxTriggerDelay="1h")
    stream._last_trigger_ms = 1e15  # the last batch was just now
    start = start_of({P0: 0, P1: 4})
    assert stream.latestOffset(start, ReadMaxRows(2**63 - 1)) is start


def test_a_new_partition_joins_at_its_earliest_offset() -> None:
    kafka = KafkaAnswers({P0: 5, P1: 9}, earliest=3)
    stream = reader(kafka)
    end = stream.latestOffset(start_of({P0: 5}), ReadAllAvailable())
    assert offsets_in(end) == {0: 5, 1: 3}
    assert kafka.earliest_asked == [[P1]]


def test_a_recreated_topic_fails_the_batch_under_fail_on_data_loss() -> None:
    stream = reader(KafkaAnswers({P0: 50}, topic_id="ID2"))
    with pytest.raises(DataLossError, match=r"orders \(id ID1 -> ID2\) was deleted and re-created"):
        stream.latestOffset(start_of({P0: 7}), ReadAllAvailable())


def test_a_recreated_topic_restarts_at_its_earliest_offset_otherwise() -> None:
    stream = reader(KafkaAnswers({P0: 50}, topic_id="ID2", earliest=0), failOnDataLoss="false")
    end = stream.latestOffset(start_of({P0: 7}), ReadAllAvailable())
    assert offsets_in(end) == {0: 0}
    assert ids_in(end) == {"orders": "ID2"}


def test_a_batch_reads_nothing_of_a_topic_re_created_after_its_offsets() -> None:
    """The ids read after the offsets are waited for in ``partitions``, before any task."""
    kafka = KafkaAnswers({P0: 50, P1: 9})
    stream = reader(kafka, failOnDataLoss="false")
    start = start_of({P0: 7, P1: 3})
    end = stream.latestOffset(start, ReadAllAvailable())
    assert kafka.sent == kafka.checks == 0, "latestOffset does not wait for the check"
    stream.reportLatestOffset()
    assert (kafka.sent, kafka.checks) == (1, 0), "sent, not waited for"
    kafka.id_after = "ID2"
    tasks = stream.partitions(json.loads(json.dumps(start)), json.loads(json.dumps(end)))
    assert kafka.checks == 1
    assert [(r.partition, r.start, r.until) for t in tasks for r in t.ranges] == []


def test_a_topic_re_created_after_the_offsets_fails_the_batch_under_fail_on_data_loss() -> None:
    kafka = KafkaAnswers({P0: 50})
    stream = reader(kafka)
    start = start_of({P0: 7})
    end = stream.latestOffset(start, ReadAllAvailable())
    kafka.id_after = "ID2"
    with pytest.raises(DataLossError, match=r"orders \(id ID1 -> ID2\) was deleted and re-created"):
        stream.partitions(json.loads(json.dumps(start)), json.loads(json.dumps(end)))


def test_a_batch_whose_ids_held_reads_its_ranges() -> None:
    kafka = KafkaAnswers({P0: 50, P1: 9})
    stream = reader(kafka)
    start = start_of({P0: 7, P1: 3})
    end = stream.latestOffset(start, ReadAllAvailable())
    tasks = stream.partitions(json.loads(json.dumps(start)), json.loads(json.dumps(end)))
    ranges = sorted((r.partition, r.start, r.until) for t in tasks for r in t.ranges)
    assert ranges == [(0, 7, 50), (1, 3, 9)]
    assert kafka.checks == 1


def test_a_typo_fails_once_missing_topic_timeout_has_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr("kafka_rescalable.driver.stream_reader.time.monotonic", lambda: clock[0])
    stream = reader(
        KafkaAnswers({P0: 5}, missing=("ordres",)),
        subscribe="orders,ordres",
        missingTopicTimeout="30s",
    )
    start = start_of({P0: 5})
    stream.latestOffset(start, ReadAllAvailable())
    clock[0] += 31
    with pytest.raises(MissingTopicError, match="ordres"):
        stream.latestOffset(start, ReadAllAvailable())


class StartAnswers:
    """What the brokers answer when a query starts: its partitions and their ends."""

    def __init__(self, ends: Mapping[TopicPartition, int]) -> None:
        self.ends = dict(ends)
        self.asked = 0

    def live(self, subscription: object, with_ids: bool = False) -> LiveTopics:
        """Answer as :meth:`KafkaMetadata.live`, counting the calls."""
        self.asked += 1
        return LiveTopics(frozenset(self.ends), {tp.topic: "ID1" for tp in self.ends}, ())

    def latest(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """Answer as :meth:`KafkaMetadata.latest`."""
        return {tp: self.ends[tp] for tp in partitions}


def test_the_start_of_a_new_query_is_looked_up_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    kafka = StartAnswers({P0: 10, P1: 20})
    stream = reader(kafka, startingOffsets="latest", parallelism="2")  # type: ignore[arg-type]
    connector_logger = logging.getLogger("kafka_rescalable")  # it does not propagate to the root
    connector_logger.addHandler(caplog.handler)
    try:
        first = stream.initialOffset()
        kafka.ends = {P0: 99, P1: 99}  # records arrive before Spark asks again
        second = stream.initialOffset()
    finally:
        connector_logger.removeHandler(caplog.handler)
    assert first == second
    assert SlotsDocument.from_dict(first).state.offsets() == {P0: 10, P1: 20}
    assert kafka.asked == 1
    logged = [r.getMessage() for r in caplog.records if "assignment" in r.getMessage()]
    assert logged == ["Initial assignment: 2 partitions over 2 slots, 1 each"]
