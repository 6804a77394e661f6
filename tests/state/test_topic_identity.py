"""Topic ids across batches: re-creation is told by the id, never by offsets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_rescalable.state import carried_topic_ids, recreated_topics

topics = st.sampled_from(["a", "b", "c", "d"])
ids = st.dictionaries(topics, st.sampled_from(["X", "Y", "Z"]))


def test_only_a_topic_known_on_both_sides_with_another_id_is_recreated() -> None:
    checkpointed = {"orders": "AAA", "audit": "BBB", "gone": "CCC"}
    live = {"orders": "AAA", "audit": "NEW", "fresh": "DDD"}
    assert recreated_topics(checkpointed, live) == ("audit",)


def test_a_checkpoint_without_ids_sees_no_recreation() -> None:
    assert recreated_topics({}, {"orders": "AAA"}) == ()


@given(ids, ids)
def test_recreated_topics_are_exactly_the_changed_ids(
    checkpointed: dict[str, str], live: dict[str, str]
) -> None:
    found = recreated_topics(checkpointed, live)
    assert list(found) == sorted(found)
    for topic in set(checkpointed) | set(live):
        changed = topic in checkpointed and topic in live and checkpointed[topic] != live[topic]
        assert (topic in found) == changed


def test_carried_ids_prefer_kafka_now_and_keep_the_old_id_when_kafka_gave_none() -> None:
    carried = carried_topic_ids(
        {"orders": "OLD", "audit": "A1"}, {"orders": "NEW"}, {"orders", "audit", "unknown"}
    )
    assert carried == {"orders": "NEW", "audit": "A1"}


@given(ids, ids, st.sets(topics))
def test_carried_ids_cover_only_the_asked_topics(
    checkpointed: dict[str, str], live: dict[str, str], wanted: set[str]
) -> None:
    carried = carried_topic_ids(checkpointed, live, wanted)
    assert set(carried) == {t for t in wanted if t in live or t in checkpointed}
    assert all(carried[t] == live.get(t, checkpointed.get(t)) for t in carried)
