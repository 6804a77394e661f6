"""The checkpoint inspector, on offset logs written by hand in Spark's exact file format."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_rescalable.inspect import (
    CheckpointError,
    PartitionMove,
    PartitionPlacement,
    PartitionProgress,
    SlotRun,
    SourceKind,
    classify_source,
    diff_batches,
    diff_states,
    main,
    parse_offset_file,
    read_checkpoint,
    slot_history,
)
from kafka_rescalable.state import OffsetState, PartitionOffset, SlotsDocument, TopicPartition
from kafka_rescalable.state.topic_layout import topic_layout

P = PartitionOffset
TP = TopicPartition
REPO = Path(__file__).resolve().parents[3]

# Spark 4.3's metadata line, as it appears in a real checkpoint (conf shortened).
METADATA = (
    '{"batchWatermarkMs":0,"batchTimestampMs":%d,"conf":{'
    '"spark.sql.streaming.stateStore.providerClass":'
    '"org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",'
    '"spark.sql.streaming.multipleWatermarkPolicy":"min",'
    '"spark.sql.shuffle.partitions":"4"}}'
)
T0 = 1_795_272_654_176  # 2026-11-21T14:50:54.176Z
BUILTIN_LINE = '{"topic":{"0":5}}'


def slots_line(*slots: dict[int, int], topic: str = "orders", **extras: object) -> str:
    """Write a slots document as PySpark puts it into the offset log (json.dumps defaults)."""
    document: dict[str, object] = {
        "version": 1,
        "slots": [{topic: {str(p): o for p, o in slot.items()}} if slot else {} for slot in slots],
    }
    document.update(extras)
    return json.dumps(document)


def write_batch(
    checkpoint: Path,
    batch_id: int,
    *source_lines: str,
    committed: bool = True,
    header: str = "v1",
) -> None:
    """Write ``offsets/<id>`` (and ``commits/<id>``) the way Spark's offset log does."""
    (checkpoint / "offsets").mkdir(parents=True, exist_ok=True)
    (checkpoint / "commits").mkdir(exist_ok=True)
    metadata = METADATA % (T0 + 1000 * batch_id)
    text = "\n".join([header, metadata, *source_lines])
    (checkpoint / "offsets" / str(batch_id)).write_text(text, encoding="utf-8")
    # Spark's local file system also leaves checksum files beside each entry.
    (checkpoint / "offsets" / f".{batch_id}.crc").write_bytes(b"crc\x00")
    if committed:
        commit = '{"nextBatchWatermarkMs":0}'
        (checkpoint / "commits" / str(batch_id)).write_text(f"v1\n{commit}", encoding="utf-8")


def offsets_at(batch_id: int, partitions: range) -> dict[int, int]:
    """Batch ``k`` ends partition ``p`` at ``10 * (k + 1) + p``: 10 records per batch each."""
    return {p: 10 * (batch_id + 1) + p for p in partitions}


def two_slots(batch_id: int) -> str:
    o = offsets_at(batch_id, range(8))
    return slots_line({p: o[p] for p in (0, 1, 2, 3)}, {p: o[p] for p in (4, 5, 6, 7)})


def five_slots(batch_id: int) -> str:
    """Scale ``two_slots`` out: slots 0 and 1 keep two partitions each; 2, 3, 6, 7 move."""
    o = offsets_at(batch_id, range(8))
    groups = [(0, 1), (4, 5), (2, 3), (6,), (7,)]
    return slots_line(*({p: o[p] for p in group} for group in groups))


@pytest.fixture
def rescaled(tmp_path: Path) -> Path:
    """Batches 0..3 at 2 slots, 4..6 at 5 slots over 8 partitions; batch 6 not committed."""
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "metadata").write_text('{"id":"49f81c4c-877b-4be9-91cf-a938f5220066"}')
    for batch_id in range(4):
        write_batch(checkpoint, batch_id, two_slots(batch_id))
    for batch_id in range(4, 7):
        write_batch(checkpoint, batch_id, five_slots(batch_id), committed=batch_id < 6)
    return checkpoint


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- default view -------------------------------------------------------------------------


def test_latest_batch_shows_slots_partitions_offsets_and_history(
    rescaled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, str(rescaled))
    assert code == 0, err
    lines = out.splitlines()
    assert "offset log: batches 0..6 (7 batches), last committed: 5" in lines
    assert "slots per batch: batch 0..3: 2 slots; batch 4..6: 5 slots" in lines
    assert (
        "batch 6: not committed (planned; runs again on restart), "
        "planned at 2026-11-21T14:51:00.176Z"
    ) in lines
    assert "  source 0: kafka-rescalable, 5 slots, 8 partitions (topic: partition@next offset)" in (
        lines
    )
    assert "    slot 0 (2 partitions): orders: 0@70 1@71" in lines
    assert "    slot 1 (2 partitions): orders: 4@74 5@75" in lines
    assert "    slot 2 (2 partitions): orders: 2@72 3@73" in lines
    assert "    slot 3 (1 partition): orders: 6@76" in lines
    assert "    slot 4 (1 partition): orders: 7@77" in lines
    assert lines[-1] == "total: 8 partitions in 5 slots"
    assert err == ""


@pytest.mark.parametrize(
    "view",
    [(), ("--batch", "2"), ("--diff", "2", "5"), ("--json",), ("--starting-offsets",)],
)
def test_version_3_documents_show_as_the_older_ones(
    rescaled: Path, capsys: pytest.CaptureFixture[str], view: tuple[str, ...]
) -> None:
    before = run(capsys, str(rescaled), *view)
    for path in (rescaled / "offsets").iterdir():
        if path.name.isdigit():
            lines = path.read_text().splitlines()
            state = SlotsDocument.from_json(lines[-1]).state
            # The topic layout itself, which the writer leaves to larger states than these;
            # no batch here is dealt round-robin, so each lists the slot of every partition.
            topics = topic_layout(state)
            assert "slots" in topics["orders"]
            lines[-1] = json.dumps({"version": 3, "slots": state.num_slots, "topics": topics})
            path.write_text("\n".join(lines))
    assert run(capsys, str(rescaled), *view) == before


def test_chosen_batch(rescaled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(rescaled), "--batch", "2")
    assert code == 0
    assert "batch 2: committed, planned at 2026-11-21T14:50:56.176Z" in out
    assert "source 0: kafka-rescalable, 2 slots, 8 partitions" in out
    assert "slot 0 (4 partitions): orders: 0@30 1@31 2@32 3@33" in out
    assert "slot 1 (4 partitions): orders: 4@34 5@35 6@36 7@37" in out
    assert "slot 2" not in out
    assert "total: 8 partitions in 2 slots" in out


def test_missing_batch_names_the_id_and_the_range(
    rescaled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, str(rescaled), "--batch", "9")
    assert code == 2
    assert out == ""
    assert err == (
        "python -m kafka_rescalable.inspect: error: "
        f"batch 9 is not in the offset log of {rescaled}; available: 0..6\n"
    )


# --- diff ---------------------------------------------------------------------------------


def test_diff_across_the_scale_out(rescaled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(rescaled), "--diff", "3", "4")
    assert code == 0, err
    lines = out.splitlines()
    assert "source 0: batch 3 -> batch 4" in lines
    assert "  slots: 2 -> 5 (changed)" in lines
    moved = lines[lines.index("  partitions moved: 4") + 1 : lines.index("  partitions added: 0")]
    assert moved == [
        "    orders-2: slot 0 -> slot 2",
        "    orders-3: slot 0 -> slot 2",
        "    orders-6: slot 1 -> slot 3",
        "    orders-7: slot 1 -> slot 4",
    ]
    assert "  partitions removed: 0" in lines
    assert "  records between the two batches (read by batch 4): 80" in lines
    assert "    orders-0: 40 -> 50 (+10)" in lines
    assert "    orders-7: 47 -> 57 (+10)" in lines


def test_diff_over_several_batches_counts_all_of_them(
    rescaled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, str(rescaled), "--diff", "0", "6")
    assert code == 0
    assert "slots: 2 -> 5 (changed)" in out
    assert "records between the two batches (read by batches 1..6): 480" in out
    assert "orders-5: 15 -> 75 (+60)" in out


def test_diff_without_change(rescaled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(rescaled), "--diff", "4", "5")
    assert code == 0
    assert "slots: 5 -> 5 (unchanged)" in out
    assert "partitions moved: 0\n" in out


def test_diff_refuses_reversed_or_missing_batches(
    rescaled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, str(rescaled), "--diff", "5", "2")
    assert code == 2
    assert "FROM (5) must not be after TO (2)" in err
    code, _, err = run(capsys, str(rescaled), "--diff", "2", "12")
    assert code == 2
    assert "batch 12 is not in the offset log" in err and "available: 0..6" in err


def test_diff_with_added_and_removed_partitions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = tmp_path / "cp"
    write_batch(checkpoint, 0, slots_line({0: 100, 1: 200}, {2: 300}))
    # Partition 3 joins at its earliest offset 7 (reads nothing in the batch it joins);
    # partition 2 is deleted.
    write_batch(checkpoint, 1, slots_line({0: 110, 1: 210}, {3: 7}))
    write_batch(checkpoint, 2, slots_line({0: 120, 1: 220}, {3: 17}))
    code, out, err = run(capsys, str(checkpoint), "--diff", "0", "2")
    assert code == 0, err
    assert "  partitions added: 1\n    orders-3@17 in slot 1\n" in out
    assert "  partitions removed: 1\n    orders-2@300 was in slot 1\n" in out
    assert "  records between the two batches (read by batches 1..2): 50" in out
    assert "    orders-3: 7 -> 17 (+10) (joined)" in out
    assert "orders-2:" not in out.split("records between")[1]


def test_diff_reports_offsets_that_went_backwards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = tmp_path / "cp"
    write_batch(checkpoint, 0, slots_line({0: 100, 1: 50}))
    write_batch(checkpoint, 1, slots_line({0: 3, 1: 60}))  # topic re-created
    code, out, _ = run(capsys, str(checkpoint), "--diff", "0", "1")
    assert code == 0
    assert "orders-0: 100 -> 3 (-97) (went backwards: records lost?)" in out
    assert "(read by batch 1): 10" in out


# --- several sources ----------------------------------------------------------------------


@pytest.fixture
def two_sources(tmp_path: Path) -> Path:
    """Write a query joining Spark's built-in Kafka source (source 0) with ours (source 1)."""
    checkpoint = tmp_path / "join"
    event_time = {"drift": {"orders-1": 1500}, "maxDriftMs": 60000}
    write_batch(checkpoint, 0, "-", slots_line({0: 0}, {1: 0}, {2: 0}))
    write_batch(checkpoint, 1, BUILTIN_LINE, slots_line({0: 4}, {1: 9}, {2: 2}))
    write_batch(
        checkpoint,
        2,
        '{"topic":{"0":5}}',
        slots_line({0: 8, 2: 5}, {1: 12}, eventTime=event_time),
        committed=False,
    )
    return checkpoint


def test_two_sources_identifies_ours_and_the_builtin_one(
    two_sources: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, str(two_sources))
    assert code == 0, err
    lines = out.splitlines()
    assert (
        "  source 0: not a kafka-rescalable document (Spark's built-in Kafka source?): "
        '{"topic":{"0":5}}'
    ) in lines
    assert "  source 1: kafka-rescalable, 2 slots, 3 partitions (topic: partition@next offset)" in (
        lines
    )
    assert "    slot 0 (2 partitions): orders: 0@8 2@5" in lines
    assert "    slot 1 (1 partition): orders: 1@12" in lines
    assert (
        '    extra section eventTime: {"drift": {"orders-1": 1500}, "maxDriftMs": 60000}'
    ) in lines
    assert "slots per batch: batch 0..1: 3 slots; batch 2: 2 slots" in lines
    assert lines[-1] == "total: 3 partitions in 2 slots"


def test_source_without_offset(two_sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(two_sources), "--batch", "0")
    assert code == 0
    assert "  source 0: no offset in this batch" in out
    assert "  source 1: kafka-rescalable, 3 slots, 3 partitions" in out


def test_diff_with_two_sources_compares_ours_only(
    two_sources: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, str(two_sources), "--diff", "1", "2")
    assert code == 0
    assert "source 1: batch 1 -> batch 2" in out
    assert "source 0" not in out
    assert "slots: 3 -> 2 (changed)" in out
    assert "orders-2: slot 2 -> slot 0" in out
    assert "records between the two batches (read by batch 2): 10" in out


def test_checkpoint_of_the_builtin_source_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = tmp_path / "builtin"
    write_batch(checkpoint, 0, '{"topic":{"0":2}}')
    write_batch(checkpoint, 1, BUILTIN_LINE)
    code, out, _ = run(capsys, str(checkpoint))
    assert code == 0
    assert "slots per batch: no kafka-rescalable source in this checkpoint" in out
    assert "source 0: not a kafka-rescalable document (Spark's built-in Kafka source?)" in out
    code, _, err = run(capsys, str(checkpoint), "--diff", "0", "1")
    assert code == 2
    assert "no kafka-rescalable source has a slots document in both batch 0" in err


def test_other_kinds_of_sources(tmp_path: Path) -> None:
    assert classify_source("0", "-").kind is SourceKind.NO_OFFSET
    file_source = classify_source("0", '{"logOffset":3}')
    assert file_source.kind is SourceKind.FOREIGN
    assert file_source.detail == "another source; top-level keys 'logOffset'"
    rate_source = classify_source("1", "42")
    assert rate_source.kind is SourceKind.FOREIGN
    assert classify_source("1", slots_line({0: 1})).kind is SourceKind.SLOTS
    bad = classify_source("2", '{"version": 1, "slots": [{"orders": {"0": -1}}]}')
    assert bad.kind is SourceKind.MALFORMED
    assert "offset must be >= 0" in (bad.detail or "")
    assert classify_source("3", '{"version": 1, "slots": [{"ord').kind is SourceKind.MALFORMED


def test_offset_log_version_2_names_its_sources(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = tmp_path / "v2"
    first = ["kafka_in:" + BUILTIN_LINE, "orders:" + slots_line({0: 1}, {1: 2})]
    write_batch(checkpoint, 0, *first, header="v2")
    write_batch(checkpoint, 1, "kafka_in:-", "orders:" + slots_line({0: 5, 1: 6}), header="v2")
    code, out, _ = run(capsys, str(checkpoint), "--batch", "0")
    assert code == 0
    assert "source kafka_in: not a kafka-rescalable document" in out
    assert "source orders: kafka-rescalable, 2 slots, 2 partitions" in out
    code, out, _ = run(capsys, str(checkpoint), "--diff", "0", "1")
    assert "source orders: batch 0 -> batch 1" in out
    assert "orders-1: slot 1 -> slot 0" in out


# --- JSON ---------------------------------------------------------------------------------


def test_json_of_a_batch(two_sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(two_sources), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["batch_ids"] == [0, 1, 2]
    assert data["latest_batch"] == 2
    assert data["slot_history"] == [
        {"source": "1", "first_batch": 0, "last_batch": 1, "slots": 3, "note": None},
        {"source": "1", "first_batch": 2, "last_batch": 2, "slots": 2, "note": None},
    ]
    batch = data["batch"]
    assert (batch["id"], batch["committed"], batch["log_version"]) == (2, False, 1)
    assert batch["timestamp"] == "2026-11-21T14:50:56.176Z"
    assert (batch["total_partitions"], batch["total_slots"]) == (3, 2)
    builtin, ours = batch["sources"]
    assert builtin == {
        "source": "0",
        "kind": "other source",
        "detail": "Spark's built-in Kafka source?",
        "raw": '{"topic":{"0":5}}',
    }
    assert ours["kind"] == "kafka-rescalable"
    assert ours["slots"][0] == {
        "slot": 0,
        "partition_count": 2,
        "partitions": [
            {"topic": "orders", "partition": 0, "offset": 8},
            {"topic": "orders", "partition": 2, "offset": 5},
        ],
    }
    assert ours["extras"] == {"eventTime": {"drift": {"orders-1": 1500}, "maxDriftMs": 60000}}


def test_json_of_a_diff(rescaled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(rescaled), "--diff", "3", "4", "--json")
    assert code == 0
    (diff,) = json.loads(out)["diffs"]
    assert (diff["slots_before"], diff["slots_after"]) == (2, 5)
    assert diff["moved"] == [
        {"topic": "orders", "partition": 2, "from_slot": 0, "to_slot": 2},
        {"topic": "orders", "partition": 3, "from_slot": 0, "to_slot": 2},
        {"topic": "orders", "partition": 6, "from_slot": 1, "to_slot": 3},
        {"topic": "orders", "partition": 7, "from_slot": 1, "to_slot": 4},
    ]
    assert diff["added"] == [] and diff["removed"] == []
    assert diff["total_records"] == 80
    assert diff["records"][0] == {
        "topic": "orders",
        "partition": 0,
        "from_offset": 40,
        "to_offset": 50,
        "records": 10,
        "joined": False,
    }


# --- errors: one line, exit code 2, no traceback ------------------------------------------


def test_not_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(tmp_path / "nowhere"))
    assert (code, out) == (2, "")
    prog = "python -m kafka_rescalable.inspect"
    assert err == f"{prog}: error: {tmp_path / 'nowhere'} does not exist\n"


def test_not_a_checkpoint_suggests_the_one_inside(
    rescaled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, str(rescaled.parent))
    assert code == 2
    assert "is not a Spark streaming checkpoint: it has no offsets/ directory" in err
    assert f"did you mean {rescaled}?" in err


def test_no_offsets_yet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / ".0.crc.tmp").write_text("")
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2
    assert "no offsets yet: offsets/ holds no batch" in err


def test_started_query_without_offsets_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "metadata").write_text('{"id":"q"}')
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2
    assert "no offsets yet: the query has not planned its first batch" in err


def test_malformed_document_of_ours(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint = tmp_path / "cp"
    write_batch(checkpoint, 0, slots_line({0: 1}))
    write_batch(checkpoint, 1, '{"version": 7, "slots": []}')
    code, out, err = run(capsys, str(checkpoint))
    assert (code, out) == (2, "")
    prog = "python -m kafka_rescalable.inspect"
    assert err.startswith(f"{prog}: error: batch 1, source 0: malformed ")
    assert "unsupported version 7" in err
    assert "Traceback" not in err
    code, _, err = run(capsys, str(checkpoint), "--diff", "0", "1")
    assert code == 2 and "unsupported version 7" in err
    # The earlier batch is still readable, and the history marks the damaged one.
    code, out, _ = run(capsys, str(checkpoint), "--batch", "0")
    assert code == 0
    assert "slots per batch: batch 0: 1 slot; batch 1: malformed" in out


def test_damaged_log_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint = tmp_path / "cp"
    write_batch(checkpoint, 0, slots_line({0: 1}))
    write_batch(checkpoint, 1, slots_line({0: 2}), header="v9")
    code, _, err = run(capsys, str(checkpoint))
    assert code == 2
    assert "the latest batch, 1, cannot be read: offsets/1 starts with 'v9'" in err
    assert "readable batches: 0 (use --batch)" in err
    code, out, _ = run(capsys, str(checkpoint), "--batch", "0")
    assert code == 0
    assert "unreadable: 1 (see --batch)" in out
    (checkpoint / "offsets" / "2").write_text("")
    code, _, err = run(capsys, str(checkpoint), "--batch", "2")
    assert code == 2 and "batch 2 cannot be read: offsets/2 is empty" in err


def test_usage_errors_exit_2(rescaled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(rescaled), "--batch", "1", "--diff", "0", "1"])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_runs_as_a_module(rescaled: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kafka_rescalable.inspect", str(rescaled), "--diff", "3", "4"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "slots: 2 -> 5 (changed)" in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "kafka_rescalable.inspect", str(rescaled / "offsets" / "0")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().endswith("is not a directory")
    assert "Traceback" not in bad.stderr


# --- the pure part ------------------------------------------------------------------------


def test_parse_offset_file_reads_metadata_and_sources() -> None:
    text = "v1\n" + (METADATA % T0) + "\n-\n" + slots_line({0: 3})
    batch = parse_offset_file(4, text, committed=True)
    assert (batch.batch_id, batch.committed, batch.log_version) == (4, True, 1)
    assert (batch.timestamp_ms, batch.watermark_ms) == (T0, 0)
    assert [s.kind for s in batch.sources] == [SourceKind.NO_OFFSET, SourceKind.SLOTS]
    assert batch.documents()["1"].state == OffsetState.of([[P("orders", 0, 3)]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "offsets/3 is empty"),
        ("v1", "has no metadata line"),
        ("v1\nnot json\n-", "the metadata line is not JSON"),
        ("v1\n[1]\n-", "the metadata line must be a JSON object"),
        ("{}\n{}\n-", "starts with '{}'"),
        ("v2\n{}\nno-separator", "line 3: expected '<source name>:<offset>'"),
    ],
)
def test_parse_offset_file_rejects_damaged_files(text: str, message: str) -> None:
    with pytest.raises(CheckpointError, match=re.escape(message)):
        parse_offset_file(3, text, committed=False)


def test_diff_states() -> None:
    before = OffsetState.of([[P("a", 0, 10), P("a", 1, 20)], [P("b", 0, 5)]])
    after = OffsetState.of([[P("a", 0, 15)], [P("b", 0, 5), P("b", 1, 3)], [P("a", 1, 22)]])
    diff = diff_states(before, after, joined_at={TP("b", 1): 1})
    assert (diff.slots_before, diff.slots_after) == (2, 3)
    assert diff.moved == (PartitionMove(TP("a", 1), 0, 2),)
    assert diff.added == (PartitionPlacement(P("b", 1, 3), 1),)
    assert diff.removed == ()
    assert diff.progress == (
        PartitionProgress(TP("a", 0), 10, 15),
        PartitionProgress(TP("a", 1), 20, 22),
        PartitionProgress(TP("b", 0), 5, 5),
        PartitionProgress(TP("b", 1), 1, 3, joined=True),
    )
    assert diff.total_records == 9
    back = diff_states(after, before)
    assert back.removed == (PartitionPlacement(P("b", 1, 3), 1),)
    assert back.regressed == (
        PartitionProgress(TP("a", 0), 15, 10),
        PartitionProgress(TP("a", 1), 22, 20),
    )
    assert back.total_records == 0


def test_slot_history_breaks_runs_at_changes_and_gaps(tmp_path: Path) -> None:
    checkpoint = tmp_path / "cp"
    write_batch(checkpoint, 0, "-")
    write_batch(checkpoint, 1, slots_line({0: 1}, {1: 1}))
    write_batch(checkpoint, 2, slots_line({0: 2}, {1: 2}))
    # A gap in the ids (files deleted by hand) starts a new run rather than hiding in one.
    write_batch(checkpoint, 5, slots_line({0: 9}, {1: 9}))
    write_batch(checkpoint, 6, slots_line({0: 10, 1: 10}))
    log = read_checkpoint(checkpoint)
    assert slot_history(log, "0") == (
        SlotRun("0", 0, 0, None, "no offset"),
        SlotRun("0", 1, 2, 2),
        SlotRun("0", 5, 5, 2),
        SlotRun("0", 6, 6, 1),
    )
    assert [d.source_key for d in diff_batches(log, 1, 6)] == ["0"]
