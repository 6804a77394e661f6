"""The inspector's JSON model: ``--json`` prints it as it is, and the text is written from it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_rescalable.inspect import (
    CheckpointError,
    CheckpointLog,
    batch_json,
    batch_text,
    diff_batches,
    diff_json,
    diff_text,
    main,
    read_checkpoint,
    render_batch,
    render_diff,
)

View = tuple[Any, str, Callable[[Any], str]]


def every_view(log: CheckpointLog) -> Iterator[View]:
    """Yield each view the log has (every batch, every diff) with its text and its renderer."""
    for batch in log.batches:
        yield batch_json(log, batch), render_batch(log, batch), batch_text
    ids = [batch.batch_id for batch in log.batches]
    for first in ids:
        for last in (i for i in ids if i >= first):
            try:
                diffs = diff_batches(log, first, last)
            except CheckpointError:
                continue
            yield diff_json(log, diffs), render_diff(log, diffs), diff_text


def test_text_rendered_from_the_json_round_trip_is_the_text(checkpoint: Path) -> None:
    views = list(every_view(read_checkpoint(checkpoint)))
    assert len(views) >= 5
    for view, text, render in views:
        printed = json.dumps(view, indent=2)
        assert json.loads(printed) == view  # JSON values only: no tuple, Path or int key
        assert render(json.loads(printed)) == text


def test_text_from_the_printed_json_is_the_printed_text(
    checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [batch.batch_id for batch in read_checkpoint(checkpoint).batches]
    commands = [([], batch_text), (["--diff", str(ids[0]), str(ids[-1])], diff_text)]
    commands += [(["--batch", str(batch_id)], batch_text) for batch_id in ids]
    for args, render in commands:
        assert main([str(checkpoint), *args]) == 0
        text = capsys.readouterr().out
        assert main([str(checkpoint), *args, "--json"]) == 0
        assert render(json.loads(capsys.readouterr().out)) + "\n" == text, args


def test_the_text_says_what_the_model_says(rescale_checkpoint: Path) -> None:
    log = read_checkpoint(rescale_checkpoint)
    view = batch_json(log, log.batch(2))
    view["last_committed_batch"] = 41
    view["batch"]["sources"][1]["slots"][0]["partitions"][0]["offset"] = 12345
    text = batch_text(view)
    assert "last committed: 41" in text
    assert "    slot 0 (1 partition): a: 0@12345" in text.splitlines()
    diff_view = diff_json(log, diff_batches(log, 0, 3))
    diff_view["diffs"][0]["total_records"] = 7
    assert "records between the two batches (read by batches 1..3): 7" in diff_text(diff_view)


def test_batch_view_of_a_rescaled_log(rescale_checkpoint: Path) -> None:
    log = read_checkpoint(rescale_checkpoint)
    view = batch_json(log, log.batch(2))
    assert (view["batch_ids"], view["latest_batch"], view["last_committed_batch"]) == (
        [0, 1, 2, 3],
        3,
        2,
    )
    assert [(r["first_batch"], r["last_batch"], r["slots"]) for r in view["slot_history"]] == [
        (0, 1, 2),
        (2, 3, 3),
    ]
    assert batch_text(view).splitlines()[1:] == [
        "offset log: batches 0..3 (4 batches), last committed: 2",
        "slots per batch: batch 0..1: 2 slots; batch 2..3: 3 slots",
        "",
        "batch 2: committed, planned at 2026-11-21T14:50:56.176Z, "
        "watermark 2026-11-21T14:49:54.176Z",
        "  source 0: not a kafka-rescalable document (Spark's built-in Kafka source?): "
        '{"orders":{"0":5}}',
        "    --starting-offsets prints the startingOffsets that continue it",
        "  source 1: kafka-rescalable, 3 slots, 4 partitions (topic: partition@next offset)",
        "    slot 0 (1 partition): a: 0@18",
        "    slot 1 (2 partitions): b: 0@12 1@0",
        "    slot 2 (1 partition): a: 1@3",
        '    extra section eventTime: {"drift": {"a-0": 1500}, "maxDriftMs": 60000}',
        "total: 4 partitions in 3 slots",
    ]


def test_diff_view_with_moves_joins_leaves_and_a_regression(rescale_checkpoint: Path) -> None:
    log = read_checkpoint(rescale_checkpoint)
    view = diff_json(log, diff_batches(log, 0, 3))
    (diff,) = view["diffs"]
    assert diff["added"] == [{"topic": "b", "partition": 1, "offset": 4, "slot": 1}]
    assert diff["removed"] == [{"topic": "b", "partition": 0, "offset": 5, "slot": 1}]
    assert diff_text(view).endswith("""
source 1: batch 0 -> batch 3
  slots: 2 -> 3 (changed)
  partitions moved: 1
    a-1: slot 0 -> slot 2
  partitions added: 1
    b-1@4 in slot 1
  partitions removed: 1
    b-0@5 was in slot 1
  records between the two batches (read by batches 1..3): 24
    a-0: 10 -> 30 (+20)
    a-1: 20 -> 9 (-11) (went backwards: records lost?)
    b-1: 0 -> 4 (+4) (joined)""")


def test_a_log_without_commits_says_none(named_checkpoint: Path) -> None:
    log = read_checkpoint(named_checkpoint)
    view = batch_json(log, log.latest)
    assert view["last_committed_batch"] is None
    assert view["unreadable_batches"] == {"1": view["unreadable_batches"]["1"]}
    assert "last committed: none; unreadable: 1 (see --batch)" in batch_text(view)
