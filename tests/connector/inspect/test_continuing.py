"""``--starting-offsets``: the offsets that continue a checkpointed query.

From offset logs in Spark's own file format: the built-in ``kafka`` source's lines, and ours.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_rescalable.inspect import main, read_checkpoint
from kafka_rescalable.inspect.continuing import continuation
from kafka_rescalable.inspect.reading import SourceKind
from kafka_rescalable.state import OffsetState, PartitionOffset, SlotsDocument

P = PartitionOffset
MakeLog = Callable[..., Path]
# The built-in source over two topics, partitions in no particular order, as Spark writes them.
BUILTIN_BATCHES = {
    0: ['{"orders":{"1":0,"0":0},"audit":{"0":0}}'],
    1: ['{"orders":{"1":40,"0":35},"audit":{"0":3}}'],
    2: ['{"orders":{"10":7,"1":52,"0":61},"audit":{"0":9}}'],
    3: ['{"orders":{"10":9,"1":80,"0":75},"audit":{"0":12}}'],
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def slots_line(*slots: list[PartitionOffset]) -> str:
    return SlotsDocument(OffsetState.of(slots)).to_json()


@pytest.fixture
def builtin_checkpoint(make_log: MakeLog) -> Path:
    """Batches 0..2 committed, batch 3 only planned."""
    return make_log(BUILTIN_BATCHES, committed={0, 1, 2})


def test_the_end_of_the_last_committed_batch_is_printed_alone_ready_for_a_shell(
    builtin_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, str(builtin_checkpoint), "--starting-offsets")
    assert (code, err) == (0, "")
    # Batch 3 has no commit: Spark runs it again on restart, so its end is not used.
    assert out == '{"audit":{"0":9},"orders":{"0":61,"1":52,"10":7}}\n'


def test_once_the_last_batch_is_committed_its_end_is_used(
    make_log: MakeLog, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = make_log(BUILTIN_BATCHES, committed={0, 1, 2, 3})
    code, out, _ = run(capsys, str(checkpoint), "--starting-offsets")
    assert code == 0
    assert json.loads(out) == {"audit": {"0": 12}, "orders": {"0": 75, "1": 80, "10": 9}}


def test_json_names_the_batch_and_the_source(
    builtin_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, str(builtin_checkpoint), "--starting-offsets", "--json")
    assert code == 0
    assert json.loads(out) == {
        "checkpoint": str(builtin_checkpoint),
        "last_committed_batch": 2,
        "sources": [
            {
                "source": "0",
                "kind": "other source",
                "startingOffsets": {"audit": {"0": 9}, "orders": {"0": 61, "1": 52, "10": 7}},
            }
        ],
    }


def test_several_sources_give_a_line_each_and_source_picks_one(
    rescale_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Source 0 is the built-in source, source 1 ours; batch 3 is planned, not committed.
    checkpoint = str(rescale_checkpoint)
    code, out, _ = run(capsys, checkpoint, "--starting-offsets")
    assert code == 0
    assert out.splitlines() == [
        'source 0: {"orders":{"0":5}}',
        'source 1: {"a":{"0":18,"1":3},"b":{"0":12,"1":0}}',
    ]
    code, out, _ = run(capsys, checkpoint, "--starting-offsets", "--source", "1")
    assert (code, out) == (0, '{"a":{"0":18,"1":3},"b":{"0":12,"1":0}}\n')
    code, _, err = run(capsys, checkpoint, "--starting-offsets", "--source", "7")
    assert code == 2
    assert "the last committed batch, 2, has no source 7 (sources: 0, 1)" in err


def test_named_sources_and_a_source_without_offset(
    make_log: MakeLog, capsys: pytest.CaptureFixture[str]
) -> None:
    batches = {
        0: ["clicks:-", 'orders:{"orders":{"0":4}}'],
        1: ["clicks:-", 'orders:{"orders":{"0":9}}'],
    }
    checkpoint = str(make_log(batches, committed={0, 1}, header="v2"))
    code, out, _ = run(capsys, checkpoint, "--starting-offsets")
    assert (code, out) == (0, '{"orders":{"0":9}}\n')
    code, _, err = run(capsys, checkpoint, "--starting-offsets", "--source", "clicks")
    assert code == 2
    assert "batch 1, source clicks holds no Kafka offsets (no offset: -)" in err


def test_sources_of_other_kinds_are_left_out(
    make_log: MakeLog, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = make_log({0: ['{"logOffset":3}', '{"t":{"0":8}}', "42"]}, committed={0})
    found = continuation(read_checkpoint(checkpoint))
    assert [(s.source_key, s.kind) for s in found.sources] == [("1", SourceKind.FOREIGN)]
    code, out, _ = run(capsys, str(checkpoint), "--starting-offsets")
    assert (code, out) == (0, '{"t":{"0":8}}\n')
    files_only = make_log({0: ['{"logOffset":3}']}, committed={0})
    code, _, err = run(capsys, str(files_only), "--starting-offsets")
    assert code == 2
    assert "the last committed batch, 0, holds no Kafka offsets (sources: 0)" in err


def test_our_own_checkpoint_continues_the_same_way(
    make_log: MakeLog, capsys: pytest.CaptureFixture[str]
) -> None:
    batches = {
        0: [slots_line([P("t", 0, 4)], [P("t", 1, 6)])],
        1: [slots_line([P("t", 0, 9), P("t", 1, 8)])],
    }
    checkpoint = str(make_log(batches, committed={0}))
    code, out, _ = run(capsys, checkpoint, "--starting-offsets", "--json")
    assert code == 0
    (source,) = json.loads(out)["sources"]
    assert source["kind"] == "kafka-rescalable"
    assert source["startingOffsets"] == {"t": {"0": 4, "1": 6}}


def test_nothing_committed_is_an_error_that_says_what_to_do(
    make_log: MakeLog, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = make_log({0: ['{"t":{"0":8}}']}, committed=())
    code, out, err = run(capsys, str(checkpoint), "--starting-offsets")
    assert (code, out) == (2, "")
    assert "no batch is committed yet (planned: 0)" in err
    assert "the old one's own startingOffsets" in err
    assert len(err.splitlines()) == 1


def test_an_unreadable_last_committed_batch_is_not_skipped(
    make_log: MakeLog, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = make_log({0: ['{"t":{"0":8}}'], 1: "v1\n"}, committed={0, 1})
    code, _, err = run(capsys, str(checkpoint), "--starting-offsets")
    assert code == 2
    assert "the last committed batch, 1, cannot be read: offsets/1 has no metadata line" in err


def test_source_needs_starting_offsets_and_the_views_exclude_each_other(
    builtin_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, str(builtin_checkpoint), "--source", "0")
    assert code == 2
    assert "--source goes with --starting-offsets" in err
    with pytest.raises(SystemExit) as exited:
        main([str(builtin_checkpoint), "--starting-offsets", "--batch", "1"])
    assert exited.value.code == 2


def test_the_default_view_of_a_builtin_checkpoint_points_to_the_conversion(
    builtin_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, str(builtin_checkpoint))
    assert code == 0
    assert "    --starting-offsets prints the startingOffsets that continue it" in out
