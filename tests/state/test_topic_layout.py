"""The topic layout of the slots document (versions 3 and 4): shape, ids, old versions, size."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rescalable.state import (
    OffsetDocumentError,
    OffsetState,
    PartitionOffset,
    SlotsDocument,
    rebalance,
)
from kafka_rescalable.state.document import _surely_shorter
from kafka_rescalable.state.topic_layout import topic_layout

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


def test_round_robin_slots_are_not_written_and_the_id_is_in_the_entry() -> None:
    document = SlotsDocument(striped(5, 2), topic_ids={"orders": "b1Xq"})
    data = document.to_dict()
    assert data == {
        "version": 4,
        "slots": 2,
        "topics": {
            "orders": {
                "id": "b1Xq",
                "offsets": [10**8, 10**8 + 1, 10**8 + 2, 10**8 + 3, 10**8 + 4],
            }
        },
    }
    assert list(data) == ["version", "slots", "topics"]  # no topicIds: every id is in an entry
    assert list(data["topics"]["orders"]) == ["id", "offsets"]
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
        "version": 4,
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
    assert data == {"version": 4, "slots": [{"orders": {"0": 5}}]}
    assert SlotsDocument.from_dict(data).state == state
    assert SlotsDocument(OffsetState.empty()).to_dict() == {"version": 4, "slots": []}


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
    assert again.to_dict()["version"] == 4
    assert len(json.dumps(document.to_dict())) <= len(v2_json(document))


def test_the_real_v2_checkpoint_of_8_partitions_on_7_slots_is_round_robin() -> None:
    written = (FIXTURES / "offsets_v2_rebalanced").read_text().splitlines()[-1]
    data = SlotsDocument.from_json(written).to_dict()
    (topic,) = data["topics"]
    # Slot 0 holds partitions 0 and 7: round-robin over 7 slots, so no slot is listed.
    assert data["slots"] == 7
    assert data["topics"][topic] == {
        "id": "epNhnbUWQWGSm6+z01Os7g",
        "offsets": [12, 9, 10, 12, 7, 8, 12, 10],
    }


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
@pytest.mark.parametrize("version", [3, 4])
def test_topic_layout_rejections_name_the_value(
    data: dict[str, Any], expected: str, version: int
) -> None:
    with pytest.raises(OffsetDocumentError, match=re.escape(expected)):
        SlotsDocument.from_dict({"version": version, **data})


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


# Real offset-log files of the version 3 connector (b410b37), as Spark wrote them: two topics
# of 6 and 2 partitions on 4 slots dealt round-robin, then on 3 slots after a restart (slots
# listed), and one topic of one partition in the slot layout.
A, B = "t-7472a278cc5c4018b1c1d83e9c33c771", "t-c728df929385429aa58b48a67ca09306"
V3_IDS = {A: "4OKukh6nQGaI/MRa2lFndA", B: "M5hCB5qpS9GUr2eAsse5Cg"}
V3_FIXTURES = {
    "offsets_v3_topics": (
        [
            [P(A, 0, 10), P(A, 4, 14)],
            [P(A, 1, 11), P(A, 5, 15)],
            [P(A, 2, 12), P(B, 0, 5)],
            [P(A, 3, 13), P(B, 1, 6)],
        ],
        V3_IDS,
    ),
    "offsets_v3_rescaled": (
        [
            [P(A, 0, 11), P(A, 3, 14), P(A, 4, 15)],
            [P(A, 1, 12), P(A, 5, 16), P(B, 1, 6)],
            [P(A, 2, 13), P(B, 0, 5)],
        ],
        V3_IDS,
    ),
    "offsets_v3_slot_layout": (
        [[P("t-e9b8c9eaa32e4c05813c768928029c0e", 0, 12)]],
        {"t-e9b8c9eaa32e4c05813c768928029c0e": "QicyvDFDQ/mKDvsSWhUxzQ"},
    ),
}


@pytest.mark.parametrize("name", sorted(V3_FIXTURES))
def test_real_version_3_offset_logs_resume_exactly_and_are_written_as_version_4(name: str) -> None:
    slots, ids = V3_FIXTURES[name]
    written = (FIXTURES / name).read_text().splitlines()[-1]
    assert json.loads(written)["version"] == 3
    document = SlotsDocument.from_json(written)
    assert document.state == OffsetState.of(slots)
    assert document.state.slots == OffsetState.of(slots).slots  # each partition in its slot
    assert dict(document.topic_ids) == ids
    data = document.to_dict()
    assert data["version"] == 4
    assert SlotsDocument.from_dict(data) == document
    if isinstance(data["slots"], int):  # the topic layout: each id moves into its entry
        assert "topicIds" not in data
        assert {topic: entry["id"] for topic, entry in data["topics"].items()} == ids
        assert len(json.dumps(data)) < len(written)
    else:
        assert data["topicIds"] == ids
        assert len(json.dumps(data)) == len(written)


def test_ids_of_topics_without_partitions_stay_in_topic_ids() -> None:
    # "audit" is still subscribed but has no partition now; "legacy" came from version 1.
    state = rebalance(
        OffsetState.empty(), 3, [P(t, p, 10**9) for t in ("orders", "legacy") for p in range(6)]
    ).state
    ids = {"orders": "b1XqV8AbT0mP3xk2Zc9yWw", "audit": "Zz9Pq0Rr1Ss2Tt3Uu4Vv5w"}
    data = SlotsDocument(state, topic_ids=ids).to_dict()
    assert list(data) == ["version", "slots", "topics", "topicIds"]
    assert data["topics"]["orders"]["id"] == ids["orders"]
    assert list(data["topics"]["legacy"]) == ["offsets"]  # no id known: no "id"
    assert data["topicIds"] == {"audit": ids["audit"]}
    back = SlotsDocument.from_dict(data)
    assert dict(back.topic_ids) == ids
    assert back.state == state


def test_the_slot_layout_of_version_4_keeps_every_id_in_topic_ids() -> None:
    state = OffsetState.of([[P("orders", 0, 5)]])
    data = SlotsDocument(state, topic_ids={"orders": "b1Xq", "audit": "Zz9"}).to_dict()
    assert data == {
        "version": 4,
        "slots": [{"orders": {"0": 5}}],
        "topicIds": {"audit": "Zz9", "orders": "b1Xq"},
    }
    assert SlotsDocument.from_dict(data).topic_ids == {"audit": "Zz9", "orders": "b1Xq"}


def test_an_id_in_topic_ids_for_a_topic_whose_entry_has_none_is_read() -> None:
    # Not what the writer writes (it puts the id in the entry), but it says one thing only.
    data = {"version": 4, "slots": 1, "topics": {"t": {"offsets": [1]}}, "topicIds": {"t": "X"}}
    document = SlotsDocument.from_dict(data)
    assert dict(document.topic_ids) == {"t": "X"}
    assert document.state == OffsetState.of([[P("t", 0, 1)]])


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"version": 4, "slots": 1, "topics": {"orders": {"id": 5, "offsets": [1]}}},
            "topics['orders']['id']: a topic id must be a non-empty string, got integer 5",
        ),
        (
            {"version": 4, "slots": 1, "topics": {"orders": {"id": "", "offsets": [1]}}},
            "topics['orders']['id']: a topic id must be a non-empty string, got string ''",
        ),
        (
            {"version": 4, "slots": 1, "topics": {"orders": {"id": None, "offsets": [1]}}},
            "topics['orders']['id']: a topic id must be a non-empty string, got null",
        ),
        (
            {"version": 4, "slots": 1, "topics": {"orders": {"id": ["X"], "offsets": [1]}}},
            "topics['orders']['id']: a topic id must be a non-empty string, got array",
        ),
        (
            {"version": 3, "slots": 1, "topics": {"orders": {"id": "X", "offsets": [1]}}},
            "topics['orders']['id']: 'id' is a key of version 4 documents; a version 3 "
            "document keeps its topic ids in 'topicIds'",
        ),
        (
            {
                "version": 4,
                "slots": 1,
                "topics": {"orders": {"id": "X", "offsets": [1]}},
                "topicIds": {"orders": "X"},
            },
            "topicIds['orders']: the id of topic 'orders' is given twice, here and in "
            "topics['orders']['id']; in version 4, 'topicIds' only holds the ids of topics "
            "that have no entry in 'topics'",
        ),
        (
            {"version": 4, "slots": 1, "topics": {"orders": {"ids": "X", "offsets": [1]}}},
            "topics['orders']: unknown key 'ids'; a topic has 'id', 'partitions', 'offsets', "
            "'slots'",
        ),
        (
            {"version": 4, "slots": 1, "topics": {"o": {"offsets": [1]}}, "topicIds": {"t": 1}},
            "topicIds['t']: a topic id must be a non-empty string, got integer 1",
        ),
    ],
)
def test_bad_ids_in_the_topic_layout_are_refused_with_their_path(
    data: dict[str, Any], expected: str
) -> None:
    with pytest.raises(OffsetDocumentError) as info:
        SlotsDocument.from_dict(data)
    assert str(info.value) == expected


def test_an_id_listed_twice_in_an_entry_is_refused() -> None:
    with pytest.raises(
        OffsetDocumentError, match=re.escape("topics['t']: key 'id' is listed twice")
    ):
        SlotsDocument.from_json(
            '{"version":4,"slots":1,"topics":{"t":{"id":"a","id":"b","offsets":[1]}}}'
        )


def _many_small_topics(partitions: int) -> tuple[SlotsDocument, str]:
    """Make the benchmark's many-topics case: 100 topics of ``partitions``, a slot each.

    Names as ``benchmarks.running_queries.many_partitions`` makes them (23 or 24 characters
    at 10 partitions a topic), 22-character Kafka topic ids, 3-digit offsets. Returns our
    document and the built-in source's offsets of the same partitions, as Spark writes them
    (compact).
    """
    names = [f"many-t100x{partitions}-3f9c2a1e-{index}" for index in range(100)]
    live = [
        P(name, p, 100 + (7 * p + index) % 900)
        for index, name in enumerate(names)
        for p in range(partitions)
    ]
    state = rebalance(OffsetState.empty(), len(live), live).state
    ids = {name: f"{index:02d}XqV8AbT0mP3xk2Zc9yWw"[:22] for index, name in enumerate(names)}
    builtin: dict[str, dict[str, int]] = {}
    for sub in sorted(live, key=lambda s: (s.topic, s.partition)):
        builtin.setdefault(sub.topic, {})[str(sub.partition)] = sub.offset
    return SlotsDocument(state, topic_ids=ids), json.dumps(builtin, separators=(",", ":"))


def test_many_small_topics_are_named_once_each() -> None:
    document, _ = _many_small_topics(10)
    data = document.to_dict()
    assert "topicIds" not in data
    assert all(list(entry) == ["id", "offsets"] for entry in data["topics"].values())
    # Version 3 named every topic a second time, in topicIds: 100 names and quotes gone.
    v3 = {
        "version": 3,
        "slots": data["slots"],
        "topics": {topic: {"offsets": entry["offsets"]} for topic, entry in data["topics"].items()},
        "topicIds": dict(document.topic_ids),
    }
    saved = len(json.dumps(v3)) - len(json.dumps(data))
    # Per topic, '"<name>": ' gives way to '"id": '; the section's frame goes, and the one
    # separator topicIds' last id did without is now written after every entry's id.
    names = sum(len(f'"{topic}": ') - len('"id": ') for topic in data["topics"])
    assert saved == names + len(', "topicIds": {}') - len(", ")


@pytest.mark.parametrize("partitions", [15, 20, 100])
def test_many_topics_of_15_partitions_or_more_are_below_the_builtin_offsets(
    partitions: int,
) -> None:
    # Per topic ours holds the id ('"id": "<22>", ', 32 characters) and '"offsets": ', the
    # built-in source a key per partition ('"<p>":', three characters or more per partition
    # beyond ours). At 10 partitions a topic the id still costs more than the keys save:
    # 12,531 characters against the built-in's 10,891 (11,127 in compact JSON).
    document, builtin = _many_small_topics(partitions)
    assert len(json.dumps(document.to_dict())) < len(builtin)


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


_absent = st.sampled_from(["b-kept", "gone", "zz"])  # subscribed, no partition now
_ids = st.text(alphabet="ABCxyz019+/", min_size=1, max_size=24)


@settings(max_examples=400, deadline=None)
@given(
    state=_states(),
    data=st.data(),
    extras=st.sampled_from([{}, {"eventTime": {"x": [1, None]}}]),
)
def test_any_document_round_trips_through_version_4_and_is_never_longer_than_version_2(
    state: OffsetState, data: st.DataObject, extras: dict[str, Any]
) -> None:
    # Ids for none, some or all of the state's topics, and maybe for topics it does not hold.
    topics = sorted({s.topic for s in state.sub_states()})
    named = data.draw(st.lists(st.sampled_from(topics), unique=True)) if topics else []
    absent = data.draw(st.lists(_absent, unique=True, max_size=2))
    topic_ids = {topic: data.draw(_ids) for topic in [*named, *absent]}
    document = SlotsDocument(state, extras, topic_ids)
    written = json.dumps(document.to_dict())  # as PySpark writes the offset log
    back = SlotsDocument.from_dict(json.loads(written))
    assert back == document
    assert back.state.slots == state.slots
    assert dict(back.topic_ids) == topic_ids
    assert json.dumps(back.to_dict()) == written
    assert SlotsDocument.from_json(document.to_json()) == document
    # Each id is written once, in its entry in the topic layout, else in topicIds.
    out = json.loads(written)
    entries = out["topics"] if isinstance(out["slots"], int) else {}
    in_entries = {topic: entry["id"] for topic, entry in entries.items() if "id" in entry}
    assert all(list(entry)[0] == "id" for entry in entries.values() if "id" in entry)
    assert in_entries == {topic: i for topic, i in topic_ids.items() if topic in entries}
    others = {topic: i for topic, i in topic_ids.items() if topic not in entries}
    assert out.get("topicIds", {}) == others
    assert ("topicIds" in out) == bool(others)
    # Whichever layout the writer took, the topic layout reads back to the same state too.
    sections = {"slots": state.num_slots, "topics": topic_layout(state, topic_ids)}
    left = {topic: i for topic, i in sorted(topic_ids.items()) if topic not in sections["topics"]}
    if left:
        sections["topicIds"] = left
    by_topic = SlotsDocument.from_json(json.dumps({"version": 4, **sections}))
    assert by_topic.state.slots == state.slots
    assert dict(by_topic.topic_ids) == topic_ids
    # The shortcut that skips making the slot layout is never wrong when it answers yes.
    if _surely_shorter(sections, state, topic_ids):
        by_slot = json.loads(v2_json(SlotsDocument(state, topic_ids=topic_ids)))
        del by_slot["version"]
        assert len(json.dumps(sections)) <= len(json.dumps(by_slot))
        compact = {"separators": (",", ":")}
        assert len(json.dumps(sections, **compact)) <= len(json.dumps(by_slot, **compact))
    assert len(written) <= len(v2_json(document))
    assert len(document.to_json()) <= len(v2_json(document, separators=(",", ":")))
