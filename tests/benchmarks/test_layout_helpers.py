"""The benchmarks' shared pieces: the Markdown table, the watch loop, run.py's table of modes."""

from __future__ import annotations

import pytest

from benchmarks.report import markdown_table
from benchmarks.running_queries.steady import watch


def test_a_markdown_table_aligns_each_column_as_asked() -> None:
    table = markdown_table("name | rows/s", "lr", ["ours | 1,000", "built-in | 2,000"])

    assert table.splitlines() == [
        "| name | rows/s |",
        "|---|--:|",
        "| ours | 1,000 |",
        "| built-in | 2,000 |",
    ]


def test_a_markdown_table_refuses_an_alignment_per_column_that_does_not_fit() -> None:
    with pytest.raises(ValueError, match="align has 1 letters for 2 columns"):
        markdown_table("name | rows/s", "l", [])


class _Query:
    """A stand-in for a ``StreamingQuery`` in this unit test of the loop's own logic."""

    def __init__(self, fails_after: int | None = None, active: bool = True) -> None:
        self.calls = 0
        self.fails_after = fails_after
        self.isActive = active  # noqa: N815 - pyspark's name

    def exception(self) -> str | None:
        self.calls += 1
        if self.fails_after is not None and self.calls > self.fails_after:
            return "boom"
        return None


def test_the_watch_ticks_until_its_time_is_up() -> None:
    ticks: list[float] = []

    watch(_Query(), 0.05, "q", every_s=0.01, tick=ticks.append)

    assert len(ticks) >= 2
    assert ticks == sorted(ticks) and ticks[0] < 0.01


def test_the_watch_fails_naming_the_query_when_it_failed() -> None:
    with pytest.raises(RuntimeError, match="ours at 10/s failed: boom"):
        watch(_Query(fails_after=2), 10.0, "ours at 10/s", every_s=0.001)


def test_the_watch_fails_when_the_query_stopped_on_its_own() -> None:
    with pytest.raises(RuntimeError, match="q stopped on its own"):
        watch(_Query(active=False), 10.0, "q", every_s=0.001)


def test_the_watch_ends_when_asked_to() -> None:
    query = _Query()
    stop = iter([False, False, True])

    watch(query, float("inf"), "q", every_s=0.001, until=lambda: next(stop))

    assert query.calls == 2


def test_every_mode_is_a_choice_and_the_long_ones_run_only_when_named() -> None:
    from benchmarks.run import MODES, _parser

    only = next(a for a in _parser()._actions if a.dest == "only")
    assert tuple(only.choices) == tuple(MODES)
    defaults = [name for name, mode in MODES.items() if mode.default]
    assert defaults == ["rebalancer", "planning", "throughput", "latency"]
    assert not MODES["rebalancer"].broker
