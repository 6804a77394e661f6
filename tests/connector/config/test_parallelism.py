"""``parallelism``: one value for unset, ``auto`` and a count, and the slot count it gives."""

from __future__ import annotations

import pytest

import kafka_rescalable.driver.slots as slots
from kafka_rescalable.config.options import Parallelism, parse_options
from kafka_rescalable.driver.slots import slot_count

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "orders"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, Parallelism.unset()),
        ("auto", Parallelism.auto()),
        (" Auto ", Parallelism.auto()),
        ("6", Parallelism.fixed(6)),
        (" 3", Parallelism.fixed(3)),
    ],
)
def test_the_option_becomes_one_value(text: str | None, expected: Parallelism) -> None:
    options = BASE if text is None else {**BASE, "parallelism": text}
    assert parse_options(options, "stream").parallelism == expected


@pytest.mark.parametrize(
    ("kind", "count"),
    [("fixed", None), ("fixed", 0), ("fixed", True), ("auto", 4), ("unset", 1), ("some", None)],
)
def test_a_value_that_would_mean_two_things_is_refused(kind: str, count: object) -> None:
    with pytest.raises(ValueError):
        Parallelism(kind, count)  # type: ignore[arg-type]


def test_it_reads_as_the_user_wrote_it() -> None:
    assert [str(Parallelism.unset()), str(Parallelism.auto()), str(Parallelism.fixed(4))] == [
        "unset",
        "auto",
        "4",
    ]


def test_unset_gives_one_slot_per_partition() -> None:
    options = parse_options(BASE, "stream")
    assert slot_count(options, partition_count=5) == 5
    assert slot_count(options, partition_count=0) == 1
    assert slot_count(options, partition_count=5, current_slots=2) == 5


def test_a_count_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slots, "application_cores", lambda url: pytest.fail("asked for cores"))
    options = parse_options({**BASE, "parallelism": "3"}, "stream")
    assert slot_count(options, partition_count=8, current_slots=5) == 3


def test_auto_follows_the_cores_and_keeps_the_slots_when_none_are_known(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str | None] = []
    cores: list[int | None] = [6, None, None]

    def application_cores(url: str | None) -> int | None:
        asked.append(url)
        return cores.pop(0)

    monkeypatch.setattr(slots, "application_cores", application_cores)
    options = parse_options(
        {**BASE, "parallelism": "auto", "parallelismUiUrl": "http://driver:4040"}, "stream"
    )
    assert slot_count(options, partition_count=4) == 6
    assert slot_count(options, partition_count=4, current_slots=6) == 6
    assert slot_count(options, partition_count=4) == 4
    assert asked == ["http://driver:4040"] * 3
