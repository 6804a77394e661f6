"""A progress document read into per-partition lag: ours, Spark's Kafka source, others."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.metrics.progress import (
    OUR_FORMAT,
    SPARK_KAFKA_FORMAT,
    PartitionLag,
    TopicLag,
    read_progress,
)
from kafka_rescalable.state import OffsetState, PartitionOffset, TopicPartition
from kafka_rescalable.state.batch_edges import backlog_report
from tests.connector.metrics.progress_documents import (
    QUERY_ID,
    RATE_SOURCE,
    RUN_ID,
    as_json,
    our_source,
    progress,
    slots_document,
    spark_kafka_source,
)

END = slots_document({("orders", 0): 67, ("orders", 2): 66}, {("orders", 1): 67, ("pay", 0): 5})
LATEST = {("orders", 0): 100, ("orders", 1): 100, ("orders", 2): 100, ("pay", 0): 5}


def test_the_query_fields_are_read() -> None:
    batch = read_progress(as_json(progress(our_source(END, LATEST), batch_id=7)))
    assert (batch.query_id, batch.run_id, batch.name, batch.batch_id) == (
        QUERY_ID,
        RUN_ID,
        "orders_etl",
        7,
    )
    assert batch.input_rows == 100
    assert batch.input_rows_per_second == 18.5
    assert batch.processed_rows_per_second == 210.1
    assert dict(batch.durations_ms)["addBatch"] == 233
    assert batch.trigger_ms == 474
    assert batch.timestamp_s == pytest.approx(1_795_520_504.359)


def test_our_source_gives_read_latest_backlog_and_slot_per_partition() -> None:
    (source,) = read_progress(progress(our_source(END, LATEST))).sources
    assert (source.index, source.format, source.slots) == (0, OUR_FORMAT, 2)
    assert source.partitions == (
        PartitionLag("orders", 0, 67, 100, 0),
        PartitionLag("orders", 1, 67, 100, 1),
        PartitionLag("orders", 2, 66, 100, 0),
        PartitionLag("pay", 0, 5, 5, 1),
    )
    assert [lag.backlog for lag in source.partitions] == [33, 33, 34, 0]
    assert source.backlog == 100
    assert source.slot_backlogs() == (67, 33)
    assert source.topics() == (TopicLag("orders", 3, 100, 34), TopicLag("pay", 1, 0, 0))


def test_spark_kafka_source_is_read_from_its_per_topic_offsets() -> None:
    spark_source = spark_kafka_source(
        {("clicks", 0): 33, ("clicks", 1): 40},
        {
            ("clicks", 0): 100,
            ("clicks", 1): 100,
        },
    )
    (source,) = read_progress(progress(spark_source)).sources
    assert (source.format, source.slots) == (SPARK_KAFKA_FORMAT, None)
    assert source.partitions == (
        PartitionLag("clicks", 0, 33, 100),
        PartitionLag("clicks", 1, 40, 100),
    )
    assert source.slot_backlogs() == ()


def test_other_sources_are_left_out_and_kafka_ones_keep_their_position() -> None:
    spark_source = spark_kafka_source({("clicks", 0): 1}, {("clicks", 0): 2})
    batch = read_progress(progress(RATE_SOURCE, our_source(END, LATEST), spark_source))
    assert [(s.index, s.format) for s in batch.sources] == [
        (1, OUR_FORMAT),
        (2, SPARK_KAFKA_FORMAT),
    ]


def test_per_topic_offsets_of_a_source_not_named_kafka_are_not_taken_for_kafka() -> None:
    lookalike = dict(spark_kafka_source({("x", 0): 1}, {("x", 0): 2}), description="MySource")
    assert read_progress(progress(lookalike)).sources == ()


def test_offsets_given_as_json_text_are_read_as_pyspark_objects_hold_them() -> None:
    source = our_source(END, LATEST)
    source["endOffset"] = json.dumps(source["endOffset"])
    source["latestOffset"] = json.dumps(source["latestOffset"])
    (read,) = read_progress(progress(source)).sources
    assert read.backlog == 100


def test_a_source_without_latest_offsets_has_read_offsets_and_unknown_backlog() -> None:
    (source,) = read_progress(progress(our_source(END, None))).sources
    assert [lag.read for lag in source.partitions] == [67, 67, 66, 5]
    assert {lag.latest for lag in source.partitions} == {None}
    assert {lag.backlog for lag in source.partitions} == {None}
    assert source.backlog == 0


def test_a_partition_only_in_latest_has_no_read_offset_and_no_backlog() -> None:
    latest = dict(LATEST, **{}) | {("orders", 3): 9}
    (source,) = read_progress(progress(our_source(END, latest))).sources
    assert source.partitions[3] == PartitionLag("orders", 3, None, 9)
    assert source.topics()[0] == TopicLag("orders", 4, 100, 34)


def test_a_source_with_no_end_yet_and_a_malformed_document_are_left_out() -> None:
    no_end = our_source(END, LATEST) | {"endOffset": None}
    malformed = our_source({"version": 2, "slots": "nope"}, LATEST)
    assert read_progress(progress(no_end, malformed)).sources == ()


def test_a_backlog_is_never_negative() -> None:
    assert PartitionLag("t", 0, read=50, latest=10).backlog == 0


def test_a_query_without_a_name_and_spark_omitted_rates_read_as_empty_and_none() -> None:
    document = progress(name=None)
    del document["inputRowsPerSecond"]
    batch = read_progress(document)
    assert batch.name == ""
    assert batch.label == QUERY_ID
    assert batch.input_rows_per_second is None


@pytest.mark.parametrize("text", ["[]", '{"id": "x"}', "not json"])
def test_what_is_not_a_progress_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        read_progress(text)


slots_strategy = st.lists(
    st.dictionaries(
        st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 30)),
        st.integers(0, 1000),
        max_size=6,
    ),
    min_size=1,
    max_size=4,
)


@given(slots_strategy, st.lists(st.integers(0, 2000), min_size=70, max_size=70))
def test_backlogs_agree_with_the_sources_own_backlog_report(
    slots: list[dict[tuple[str, int], int]], latest_values: list[int]
) -> None:
    # The same partition in two slots is not a valid state: keep its first slot only.
    seen: set[tuple[str, int]] = set()
    unique = []
    for slot in slots:
        unique.append({key: offset for key, offset in slot.items() if key not in seen})
        seen.update(slot)
    latest = {key: latest_values[i] for i, key in enumerate(sorted(seen))}
    (source,) = read_progress(progress(our_source(slots_document(*unique), latest))).sources
    state = OffsetState.of(
        [PartitionOffset(t, p, o) for (t, p), o in slot.items()] for slot in unique
    )
    report = backlog_report(state, {TopicPartition(t, p): o for (t, p), o in latest.items()})
    assert source.backlog == report["total"]
    assert list(source.slot_backlogs()) == report["perSlot"]
    assert sum(topic.backlog for topic in source.topics()) == source.backlog
    assert max((t.max_backlog for t in source.topics()), default=0) == report["perPartition"]["max"]
