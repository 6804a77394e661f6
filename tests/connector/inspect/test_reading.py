"""Reading the offset log into values, apart from any view of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_rescalable.inspect import CheckpointError, SourceKind, parse_offset_file, read_checkpoint
from kafka_rescalable.inspect.reading import reject_malformed


def test_a_named_log_keeps_its_source_names_and_its_damaged_file(named_checkpoint: Path) -> None:
    log = read_checkpoint(named_checkpoint)
    assert [batch.batch_id for batch in log.batches] == [0, 2]
    assert log.source_keys() == ("ours",)
    assert log.latest.batch_id == 2
    assert [(s.key, s.kind) for s in log.latest.sources] == [
        ("k", SourceKind.NO_OFFSET),
        ("ours", SourceKind.SLOTS),
    ]
    with pytest.raises(CheckpointError, match=r"^batch 1 cannot be read: offsets/1 starts with"):
        log.batch(1)


def test_reject_malformed_names_the_first_malformed_source() -> None:
    text = 'v1\n{}\n-\n{"version": 7}\n{"slots": 3}'
    batch = parse_offset_file(5, text, committed=False)
    assert [s.kind for s in batch.sources] == [SourceKind.NO_OFFSET] + [SourceKind.MALFORMED] * 2
    with pytest.raises(CheckpointError, match=r"^batch 5, source 1: malformed kafka-rescalable"):
        reject_malformed(batch)
    reject_malformed(parse_offset_file(6, "v1\n{}\n-", committed=False))
