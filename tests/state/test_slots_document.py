"""The slots document: round trips, stable bytes, and every way a document is rejected."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rescalable.state import (
    ForeignCheckpointError,
    OffsetDocumentError,
    OffsetState,
    PartitionOffset,
    SlotsDocument,
    TopicPartition,
)

P = PartitionOffset

STATE = OffsetState.of(
    [
        [P("orders", 10, 7), P("orders", 2, 5), P("audit", 0, 0)],
        [],
        [P("orders", 0, 123456789012)],
    ]
)


def test_to_dict_has_the_documented_shape_in_a_fixed_key_order() -> None:
    document = SlotsDocument(STATE).to_dict()
    assert document == {  # small: the slot layout is shorter than the topic layout
        "version": 4,
        "slots": [
            {"audit": {"0": 0}, "orders": {"2": 5, "10": 7}},
            {},
            {"orders": {"0": 123456789012}},
        ],
    }
    assert list(document) == ["version", "slots"]
    assert list(document["slots"][0]) == ["audit", "orders"]
    assert list(document["slots"][0]["orders"]) == ["2", "10"]  # numeric, not string order


def test_to_json_is_compact_and_stable() -> None:
    text = SlotsDocument(STATE).to_json()
    assert text == (
        '{"version":4,"slots":[{"audit":{"0":0},"orders":{"2":5,"10":7}},{},'
        '{"orders":{"0":123456789012}}]}'
    )
    shuffled = OffsetState.of(
        [
            [P("audit", 0, 0), P("orders", 2, 5), P("orders", 10, 7)],
            [],
            [P("orders", 0, 123456789012)],
        ]
    )
    assert SlotsDocument(shuffled).to_json() == text


def test_round_trip_keeps_state_and_extras() -> None:
    document = SlotsDocument(STATE, {"eventTime": {"watermarks": {"b": 2, "a": [1, None, "x"]}}})
    assert SlotsDocument.from_dict(document.to_dict()) == document
    assert SlotsDocument.from_json(document.to_json()) == document
    assert SlotsDocument.from_json(document.to_json().encode()) == document
    assert SlotsDocument.from_json(document.to_json()).to_json() == document.to_json()


def test_unknown_top_level_sections_are_preserved_and_written_sorted() -> None:
    text = '{"zeta":[1,{"b":1,"a":2}],"version":1,"alpha":true,"slots":[{"t":{"0":1}}]}'
    document = SlotsDocument.from_json(text)
    assert dict(document.extras) == {"zeta": [1, {"b": 1, "a": 2}], "alpha": True}
    assert document.to_json() == (
        '{"version":4,"slots":[{"t":{"0":1}}],"alpha":true,"zeta":[1,{"a":2,"b":1}]}'
    )


def test_extras_are_copied_and_read_only() -> None:
    source: dict[str, Any] = {"eventTime": {"a": 1}}
    document = SlotsDocument(STATE, source)
    source["eventTime"]["a"] = 2
    assert document.extras["eventTime"] == {"a": 1}
    with pytest.raises(TypeError):
        document.extras["x"] = 1  # type: ignore[index]
    document.to_dict()["eventTime"]["a"] = 3
    assert document.extras["eventTime"] == {"a": 1}
    assert SlotsDocument(STATE, document.extras) == document  # a proxy is accepted back


@pytest.mark.parametrize(
    ("extras", "error", "words"),
    [
        ({"version": 2}, ValueError, "reserved"),
        ({"slots": []}, ValueError, "reserved"),
        ({"topics": {}}, ValueError, "reserved"),
        ({1: "x"}, ValueError, "keys must be strings"),
        ({"x": object()}, TypeError, "JSON values"),
        ({"x": float("nan")}, TypeError, "JSON values"),
    ],
)
def test_bad_extras_are_refused(extras: dict[Any, Any], error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        SlotsDocument(STATE, extras)


def test_zero_slots_and_empty_slots_are_valid() -> None:
    assert SlotsDocument.from_json('{"version":1,"slots":[]}').state == OffsetState.empty()
    document = SlotsDocument.from_json('{"version":1,"slots":[{},{}]}')
    assert document.state.num_slots == 2
    assert document.state.partitions() == frozenset()


def test_a_topic_with_no_partition_in_a_slot_is_accepted_and_dropped() -> None:
    document = SlotsDocument.from_json('{"version":1,"slots":[{"t":{}}]}')
    assert document.state == OffsetState.of([[]])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"version":5,"slots":[]}',
            "version: unsupported version 5; this connector reads version 1, 2, 3, 4",
        ),
        ('{"version":0,"slots":[]}', "version: unsupported version 0"),
        ('{"version":"1","slots":[]}', "version: must be an integer, got string '1'"),
        ('{"version":true,"slots":[]}', "version: must be an integer, got boolean true"),
        ('{"version":1.0,"slots":[]}', "version: must be an integer, got number 1.0"),
        ('{"slots":[]}', "'version' is missing; supported versions: version 1, 2, 3, 4"),
        ('{"version":1}', "'slots' is missing"),
        (
            '{"version":1,"slots":{}}',
            "slots: must be an array with one object per reader slot, got object",
        ),
        (
            '{"version":1,"slots":"x"}',
            "slots: must be an array with one object per reader slot, got string",
        ),
        (
            '{"version":1,"slots":[[]]}',
            "slots[0]: must be an object mapping topic to partition offsets, got array",
        ),
        (
            '{"version":1,"slots":[{},null]}',
            "slots[1]: must be an object mapping topic to partition offsets, got null",
        ),
        (
            '{"version":1,"slots":[{"":{"0":1}}]}',
            "slots[0]: topic names must be non-empty strings, got ''",
        ),
        (
            '{"version":1,"slots":[{"o":[1]}]}',
            "slots[0]['o']: must be an object mapping partition to offset, got array",
        ),
        (
            '{"version":1,"slots":[{},{},{"orders":{"x":1}}]}',
            "slots[2]['orders']['x']: partition must be a non-negative integer string",
        ),
        (
            '{"version":1,"slots":[{"o":{"-1":1}}]}',
            "slots[0]['o']['-1']: partition must be a non-negative integer string",
        ),
        (
            '{"version":1,"slots":[{"o":{"01":1}}]}',
            "slots[0]['o']['01']: partition must be a non-negative integer string in canonical",
        ),
        ('{"version":1,"slots":[{"o":{" 1":1}}]}', "slots[0]['o'][' 1']: partition must be"),
        (
            '{"version":1,"slots":[{"o":{"\\u0661":1}}]}',
            "partition must be a non-negative integer string",
        ),
        (
            '{"version":1,"slots":[{"o":{"2147483648":1}}]}',
            "slots[0]['o']['2147483648']: partition must be <= 2147483647",
        ),
        (
            '{"version":1,"slots":[{"o":{"1":-1}}]}',
            "slots[0]['o']['1']: offset must be >= 0 (the next offset to read), got -1",
        ),
        ('{"version":1,"slots":[{"o":{"1":-2}}]}', "symbolic offsets such as -2 (earliest)"),
        (
            '{"version":1,"slots":[{"o":{"1":true}}]}',
            "slots[0]['o']['1']: offset must be an integer (the next offset to read), got boolean",
        ),
        (
            '{"version":1,"slots":[{"o":{"1":1.5}}]}',
            "slots[0]['o']['1']: offset must be an integer (the next offset to read), got number",
        ),
        ('{"version":1,"slots":[{"o":{"1":"5"}}]}', "got string '5'"),
        ('{"version":1,"slots":[{"o":{"1":null}}]}', "got null"),
        (
            '{"version":1,"slots":[{"o":{"1":9223372036854775808}}]}',
            "offset must be <= 9223372036854775807",
        ),
        (
            '{"version":1,"slots":[{"o":{"1":1,"1":2}}]}',
            "slots[0]['o']: partition '1' is listed twice",
        ),
        (
            '{"version":1,"slots":[{"o":{"1":1},"o":{"2":2}}]}',
            "slots[0]: topic 'o' is listed twice in this slot",
        ),
        (
            '{"version":1,"slots":[{"o":{"1":1}},{"o":{"1":1}}]}',
            "slots[1]['o']['1']: partition o-1 is listed twice, first at slots[0]['o']['1']",
        ),
        ('{"version":1,"version":1,"slots":[]}', "top-level key 'version' is listed twice"),
        (
            '{"version":1,"slots":[],"eventTime":{"a":1,"a":2}}',
            "eventTime: key 'a' is listed twice",
        ),
        ('{"version":1,"slots":[],"x":[{"a":1,"a":2}]}', "x[0]: key 'a' is listed twice"),
        ('{"version":1,"slots":[{"o":{"1":NaN}}]}', "not valid JSON: NaN is not a JSON number"),
        ('{"version":1,"slots":[{"o":{"1":Infinity}}]}', "not valid JSON: Infinity"),
        ('{"version":1,"slots":[', "not valid JSON"),
        ("", "not valid JSON"),
        ("[1, 2]", "the offset document must be a JSON object, got array"),
        ("5", "the offset document must be a JSON object, got integer 5"),
    ],
)
def test_rejections_say_what_is_wrong_and_where(text: str, expected: str) -> None:
    with pytest.raises(OffsetDocumentError) as info:
        SlotsDocument.from_json(text)
    assert expected in str(info.value)
    assert isinstance(info.value, ValueError)


def test_rejection_path_is_kept_on_the_error() -> None:
    with pytest.raises(OffsetDocumentError) as info:
        SlotsDocument.from_json('{"version":1,"slots":[{},{},{"orders":{"x":1}}]}')
    assert info.value.path == "slots[2]['orders']['x']"
    assert str(info.value) == (
        "slots[2]['orders']['x']: partition must be a non-negative integer string in "
        "canonical form, such as '0' or '12'"
    )


def test_a_bad_late_slot_rejects_the_whole_document() -> None:
    good = {f"t{i}": {str(p): p for p in range(50)} for i in range(10)}
    data = {"version": 1, "slots": [good, {"late": {"0": -1}}]}
    with pytest.raises(OffsetDocumentError, match=r"slots\[1\]\['late'\]\['0'\]"):
        SlotsDocument.from_dict(data)


def test_from_dict_rejects_python_values_json_cannot_hold() -> None:
    with pytest.raises(
        OffsetDocumentError, match=r"slots\[0\]\['t'\]\['0'\]: offset must be an integer"
    ):
        SlotsDocument.from_dict({"version": 1, "slots": [{"t": {"0": 1.0}}]})
    with pytest.raises(
        OffsetDocumentError, match=r"slots\[0\]: topic names must be non-empty strings, got 3"
    ):
        SlotsDocument.from_dict({"version": 1, "slots": [{3: {"0": 1}}]})
    with pytest.raises(OffsetDocumentError, match=r"slots\[0\]\['t'\]\[0\]: partition must be"):
        SlotsDocument.from_dict({"version": 1, "slots": [{"t": {0: 1}}]})
    assert SlotsDocument.from_dict(
        {"version": 1, "slots": ({"t": {"0": 1}},)}
    ).state == OffsetState.of([[P("t", 0, 1)]])


def test_spark_builtin_kafka_checkpoint_is_recognised_with_advice() -> None:
    spark_offsets = '{"orders":{"0":5,"1":17},"audit":{"0":0}}'
    with pytest.raises(ForeignCheckpointError) as info:
        SlotsDocument.from_json(spark_offsets)
    message = str(info.value)
    assert "written by Spark's built-in Kafka source" in message
    assert "cannot resume this checkpoint" in message
    assert "new checkpoint directory" in message
    # This offset may end a batch that was never committed: the inspector knows which is.
    assert "kafka-rescalable-inspect <checkpoint> --starting-offsets" in message
    assert "last committed batch" in message
    assert '{"orders"' not in message
    assert json.loads(info.value.starting_offsets or "") == json.loads(spark_offsets)
    assert info.value.offsets == {
        TopicPartition("orders", 0): 5,
        TopicPartition("orders", 1): 17,
        TopicPartition("audit", 0): 0,
    }
    assert isinstance(info.value, OffsetDocumentError)


def test_a_huge_spark_checkpoint_is_quoted_in_part_but_kept_whole() -> None:
    spark_offsets = {f"topic{i}": {str(p): 10**12 for p in range(100)} for i in range(20)}
    with pytest.raises(ForeignCheckpointError) as info:
        SlotsDocument.from_dict(spark_offsets)
    assert len(str(info.value)) < 3000
    assert json.loads(info.value.starting_offsets or "") == spark_offsets


@pytest.mark.parametrize(
    "text",
    [
        '{"logOffset":3}',
        "{}",
        '{"t":{"0":"x"}}',
        '{"batch":7,"t":{"0":1}}',
        '{"t":{"x":1}}',
        '{"t":{"01":1}}',
        '{"t":{"0":-1}}',
        '{"t":{}}',
        '{"t":{"2147483648":1}}',
    ],
)
def test_other_foreign_documents_say_they_are_not_ours(text: str) -> None:
    with pytest.raises(ForeignCheckpointError) as info:
        SlotsDocument.from_json(text)
    message = str(info.value)
    assert "not written by this connector" in message
    assert "new checkpoint directory" in message
    assert info.value.starting_offsets is None
    assert info.value.offsets is None


_topics = st.sampled_from(["a", "orders", "orders-1", "x.y_z", "é"])
_sub_states = st.builds(P, _topics, st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1))


@st.composite
def _states(draw: st.DrawFn) -> OffsetState:
    subs = draw(st.lists(_sub_states, max_size=30, unique_by=lambda s: (s.topic, s.partition)))
    slots = draw(st.integers(0, 8))
    if slots == 0:
        return OffsetState.empty()
    owners = draw(st.lists(st.integers(0, slots - 1), min_size=len(subs), max_size=len(subs)))
    return OffsetState.of(
        [[s for s, o in zip(subs, owners, strict=True) if o == i] for i in range(slots)]
    )


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=300)
@given(
    state=_states(),
    extras=st.dictionaries(
        st.text(min_size=1, max_size=8).filter(
            lambda k: k not in ("version", "slots", "topics", "topicIds")
        ),
        _json_values,
        max_size=3,
    ),
)
def test_any_document_round_trips_to_the_same_bytes(
    state: OffsetState, extras: dict[str, Any]
) -> None:
    document = SlotsDocument(state, extras)
    text = document.to_json()
    back = SlotsDocument.from_json(text)
    assert back == document
    assert back.to_json() == text
    assert SlotsDocument.from_dict(document.to_dict()) == document
    assert SlotsDocument(OffsetState.of(reversed(s) for s in state.slots), extras).to_json() == text


def test_the_slot_layout_keeps_topic_ids_in_a_section_of_their_own() -> None:
    document = SlotsDocument(STATE, topic_ids={"orders": "b1Xq", "audit": "Zz9"})
    data = document.to_dict()
    assert list(data) == ["version", "slots", "topicIds"]
    assert data["topicIds"] == {"audit": "Zz9", "orders": "b1Xq"}
    assert list(data["topicIds"]) == ["audit", "orders"]
    assert SlotsDocument.from_dict(data) == document
    parsed = SlotsDocument.from_json(document.to_json())
    assert parsed.topic_ids == {"audit": "Zz9", "orders": "b1Xq"}


def test_a_version_1_document_is_read_without_topic_ids_and_written_as_version_4() -> None:
    document = SlotsDocument.from_json('{"version":1,"slots":[{"t":{"0":1}}]}')
    assert document.topic_ids == {}
    assert document.to_json() == '{"version":4,"slots":[{"t":{"0":1}}]}'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"version":2,"slots":[],"topicIds":[]}', "topicIds: must be an object"),
        ('{"version":2,"slots":[],"topicIds":{"t":""}}', "topicIds['t']: a topic id must be"),
        ('{"version":2,"slots":[],"topicIds":{"t":5}}', "got integer 5"),
        ('{"version":2,"slots":[],"topicIds":{"t":"a","t":"b"}}', "topic 't' is listed twice"),
    ],
)
def test_malformed_topic_ids_are_refused_with_their_path(text: str, expected: str) -> None:
    with pytest.raises(OffsetDocumentError, match=re.escape(expected)):
        SlotsDocument.from_json(text)
