"""Version 3 of the slots document: its topic layout, old versions read, size never above v2."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from state import OffsetDocumentError, OffsetState, PartitionOffset, SlotsDocument, rebalance
from state.document import _surely_shorter
from state.topic_layout import topic_layout

P = PartitionOffset
FIXTURES = Path(__file__).parent / "fixtures"


def v2_json(document: SlotsDocument, **spacing: Any) -> str:
    """Write the version 2 document of the same state, built here by hand from its definition."""
    data: dict[str, Any] = {
        "version": 2,
        "slots": [
            {
                topic: {str(s.partition): s.offset for s in slot if s.topic == topic}
                for topic in sorted({s.topic for s in slot})
            }
            for slot in document.state.slots
        ],
    }
    if document.topic_ids:
        data["topicIds"] = dict(sorted(document.topic_ids.items()))
    data.update(sorted(document.extras.items()))
    return json.dumps(data, **spacing)


def striped(partitions: int, slots: int, topic: str = "orders") -> OffsetState:
    """Make what the rebalancer makes on a first batch: partitions dealt round-robin."""
    live = [P(topic, p, 10**8 + p) for p in range(partitions)]
    return rebalance(OffsetState.empty(), slots, live).state


def test_round_robin_slots_are_not_written() -> None:
    document = SlotsDocument(striped(5, 2), topic_ids={"orders": "b1Xq"})
    data = document.to_dict()
    assert data == {
        "version": 3,
        "slots": 2,
        "topics": {"orders": {"offsets": [10**8, 10**8 + 1, 10**8 + 2, 10**8 + 3, 10**8 + 4]}},
        "topicIds": {"orders": "b1Xq"},
    }
    assert list(data) == ["version", "slots", "topics", "topicIds"]
    assert SlotsDocument.from_dict(data) == document
    back = SlotsDocument.from_dict(data).state
    assert [[s.partition for s in slot] for slot in back.slots] == [[0, 2, 4], [1, 3]]


def test_round_robin_counts_across_topics_in_name_order() -> None:
    # "a" comes before "b": a0 a1 a2 b0 b1 dealt to slots 0 1 0 1 0.
    live = [P(t, p, 7) for t in "ba" for p in range(3 if t == "a" else 2)]
    state = rebalance(OffsetState.empty(), 2, live).state
    data = SlotsDocument(state).to_dict()
    assert data["topics"] == {"a": {"offsets": [7, 7, 7]}, "b": {"offsets": [7, 7]}}
    assert list(data["topics"]) == ["a", "b"]
    shuffled = {
        "version": 3,
        "slots": 2,
        "topics": {"b": {"offsets": [7, 7]}, "a": data["topics"]["a"]},
    }
    assert SlotsDocument.from_dict(shuffled).state == state  # key order does not matter


def test_moved_partitions_list_every_slot_and_sparse_partitions_list_their_numbers() -> None:
    state = OffsetState.of(
        [
            [P("orders", 0, 500), P("orders", 7, 510)],
            [P("orders", 5, 520), P("audit", 3, 9)],
            [P("audit", 4, 9), P("audit", 5, 9), P("audit", 6, 9), P("audit", 9, 8)],
            [],
        ]
    )
    # Small enough that the slot layout is shorter: the topic layout is asked for directly.
    data = {"version": 3, "slots": 4, "topics": topic_layout(state)}
    assert data == {
        "version": 3,
        "slots": 4,
        "topics": {
            "audit": {
                "partitions": [[3, 6], 9],
                "offsets": [9, 9, 9, 9, 8],
                "slots": [1, 2, 2, 2, 2],
            },
            "orders": {"partitions": [0, 5, 7], "offsets": [500, 520, 510], "slots": [0, 1, 0]},
        },
    }
    assert list(data["topics"]["audit"]) == ["partitions", "offsets", "slots"]
    assert SlotsDocument.from_json(json.dumps(data)).state == state
    assert SlotsDocument(state).to_dict()["slots"] == [
        {"orders": {"0": 500, "7": 510}},
        {"audit": {"3": 9}, "orders": {"5": 520}},
        {"audit": {"4": 9, "5": 9, "6": 9, "9": 8}},
        {},
    ]


@pytest.mark.parametrize(
    ("numbers", "written"),
    [
        ([0, 1], None),  # 0 .. n-1: not written
        ([1, 2], [1, 2]),  # a run of two is shorter as two numbers
        ([1, 2, 3], [[1, 3]]),
        ([0, 2, 3, 4, 9, 10], [0, [2, 4], 9, 10]),
        ([5], [5]),
    ],
)
def test_partition_runs(numbers: list[int], written: list[Any] | None) -> None:
    state = OffsetState.of([[P("t", n, 1) for n in numbers]])
    topics = topic_layout(state)  # small states are written in the slot layout: ask directly
    assert topics["t"].get("partitions") == written
    assert SlotsDocument.from_dict({"version": 3, "slots": 1, "topics": topics}).state == state


def test_a_small_state_keeps_the_slot_layout_when_it_is_shorter() -> None:
    state = OffsetState.of([[P("orders", 0, 5)]])
    data = SlotsDocument(state).to_dict()
    assert data == {"version": 3, "slots": [{"orders": {"0": 5}}]}
    assert SlotsDocument.from_dict(data).state == state
    assert SlotsDocument(OffsetState.empty()).to_dict() == {"version": 3, "slots": []}


@pytest.mark.parametrize("name", ["offsets_v1", "offsets_v2_rebalanced", "offsets_v2_event_time"])
def test_real_version_1_and_2_offset_logs_resume_exactly(name: str) -> None:
    # Offset-log files as Spark wrote them for earlier releases (header, metadata, source).
    written = (FIXTURES / name).read_text().splitlines()[-1]
    old = json.loads(written)
    document = SlotsDocument.from_json(written)
    expected = [
        [P(topic, int(p), o) for topic, ps in slot.items() for p, o in ps.items()]
        for slot in old["slots"]
    ]
    assert document.state == OffsetState.of(expected)
    assert dict(document.topic_ids) == old.get("topicIds", {})
    assert dict(document.extras) == {
        k: v for k, v in old.items() if k not in ("version", "slots", "topicIds")
    }
    again = SlotsDocument.from_json(json.dumps(document.to_dict()))
    assert again == document
    assert again.to_dict()["version"] == 3
    assert len(json.dumps(document.to_dict())) <= len(v2_json(document))


def test_the_real_v2_checkpoint_of_8_partitions_on_7_slots_is_round_robin() -> None:
    written = (FIXTURES / "offsets_v2_rebalanced").read_text().splitlines()[-1]
    data = SlotsDocument.from_json(written).to_dict()
    (topic,) = data["topics"]
    # Slot 0 holds partitions 0 and 7: round-robin over 7 slots, so no slot is listed.
    assert data["slots"] == 7
    assert data["topics"][topic] == {"offsets": [12, 9, 10, 12, 7, 8, 12, 10]}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"slots": "4", "topics": {}}, "slots: must be the number of reader slots"),
        ({"slots": -1, "topics": {}}, "slots: must be the number of reader slots"),
        ({"slots": True, "topics": {}}, "got boolean true"),
        ({"slots": 2}, "'topics' is missing"),
        ({"slots": [], "topics": {}}, "'topics' goes with a slot count"),
        ({"slots": 0, "topics": {"t": {"offsets": [1]}}}, "slots: is 0, but the document lists"),
        ({"slots": 1, "topics": []}, "topics: must be an object"),
        ({"slots": 1, "topics": {"": {"offsets": [1]}}}, "topic names must be non-empty"),
        ({"slots": 1, "topics": {"t": [1]}}, "topics['t']: must be an object with 'offsets'"),
        ({"slots": 1, "topics": {"t": {}}}, "topics['t']: 'offsets' is missing"),
        ({"slots": 1, "topics": {"t": {"offsets": [1], "slot": [0]}}}, "unknown key 'slot'"),
        ({"slots": 1, "topics": {"t": {"offsets": []}}}, "['offsets']: is empty"),
        ({"slots": 1, "topics": {"t": {"offsets": {"0": 1}}}}, "must be an array of integers"),
        (
            {"slots": 1, "topics": {"t": {"offsets": [1, True]}}},
            "['offsets'][1]: offset must be an integer, got boolean",
        ),
        ({"slots": 1, "topics": {"t": {"offsets": [1, 2.0]}}}, "got number 2.0"),
        ({"slots": 1, "topics": {"t": {"offsets": [-1]}}}, "['offsets'][0]: offset must be >= 0"),
        ({"slots": 1, "topics": {"t": {"offsets": [2**63]}}}, "Kafka's limit"),
        (
            {"slots": 2, "topics": {"t": {"offsets": [1], "slots": [2]}}},
            "['slots'][0]: slot 2 does not exist: the document has 2 slots",
        ),
        (
            {"slots": 2, "topics": {"t": {"offsets": [1, 1], "slots": [0]}}},
            "lists 1 slots for 2 partitions",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": [0, 1], "offsets": [1]}}},
            "more partitions than the 1 offsets",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": [4], "offsets": [1, 1]}}},
            "lists 2 offsets for 1 partitions",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": [[0, 2147483646]], "offsets": [1]}}},
            "more partitions than the 1 offsets",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": [3, 3], "offsets": [1, 1]}}},
            "['partitions'][1]: partition 3 comes after 3",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": [5, 2], "offsets": [1, 1]}}},
            "partition 2 comes after 5",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": [[3, 3]], "offsets": [1]}}},
            "needs first < last",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": [[1, 2, 3]], "offsets": [1]}}},
            "a run must be [first, last]",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": ["0"], "offsets": [1]}}},
            "must be a partition number",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": [], "offsets": [1]}}},
            "['partitions']: is empty",
        ),
        (
            {"slots": 1, "topics": {"t": {"partitions": 0, "offsets": [1]}}},
            "must be an array of partition numbers",
        ),
    ],
)
def test_topic_layout_rejections_name_the_value(data: dict[str, Any], expected: str) -> None:
    with pytest.raises(OffsetDocumentError, match=re.escape(expected)):
        SlotsDocument.from_dict({"version": 3, **data})


def test_repeated_keys_in_the_topic_layout_are_refused() -> None:
    with pytest.raises(OffsetDocumentError, match=re.escape("topics: topic 't' is listed twice")):
        SlotsDocument.from_json(
            '{"version":3,"slots":1,"topics":{"t":{"offsets":[1]},"t":{"offsets":[2]}}}'
        )
    with pytest.raises(
        OffsetDocumentError, match=re.escape("topics['t']: key 'offsets' is listed twice")
    ):
        SlotsDocument.from_json(
            '{"version":3,"slots":1,"topics":{"t":{"offsets":[1],"offsets":[2]}}}'
        )


def test_a_topics_section_in_an_older_version_is_not_carried_forward() -> None:
    document = SlotsDocument.from_dict({"version": 2, "slots": [{"t": {"0": 1}}], "topics": 5})
    assert dict(document.extras) == {}
    assert document.state == OffsetState.of([[P("t", 0, 1)]])


# Any state at all: dense or sparse partition numbers, round-robin or scattered slots, empty
# slots, several topics; and states the rebalancer makes, which are what gets checkpointed.
_topics = st.sampled_from(["a", "orders", "t-84358fe5a31b46049d377431505552c7", "é"])


@st.composite
def _states(draw: st.DrawFn) -> OffsetState:
    topics = draw(st.lists(_topics, min_size=1, max_size=3, unique=True))
    dense = draw(st.booleans())
    subs = []
    for topic in topics:
        if dense:
            numbers = range(draw(st.integers(1, 40)))
        else:
            numbers = sorted(
                draw(st.sets(st.integers(0, 2**31 - 1) | st.integers(0, 60), max_size=30))
            )
        offsets = st.integers(0, 2**63 - 1) | st.integers(0, 10**9)
        subs += [P(topic, n, draw(offsets)) for n in numbers]
    slots = draw(st.integers(1, 300))
    how = draw(st.sampled_from(["rebalanced", "rescaled", "scattered"]))
    if how == "scattered" or not subs:
        owners = draw(st.lists(st.integers(0, slots - 1), min_size=len(subs), max_size=len(subs)))
        return OffsetState.of(
            [[s for s, o in zip(subs, owners, strict=True) if o == i] for i in range(slots)]
        )
    state = rebalance(OffsetState.empty(), slots, subs).state
    if how == "rescaled":
        state = rebalance(state, draw(st.integers(1, 300)), subs).state
    return state


@settings(max_examples=400, deadline=None)
@given(
    state=_states(),
    ids=st.booleans(),
    extras=st.sampled_from([{}, {"eventTime": {"x": [1, None]}}]),
)
def test_any_document_round_trips_through_version_3_and_is_never_longer_than_version_2(
    state: OffsetState, ids: bool, extras: dict[str, Any]
) -> None:
    topic_ids = {s.topic: "id-" + s.topic for s in state.sub_states()} if ids else {}
    document = SlotsDocument(state, extras, topic_ids)
    written = json.dumps(document.to_dict())  # as PySpark writes the offset log
    back = SlotsDocument.from_dict(json.loads(written))
    assert back == document
    assert back.state.slots == state.slots
    assert json.dumps(back.to_dict()) == written
    assert SlotsDocument.from_json(document.to_json()) == document
    # Whichever layout the writer took, the topic layout reads back to the same state too.
    by_topic = {"version": 3, "slots": state.num_slots, "topics": topic_layout(state)}
    assert SlotsDocument.from_json(json.dumps(by_topic)).state.slots == state.slots
    # The shortcut that skips making the slot layout is never wrong when it answers yes.
    sections = {k: by_topic[k] for k in ("slots", "topics")}
    if _surely_shorter(sections, state):
        by_slot = {"slots": json.loads(v2_json(SlotsDocument(state)))["slots"]}
        assert len(json.dumps(sections)) <= len(json.dumps(by_slot))
        compact = {"separators": (",", ":")}
        assert len(json.dumps(sections, **compact)) <= len(json.dumps(by_slot, **compact))
    assert len(written) <= len(v2_json(document))
    assert len(document.to_json()) <= len(v2_json(document, separators=(",", ":")))
