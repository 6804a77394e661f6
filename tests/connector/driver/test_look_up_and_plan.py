"""``KafkaMetadata.look_up_and_plan``: the order of lookups, plan and the id check after them.

The Kafka lookups are replaced by scripted answers (the real ones are exercised against a
broker in ``integration_tests/test_offset_lookup.py``); what is checked here is the order of
the steps, when the id check is answered, and what happens to a plan's error when a topic was
re-created.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from typing import Any

import pytest

from kafka_rescalable.config.options import parse_options
from kafka_rescalable.driver.kafka_metadata import KafkaMetadata, LiveTopics
from kafka_rescalable.errors import DataLossError, KafkaMetadataError
from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.batch_boundary import KafkaNow

P0 = TopicPartition("orders", 0)


class Scripted(KafkaMetadata):
    """A ``KafkaMetadata`` whose lookups answer from a script and record their order."""

    def __init__(self, ids_after: list[str], subscription: str = "subscribe") -> None:
        options = parse_options(
            {"kafka.bootstrap.servers": "localhost:9", subscription: "orders"}, "stream"
        )
        super().__init__(options)
        self.steps: list[str] = []
        self._ids_after: Iterator[str] = iter(ids_after)
        self._current = "ID1"  # the id the topic has now
        # As left by the previous batch: the description read after its offsets.
        self._checked = LiveTopics(frozenset({P0}), {"orders": "ID1"})

    def live(self, subscription: object, with_ids: bool = False) -> LiveTopics:
        """Answer that ``orders-0`` exists."""
        self.steps.append("live")
        return LiveTopics(frozenset({P0}))

    def _description(self, topics: Collection[str]) -> LiveTopics:
        """Answer as the topic is now: with the id the last check answered."""
        self.steps.append("describe")
        return LiveTopics(frozenset({P0}), {"orders": self._current})

    def latest(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """Answer an end offset of 10."""
        self.steps.append("latest")
        return {P0: 10}

    def _ask_description(self, topics: Collection[str]) -> dict[str, Any] | None:
        self.steps.append("ask ids")
        return {}

    def _answer_description(
        self, asked: dict[str, Any] | None, topics: Collection[str]
    ) -> LiveTopics:
        self.steps.append("answer ids")
        self._current = next(self._ids_after)
        return LiveTopics(frozenset({P0}), {"orders": self._current})


def planner(
    steps: list[str], failures: list[Exception | None]
) -> Callable[[LiveTopics, KafkaNow], str]:
    """Return a plan that records its call and raises the next scripted failure, if any."""
    calls = iter(failures)

    def plan(found: LiveTopics, now: KafkaNow) -> str:
        steps.append("plan")
        failure = next(calls)
        if failure is not None:
            raise failure
        return f"planned with {found.topic_ids['orders']}"

    return plan


def test_the_id_check_is_sent_after_the_plan_and_answered_when_asked() -> None:
    """``latestOffset`` does not wait for the check; the batch's ``partitions`` does."""
    kafka = Scripted(ids_after=["ID1"])
    planned = kafka.look_up_and_plan(kafka._options.subscription, planner(kafka.steps, [None]))
    assert planned == "planned with ID1"
    assert kafka.steps == ["latest", "plan"]
    kafka.send_check()  # reportLatestOffset
    kafka.send_check()  # sent once
    assert kafka.steps == ["latest", "plan", "ask ids"]
    checked = kafka.checked()
    assert checked is not None and checked.topic_ids == {"orders": "ID1"}
    assert kafka.steps == ["latest", "plan", "ask ids", "answer ids"]
    assert kafka.checked() is checked  # answered once
    assert kafka.steps.count("answer ids") == 1
    kafka.close()


def test_a_check_never_sent_is_sent_when_its_answer_is_needed() -> None:
    kafka = Scripted(ids_after=["ID1"])
    kafka.look_up_and_plan(kafka._options.subscription, planner(kafka.steps, [None]))
    checked = kafka.checked()
    assert checked is not None and checked.topic_ids == {"orders": "ID1"}
    assert kafka.steps == ["latest", "plan", "ask ids", "answer ids"]
    kafka.close()


def test_subscribe_plans_from_the_last_check_without_listing_topics() -> None:
    """The description read after a batch's offsets lists the next batch's partitions."""
    kafka = Scripted(ids_after=["ID1", "ID1"])
    plan = planner(kafka.steps, [None, None])
    kafka.look_up_and_plan(kafka._options.subscription, plan)
    kafka.look_up_and_plan(kafka._options.subscription, plan)
    assert "live" not in kafka.steps and "describe" not in kafka.steps
    # The second batch waits for the first one's check before its own offsets.
    assert kafka.steps == ["latest", "plan", "ask ids", "answer ids", "latest", "plan"]
    kafka.close()


def test_a_first_batch_describes_the_named_topics_before_its_offsets() -> None:
    kafka = Scripted(ids_after=["ID1"])
    kafka._checked = None
    assert kafka.checked() is None
    kafka.look_up_and_plan(kafka._options.subscription, planner(kafka.steps, [None]))
    assert kafka.steps[:2] == ["describe", "latest"]
    kafka.close()


def test_a_pattern_lists_the_topics_every_batch() -> None:
    """Only a listing shows a new topic matching the pattern; the last check gives the ids."""
    kafka = Scripted(ids_after=["ID1"], subscription="subscribePattern")
    planned = kafka.look_up_and_plan(kafka._options.subscription, planner(kafka.steps, [None]))
    assert planned == "planned with ID1"
    assert kafka.steps == ["live", "latest", "plan"]
    kafka.close()


def test_a_topic_re_created_after_the_offsets_shows_in_the_check_not_in_the_plan() -> None:
    """The plan stands; the reader's ``partitions`` reads the new id and skips the topic."""
    kafka = Scripted(ids_after=["ID2"])
    planned = kafka.look_up_and_plan(kafka._options.subscription, planner(kafka.steps, [None]))
    assert planned == "planned with ID1"
    checked = kafka.checked()
    assert checked is not None and checked.topic_ids == {"orders": "ID2"}
    kafka.close()


def test_a_plan_that_failed_across_a_re_creation_is_made_again() -> None:
    kafka = Scripted(ids_after=["ID2", "ID2"])
    lost = DataLossError("offsets went back")
    planned = kafka.look_up_and_plan(
        kafka._options.subscription, planner(kafka.steps, [lost, None])
    )
    assert planned == "planned with ID2"
    assert kafka.steps == [
        "latest", "plan", "ask ids", "answer ids",  # failed: the ids are checked at once
        "describe", "latest", "plan",  # changed: fresh lookups, a new plan
    ]  # fmt: skip
    kafka.close()


def test_an_error_of_a_plan_is_raised_once_the_ids_held() -> None:
    kafka = Scripted(ids_after=["ID1"])
    lost = DataLossError("offsets went back")
    with pytest.raises(DataLossError) as raised:
        kafka.look_up_and_plan(kafka._options.subscription, planner(kafka.steps, [lost]))
    assert raised.value is lost
    assert kafka.steps[-1] == "answer ids"  # the check was waited for before raising
    kafka.close()


def test_ids_that_keep_changing_fail_naming_the_subscription() -> None:
    kafka = Scripted(ids_after=["ID2", "ID3", "ID4"])
    lost = DataLossError("offsets went back")
    with pytest.raises(KafkaMetadataError, match="kept being deleted and re-created"):
        kafka.look_up_and_plan(
            kafka._options.subscription, planner(kafka.steps, [lost, lost, lost])
        )
    assert kafka.steps.count("plan") == 3
    kafka.close()
