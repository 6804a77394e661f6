"""The batch boundary, decided without Kafka or Spark: conservation, caps, targets, waits."""

from __future__ import annotations

from dataclasses import dataclass
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rescalable.state import (
    OffsetState,
    PartitionOffset,
    SlotsDocument,
    TopicPartition,
    rebalance,
)
from kafka_rescalable.state.batch_boundary import (
    HELD_BY_ALIGNMENT,
    HELD_BY_BYTES,
    HELD_BY_CAP,
    HELD_BY_TARGET,
    Carried,
    KafkaNow,
    must_wait,
    plan_batch_end,
    reconcile,
    target_ends,
)
from kafka_rescalable.state.byte_cap import ByteCap
from kafka_rescalable.state.missing_topics import MissingTopicWatch

TOPICS = ("a", "b", "c")
ALL = [TopicPartition(t, p) for t in TOPICS for p in range(3)]


@dataclass(frozen=True)
class Scenario:
    """A checkpointed batch start and what Kafka holds at the next boundary."""

    document: SlotsDocument
    kafka: KafkaNow
    earliest: dict[TopicPartition, int]


def document_of(
    offsets: dict[TopicPartition, int], slots: int, ids: dict[str, str]
) -> SlotsDocument:
    sub_states = [PartitionOffset(tp.topic, tp.partition, o) for tp, o in offsets.items()]
    state = rebalance(OffsetState.of([]), slots, sub_states).state
    return SlotsDocument(state, topic_ids=ids)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    checkpointed = draw(st.lists(st.sampled_from(ALL), unique=True))
    offsets = {tp: draw(st.integers(0, 50)) for tp in checkpointed}
    old_ids = {t: f"{t}-1" for t in TOPICS if draw(st.booleans())}
    live = frozenset(draw(st.lists(st.sampled_from(ALL), unique=True)))
    recreate = {t for t in TOPICS if draw(st.booleans()) and draw(st.booleans())}
    new_ids = {
        tp.topic: f"{tp.topic}-2" if tp.topic in recreate else f"{tp.topic}-1" for tp in live
    }
    latest = {tp: draw(st.integers(0, 80)) for tp in live}
    earliest = {tp: draw(st.integers(0, latest[tp])) for tp in live}
    slots = draw(st.integers(1, 4))
    return Scenario(document_of(offsets, slots, old_ids), KafkaNow(live, new_ids, latest), earliest)


def plan(scenario: Scenario, fail: bool = False, **kwargs):  # noqa: ANN201
    target = kwargs.pop("target", None)
    carried = reconcile(scenario.document, scenario.kafka, fail_on_data_loss=fail, target=target)
    ends = target_ends(carried, scenario.kafka.latest, target)
    end = plan_batch_end(
        scenario.document,
        carried,
        scenario.kafka,
        earliest={tp: scenario.earliest[tp] for tp in carried.joining},
        slots=kwargs.pop("slots", scenario.document.state.num_slots),
        ends=ends,
        **kwargs,
    )
    return carried, end


@given(scenarios(), st.integers(1, 4))
def test_the_planner_s_settled_shortcut_plans_what_the_rebalancer_would(
    scenario: Scenario, slots: int
) -> None:
    _, end = plan(scenario, slots=slots)
    with patch("kafka_rescalable.state.batch_boundary.settled", return_value=False):
        _, again = plan(scenario, slots=slots)
    assert again == end


@given(scenarios())
def test_every_live_partition_is_in_exactly_one_slot_and_nothing_else_is(
    scenario: Scenario,
) -> None:
    carried, end = plan(scenario)
    state = end.document.state if end.document else scenario.document.state
    owned = [sub.topic_partition for slot in state.slots for sub in slot]
    assert len(owned) == len(set(owned)), "a partition is in two slots"
    if end.document is not None:
        assert set(owned) == set(scenario.kafka.partitions)
    assert carried.live == scenario.kafka.partitions


@given(scenarios())
def test_conservation_across_data_loss(scenario: Scenario) -> None:
    """Each partition goes on from where it was, or joins at its earliest offset: never skips."""
    carried, end = plan(scenario)
    if end.document is None:
        return
    before = scenario.document.state.offsets()
    after = end.document.state.offsets()
    for tp, at in after.items():
        if tp in carried.joining:
            assert at == scenario.earliest[tp], f"{tp} joins at its earliest offset"
        elif scenario.kafka.latest[tp] < before[tp]:  # same topic id: on from the new end
            assert at == scenario.kafka.latest[tp]
        else:
            assert before[tp] <= at <= scenario.kafka.latest[tp]
    recreated = set(carried.recreated)
    gone = {tp for tp in before if tp not in scenario.kafka.partitions}
    went_back = {
        tp for tp in before
        if tp in scenario.kafka.latest and scenario.kafka.latest[tp] < before[tp]
    }
    lost = gone | went_back | {tp for tp in before if tp.topic in recreated}
    assert bool(carried.losses) == bool(lost or recreated)
    assert not any(loss.fatal for loss in carried.losses)


@given(scenarios())
def test_fail_on_data_loss_makes_every_loss_fatal(scenario: Scenario) -> None:
    carried = reconcile(scenario.document, scenario.kafka, fail_on_data_loss=True)
    assert all(loss.fatal for loss in carried.losses)


@given(scenarios(), st.integers(1, 200))
@settings(max_examples=200)
def test_the_cap_is_kept_and_never_starves_a_partition(scenario: Scenario, cap: int) -> None:
    carried, end = plan(scenario, max_records=cap)
    if end.document is None:
        return
    after = end.document.state.offsets()
    known = carried.known
    read = {tp: after[tp] - known[tp] for tp in known if tp in after}
    assert sum(read.values()) <= cap
    with_data = [tp for tp in known if scenario.kafka.latest.get(tp, 0) > known[tp]]
    if cap >= len(with_data):
        assert all(read[tp] >= 1 for tp in with_data), read
    for tp in with_data:
        if after[tp] < scenario.kafka.latest[tp]:
            assert end.held_back[tp] == HELD_BY_CAP


@given(scenarios(), st.data())
def test_available_now_never_passes_its_target(scenario: Scenario, data: st.DataObject) -> None:
    partitions = sorted(scenario.kafka.partitions)
    target = {
        tp: data.draw(st.integers(0, scenario.kafka.latest[tp]))
        for tp in data.draw(st.lists(st.sampled_from(partitions), unique=True))
    } if partitions else {}
    carried, end = plan(scenario, target=target, max_records=data.draw(st.integers(1, 100)))
    checkpointed = {
        tp for tp in scenario.document.state.offsets() if tp.topic not in carried.recreated
    }
    assert carried.live <= (frozenset(target) | checkpointed)
    if end.document is None:
        return
    before = scenario.document.state.offsets()
    for tp, at in end.document.state.offsets().items():
        if tp in target and tp in carried.known:
            assert at <= max(target[tp], before[tp])
        if at < scenario.kafka.latest[tp] and tp in target and at == target[tp] < (
            scenario.kafka.latest[tp]
        ):
            assert end.held_back.get(tp) in (HELD_BY_TARGET, None)


def test_alignment_holds_are_named_before_the_cap() -> None:
    tp0, tp1 = TopicPartition("a", 0), TopicPartition("a", 1)
    document = document_of({tp0: 0, tp1: 0}, 1, {"a": "a-1"})
    kafka = KafkaNow(frozenset({tp0, tp1}), {"a": "a-1"}, {tp0: 10, tp1: 10})
    carried = reconcile(document, kafka, fail_on_data_loss=True)
    ends = target_ends(carried, kafka.latest, None)
    end = plan_batch_end(
        document, carried, kafka, earliest={}, slots=1, ends=ends,
        aligned={tp0: 10, tp1: 4}, event_time={"clocks": {}}, max_records=12,
    )
    assert end.document is not None
    assert end.held_back[tp1] == HELD_BY_ALIGNMENT
    assert end.document.state.offsets()[tp1] <= 4
    assert sum(end.document.state.offsets().values()) <= 12
    assert end.document.extras["eventTime"] == {"clocks": {}}


def test_nothing_new_plans_no_batch_and_reports_the_backlog() -> None:
    tp0 = TopicPartition("a", 0)
    document = document_of({tp0: 7}, 1, {"a": "a-1"})
    kafka = KafkaNow(frozenset({tp0}), {"a": "a-1"}, {tp0: 7})
    _, end = plan(Scenario(document, kafka, {tp0: 0}))
    assert end.document is None
    assert end.backlog["total"] == 0


def test_a_recreated_topic_joins_at_its_earliest_offset_with_its_new_id() -> None:
    tp0 = TopicPartition("a", 0)
    document = document_of({tp0: 70}, 1, {"a": "old"})
    kafka = KafkaNow(frozenset({tp0}), {"a": "new"}, {tp0: 90})
    carried, end = plan(Scenario(document, kafka, {tp0: 3}))
    assert carried.recreated == ("a",) and carried.joining == {tp0}
    assert "id old -> new" in carried.losses[0].message
    assert end.document is not None
    assert end.document.state.offsets() == {tp0: 3}
    assert end.document.topic_ids == {"a": "new"}


def test_an_end_gone_back_with_the_same_id_goes_on_from_the_new_end() -> None:
    tp0 = TopicPartition("a", 0)
    document = document_of({tp0: 70}, 1, {"a": "a-1"})
    kafka = KafkaNow(frozenset({tp0}), {"a": "a-1"}, {tp0: 60})
    carried, end = plan(Scenario(document, kafka, {tp0: 0}))
    assert not carried.joining
    assert "unclean leader election" in carried.losses[0].message
    assert end.document is not None and end.document.state.offsets() == {tp0: 60}


def test_without_an_id_an_end_gone_back_starts_again_at_the_earliest_offset() -> None:
    tp0 = TopicPartition("a", 0)
    document = document_of({tp0: 70}, 1, {})
    kafka = KafkaNow(frozenset({tp0}), {"a": "a-1"}, {tp0: 60})
    carried, end = plan(Scenario(document, kafka, {tp0: 5}))
    assert carried.joining == {tp0}
    assert end.document is not None and end.document.state.offsets() == {tp0: 5}


@given(
    st.integers(0, 300), st.integers(1, 200), st.floats(0, 10_000), st.booleans(), st.booleans()
)
def test_must_wait_only_below_the_minimum_and_before_the_delay(
    waiting: int, minimum: int, since_ms: float, must_read: bool, joining: bool
) -> None:
    tp0, tp1 = TopicPartition("a", 0), TopicPartition("a", 1)
    carried = Carried(
        known={tp0: 0}, live=frozenset({tp0, tp1} if joining else {tp0}),
        joining=frozenset({tp1}) if joining else frozenset(),
    )
    wait = must_wait(
        carried, {tp0: waiting}, min_records=minimum, max_trigger_delay_ms=5_000,
        now_ms=10_000.0 + since_ms, last_batch_ms=10_000.0, must_read=must_read,
    )
    assert wait == (waiting < minimum and since_ms < 5_000 and not must_read and not joining)
    assert not must_wait(
        carried, {tp0: waiting}, min_records=None, max_trigger_delay_ms=5_000,
        now_ms=0.0, last_batch_ms=0.0, must_read=False,
    )


def test_a_missing_topic_is_told_once_and_fails_after_the_timeout() -> None:
    watch = MissingTopicWatch()
    first = watch.check(["typo"], ["orders"], now_s=100.0, timeout_ms=30_000)
    assert first.new == ("typo",) and first.overdue == ()
    later = first.watch.check(["typo"], [], now_s=120.0, timeout_ms=30_000)
    assert later.new == () and later.overdue == ()
    overdue = later.watch.check(["typo"], [], now_s=130.0, timeout_ms=30_000)
    assert overdue.overdue == ("typo",)


def test_a_topic_once_seen_is_never_a_typo_and_a_returning_topic_starts_over() -> None:
    watch = MissingTopicWatch().check([], ["orders"], now_s=0.0, timeout_ms=1_000).watch
    assert watch.check(["orders"], [], now_s=50.0, timeout_ms=1_000).overdue == ()
    gone = watch.check(["typo"], [], now_s=0.0, timeout_ms=1_000).watch
    back = gone.check([], ["typo"], now_s=0.5, timeout_ms=1_000).watch
    assert back.since == {}


@pytest.mark.parametrize("fail", [True, False])
def test_removed_partitions_are_named(fail: bool) -> None:
    tp0, tp1 = TopicPartition("a", 0), TopicPartition("a", 1)
    document = document_of({tp0: 1, tp1: 1}, 1, {"a": "a-1"})
    kafka = KafkaNow(frozenset({tp0}), {"a": "a-1"}, {tp0: 1})
    carried = reconcile(document, kafka, fail_on_data_loss=fail)
    (loss,) = carried.losses
    assert loss.fatal is fail and loss.message.startswith("a-1 no longer exist")


def test_the_byte_cap_ends_the_batch_and_names_itself() -> None:
    tp0, tp1 = TopicPartition("a", 0), TopicPartition("a", 1)
    document = document_of({tp0: 0, tp1: 0}, 1, {"a": "a-1"})
    kafka = KafkaNow(frozenset({tp0, tp1}), {"a": "a-1"}, {tp0: 10, tp1: 10})
    carried = reconcile(document, kafka, fail_on_data_loss=True)
    ends = target_ends(carried, kafka.latest, None)
    held = ByteCap({tp0: 3, tp1: 2}, records=5, by_bytes=True)
    end = plan_batch_end(
        document, carried, kafka, earliest={}, slots=1, ends=ends, max_records=8, byte_cap=held
    )
    assert end.document is not None
    assert end.document.state.offsets() == {tp0: 3, tp1: 2}  # the row cap is not applied again
    assert end.held_back == {tp0: HELD_BY_BYTES, tp1: HELD_BY_BYTES}
    by_rows = ByteCap({tp0: 4, tp1: 4}, records=8, by_bytes=False)
    end = plan_batch_end(
        document, carried, kafka, earliest={}, slots=1, ends=ends, max_records=8, byte_cap=by_rows
    )
    assert end.held_back == {tp0: HELD_BY_CAP, tp1: HELD_BY_CAP}
