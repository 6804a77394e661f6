"""Driver-side planning of the stream reader, without a broker.

Documents are parsed once per batch and exactly as strictly as before; the clipping and
backlog helpers give what the per-partition maps they replaced gave.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark import cloudpickle
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from kafka_rescalable.config.options import parse_options
from kafka_rescalable.driver.checkpointed import CheckpointedDocuments
from kafka_rescalable.driver.stream_reader import KafkaStreamReader
from kafka_rescalable.executor.tasks import read_input_partition
from kafka_rescalable.state import (
    EVENT_TIME_KEY,
    MAX_OFFSET,
    ForeignCheckpointError,
    OffsetDocumentError,
    OffsetState,
    PartitionOffset,
    SlotsDocument,
    TopicPartition,
)
from kafka_rescalable.state.batch_edges import backlog_report, clip_to, reading_start
from kafka_rescalable.state.byte_cap import RecordSizes


def state_of(*slots: dict[int, int], topic: str = "orders") -> OffsetState:
    return OffsetState.of(
        [[PartitionOffset(topic, p, o) for p, o in slot.items()] for slot in slots]
    )


def from_spark(data: dict[str, Any]) -> dict[str, Any]:
    """Return what Spark hands back: the same document, read again from its JSON."""
    return json.loads(json.dumps(data))


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every dict ``SlotsDocument.from_dict`` is asked to parse, in order."""
    seen: list[object] = []
    original = SlotsDocument.from_dict

    def counting(data: Any) -> SlotsDocument:
        seen.append(data)
        return original(data)

    monkeypatch.setattr(SlotsDocument, "from_dict", counting)
    yield seen


def test_a_written_document_comes_back_without_parsing(parses: list[object]) -> None:
    cache = CheckpointedDocuments()
    document = SlotsDocument(state_of({0: 5}, {1: 7}))
    written = cache.to_dict(document)
    assert written == document.to_dict()
    assert cache.parse(from_spark(written)) is document
    assert parses == []


def test_a_caller_changing_the_written_dict_changes_nothing_cached(
    parses: list[object],
) -> None:
    cache = CheckpointedDocuments()
    document = SlotsDocument(WIDE)
    written = cache.to_dict(document)
    kept = from_spark(written)
    written["topics"]["orders"]["offsets"][0] = 999  # the caller's, shared with nobody
    written["topics"]["orders"]["partitions"][0][1] = 24
    written["slots"] = 1
    assert cache.parse(from_spark(kept)) is document
    assert cache.to_dict(document) == kept
    assert parses == []


def test_a_document_parsed_once_is_reused(parses: list[object]) -> None:
    cache = CheckpointedDocuments()
    data = SlotsDocument(state_of({0: 5})).to_dict()
    first = cache.parse(from_spark(data))
    assert cache.parse(from_spark(data)) is first
    assert len(parses) == 1


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("slots", 0, "orders", "0"), True),  # True == 1, but no offset
        (("slots", 0, "orders", "0"), 1.0),  # 1.0 == 1, but no offset
        (("version",), 4.0),  # 4.0 == 4, but no version
    ],
)
def test_equal_but_not_identical_values_are_still_refused(
    where: tuple[str | int, ...], value: object
) -> None:
    cache = CheckpointedDocuments()
    written = cache.to_dict(SlotsDocument(state_of({0: 1})))
    changed = from_spark(written)
    inner: Any = changed
    for step in where[:-1]:
        inner = inner[step]
    inner[where[-1]] = value
    assert changed == written  # so a plain == would have reused the document
    with pytest.raises(OffsetDocumentError):
        cache.parse(changed)


# Many partitions on sparse numbers, moved off round-robin: the topic layout with every key.
WIDE = state_of(
    *({p: 100 + p for p in range(2 * n, 2 * n + 2)} for n in range(12)),
    {40: 7, 41: 7, 42: 7, 50: 9},
)


def test_a_topic_layout_with_ids_in_its_entries_comes_back_without_parsing(
    parses: list[object],
) -> None:
    cache = CheckpointedDocuments()
    document = SlotsDocument(WIDE, topic_ids={"orders": "b1XqV8AbT0mP3xk2Zc9yWw", "gone": "Zz9"})
    written = cache.to_dict(document)
    assert written["topics"]["orders"]["id"] == "b1XqV8AbT0mP3xk2Zc9yWw"
    assert written["topicIds"] == {"gone": "Zz9"}
    assert cache.parse(from_spark(written)) is document
    assert parses == []


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("topics", "orders", "slots", 2), True),  # True == 1, but no slot
        (("topics", "orders", "offsets", 3), 103.0),
        (("topics", "orders", "slots", 0), 0.0),
        (("topics", "orders", "partitions", 0, 1), 23.0),
        (("slots",), 13.0),
    ],
)
def test_the_topic_layout_is_reused_only_when_identical(
    parses: list[object], where: tuple[str | int, ...], value: object
) -> None:
    cache = CheckpointedDocuments()
    document = SlotsDocument(WIDE)
    written = cache.to_dict(document)
    assert written["slots"] == 13 and written["topics"]["orders"]["partitions"][0] == [0, 23]
    assert cache.parse(from_spark(written)) is document
    assert parses == []
    changed = from_spark(written)
    inner: Any = changed
    for step in where[:-1]:
        inner = inner[step]
    assert inner[where[-1]] == value
    inner[where[-1]] = value
    assert changed == written  # so a plain == would have reused the document
    with pytest.raises(OffsetDocumentError):
        cache.parse(changed)
    assert parses == [changed]


def test_extras_must_match_type_for_type(parses: list[object]) -> None:
    cache = CheckpointedDocuments()
    written = cache.to_dict(SlotsDocument(state_of({0: 1}), {"note": {"ratio": 0.0, "n": 2}}))
    changed = from_spark(written)
    changed["note"]["ratio"] = -0.0  # equal, yet other JSON
    parsed = cache.parse(changed)
    assert parses == [changed]
    assert parsed.to_json() == json.dumps(changed, separators=(",", ":"))


def test_a_changed_dict_after_writing_changes_nothing() -> None:
    cache = CheckpointedDocuments()
    document = SlotsDocument(state_of({0: 5}))
    written = cache.to_dict(document)
    written["slots"][0]["orders"]["0"] = 9  # the caller's copy, not the cache's
    assert cache.parse(from_spark(written)).state == state_of({0: 9})
    assert cache.parse(document.to_dict()) is document


def test_only_the_last_documents_are_kept(parses: list[object]) -> None:
    cache = CheckpointedDocuments(size=2)
    dicts = [cache.to_dict(SlotsDocument(state_of({0: n}))) for n in range(3)]
    cache.parse(from_spark(dicts[2]))
    cache.parse(from_spark(dicts[1]))
    assert parses == []
    cache.parse(from_spark(dicts[0]))
    assert len(parses) == 1


def test_foreign_documents_still_fail() -> None:
    cache = CheckpointedDocuments()
    cache.to_dict(SlotsDocument(state_of({0: 5})))
    with pytest.raises(ForeignCheckpointError):
        cache.parse({"orders": {"0": 5}})


def reader(**extra: str) -> KafkaStreamReader:
    options = parse_options(
        {"kafka.bootstrap.servers": "localhost:9", "subscribe": "orders", **extra}, "stream"
    )
    return KafkaStreamReader(options, read_input_partition)


def test_partitions_parses_each_document_once(parses: list[object]) -> None:
    stream = reader()
    start = SlotsDocument(state_of({0: 5}, {1: 7})).to_dict()
    end = SlotsDocument(state_of({0: 8}, {1: 7})).to_dict()
    first = stream.partitions(from_spark(start), from_spark(end))
    again = stream.partitions(from_spark(start), from_spark(end))
    assert first == again
    assert len(parses) == 2
    stream.commit(from_spark(end))
    assert len(parses) == 2


def test_executors_get_no_documents() -> None:
    stream = reader()
    stream.partitions(
        SlotsDocument(state_of({0: 5})).to_dict(), SlotsDocument(state_of({0: 6})).to_dict()
    )
    shipped = pickle.loads(pickle.dumps(stream))
    assert shipped._documents._entries == []


def test_a_byte_cap_alone_asks_for_a_row_limit_and_ships_no_sizes() -> None:
    # The API has no byte limit: the reader asks for one that admits every row, so the engine
    # passes ReadAllAvailable only for Trigger.Once, where the byte cap yields.
    stream = reader(maxbytespertrigger="64m")
    limit = stream.getDefaultReadLimit()
    assert isinstance(limit, ReadMaxRows) and limit.max_rows == MAX_OFFSET
    tp = TopicPartition("orders", 0)
    probe = stream._limits._sizes
    probe._known[tp] = RecordSizes(0, 2, (0, 1), (10, 20))
    shipped = pickle.loads(pickle.dumps(stream))
    assert shipped._limits._sizes._known == {}
    assert probe._known[tp].total == 20, "the driver keeps its own"
    assert isinstance(reader().getDefaultReadLimit(), ReadAllAvailable)


def test_the_reader_ships_the_task_reader_by_name() -> None:
    # Spark pickles the reader with cloudpickle; a module-level function goes by name, so the
    # executor imports kafka_rescalable.executor and the driver never has to.
    shipped = cloudpickle.loads(cloudpickle.dumps(reader()))
    assert shipped._read_task is read_input_partition


def test_a_partition_that_went_back_reads_nothing() -> None:
    start = state_of({0: 10, 1: 10}, {2: 10})
    end = state_of({0: 12, 1: 4}, {3: 0})
    clipped = clip_to(start, end)
    assert clipped == state_of({0: 10, 1: 4}, {2: 10})
    assert clip_to(start, state_of({0: 12, 1: 10}, {2: 11})) is start


offsets = st.integers(min_value=0, max_value=30)


@given(
    start=st.dictionaries(st.integers(0, 7), offsets, max_size=8),
    end=st.dictionaries(st.integers(0, 7), offsets, max_size=8),
)
def test_clip_is_the_per_partition_minimum(start: dict[int, int], end: dict[int, int]) -> None:
    start_state, end_state = state_of(start), state_of(end)
    end_offsets = end_state.offsets()
    expected = start_state.with_offsets(
        {
            tp: min(offset, end_offsets[tp])
            for tp, offset in start_state.offsets().items()
            if tp in end_offsets
        }
    )
    assert clip_to(start_state, end_state) == expected


def test_backlog_is_counted_per_partition_and_slot() -> None:
    end = state_of({0: 10, 1: 4}, {2: 7}, {})
    tp = [TopicPartition("orders", p) for p in range(3)]
    report = backlog_report(end, {tp[0]: 15, tp[1]: 4, tp[2]: 5})
    assert report == {
        "total": 5,
        "perSlot": [5, 0, 0],
        "perPartition": {"min": 0, "max": 5, "avg": 1.7},
    }
    assert backlog_report(state_of({}), {})["perPartition"] == {"min": 0, "max": 0, "avg": 0.0}


def test_event_time_extras_are_reused_when_identical(parses: list[object]) -> None:
    cache = CheckpointedDocuments()
    section = {"partitions": {"orders": {"0": [None, 5], "1": [3, 4]}}}
    document = SlotsDocument(state_of({0: 1, 1: 2}), {EVENT_TIME_KEY: section})
    written = cache.to_dict(document)
    assert cache.parse(from_spark(written)) is document
    changed = from_spark(written)
    changed[EVENT_TIME_KEY]["partitions"]["orders"]["1"] = [3.0, 4]
    assert cache.parse(changed) is not document
    assert parses == [changed]


def test_a_recreated_topic_reads_nothing_in_the_batch_that_finds_it() -> None:
    from kafka_rescalable.state import PartitionOffset as P

    start = OffsetState.of([[P("orders", 0, 50), P("audit", 0, 7)]])
    # The new "orders" holds 300 records: its end (120) is above the old position (50), yet
    # those are the new topic's offsets and must not be read as the old topic's.
    end = OffsetState.of([[P("orders", 0, 120), P("audit", 0, 9)]])
    clipped = clip_to(start, end, frozenset({"orders"}))
    assert clipped.offsets() == {TopicPartition("orders", 0): 120, TopicPartition("audit", 0): 7}
    assert clip_to(start, end).offsets()[TopicPartition("orders", 0)] == 50  # not re-created


def test_the_reading_start_knows_a_topic_recreated_between_the_ends_or_since() -> None:
    from kafka_rescalable.state import PartitionOffset as P

    ids = {"orders": "A", "audit": "B"}
    start = SlotsDocument(OffsetState.of([[P("orders", 0, 50), P("audit", 0, 7)]]), topic_ids=ids)
    end_state = OffsetState.of([[P("orders", 0, 120), P("audit", 0, 9)]])
    same = SlotsDocument(end_state, topic_ids=ids)
    assert reading_start(start, same) == start.state
    recreated = SlotsDocument(end_state, topic_ids={**ids, "orders": "C"})
    assert reading_start(start, recreated).offsets() == {
        TopicPartition("orders", 0): 120,
        TopicPartition("audit", 0): 7,
    }
    assert reading_start(start, same, ["audit"]).offsets() == {
        TopicPartition("orders", 0): 50,
        TopicPartition("audit", 0): 9,
    }


def test_a_partition_whose_end_went_back_reads_nothing() -> None:
    from kafka_rescalable.state import PartitionOffset as P

    start = OffsetState.of([[P("orders", 0, 50)]])
    end = OffsetState.of([[P("orders", 0, 30)]])
    assert clip_to(start, end).offsets() == {TopicPartition("orders", 0): 30}
