"""Offset logs for the inspector's unit tests, written as Spark writes them.

Each fixture is a :class:`LogFiles`: the text of every ``offsets/<id>`` file and which ids
are committed, written into a temporary checkpoint by :meth:`LogFiles.write`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_rescalable.state import OffsetState, PartitionOffset, SlotsDocument

P = PartitionOffset
T0 = 1_795_272_654_176  # 2026-11-21T14:50:54.176Z
BUILTIN = '{"orders":{"0":5}}'  # what Spark's built-in Kafka source writes


def slots_json(*slots: Sequence[PartitionOffset], **extras: object) -> str:
    """Write a slots document the way the source does."""
    return SlotsDocument(OffsetState.of(slots), extras).to_json()


def offset_file(batch_id: int, *sources: str, header: str = "v1", watermark_ms: int = 0) -> str:
    """Write ``offsets/<batch_id>``: version line, metadata line, one line per source."""
    metadata = {"batchWatermarkMs": watermark_ms, "batchTimestampMs": T0 + 1000 * batch_id}
    return "\n".join([header, json.dumps(metadata), *sources])


@dataclass(frozen=True)
class LogFiles:
    """A checkpoint's offset log as text: ``files`` by batch id, ``committed`` batch ids."""

    files: Mapping[int, str]
    committed: frozenset[int]

    def write(self, root: Path) -> Path:
        """Write the log under ``root`` (``offsets/``, ``commits/``); return ``root``."""
        (root / "offsets").mkdir(parents=True)
        (root / "commits").mkdir()
        for batch_id, text in self.files.items():
            (root / "offsets" / str(batch_id)).write_text(text, encoding="utf-8")
        for batch_id in self.committed:
            (root / "commits" / str(batch_id)).write_text('v1\n{"nextBatchWatermarkMs":0}')
        return root


def rescale_log() -> LogFiles:
    """Two slots, then three (moves, a partition joins, one leaves, one goes backwards).

    Source 0 is Spark's built-in Kafka source, absent from batch 0; source 1 is ours, with
    an event-time section from batch 2 and a watermark; batch 3 is planned, not committed.
    """
    files = {
        0: offset_file(0, "-", slots_json([P("a", 0, 10), P("a", 1, 20)], [P("b", 0, 5)])),
        1: offset_file(1, BUILTIN, slots_json([P("a", 0, 14), P("a", 1, 25)], [P("b", 0, 9)])),
        2: offset_file(
            2,
            BUILTIN,
            slots_json(
                [P("a", 0, 18)],
                [P("b", 0, 12), P("b", 1, 0)],
                [P("a", 1, 3)],
                eventTime={"drift": {"a-0": 1500}, "maxDriftMs": 60000},
            ),
            watermark_ms=T0 - 60_000,
        ),
        3: offset_file(3, BUILTIN, slots_json([P("a", 0, 30)], [P("b", 1, 4)], [P("a", 1, 9)])),
    }
    return LogFiles(files, frozenset({0, 1, 2}))


def named_log() -> LogFiles:
    """Return a ``v2`` log with named sources, a damaged file and nothing committed."""
    files = {
        0: offset_file(0, "k:" + BUILTIN, "ours:" + slots_json([P("t", 0, 1)]), header="v2"),
        1: "v9\n{}\n-",
        2: offset_file(2, "k:-", "ours:" + slots_json([P("t", 0, 7)], []), header="v2"),
    }
    return LogFiles(files, frozenset())


@pytest.fixture(params=[rescale_log, named_log], ids=["rescale", "named"])
def checkpoint(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Each log of this module, written as a checkpoint, one at a time."""
    return request.param().write(tmp_path / "checkpoint")


@pytest.fixture
def rescale_checkpoint(tmp_path: Path) -> Path:
    """:func:`rescale_log`, written as a checkpoint."""
    return rescale_log().write(tmp_path / "checkpoint")


@pytest.fixture
def named_checkpoint(tmp_path: Path) -> Path:
    """:func:`named_log`, written as a checkpoint."""
    return named_log().write(tmp_path / "checkpoint")


@pytest.fixture
def make_log(tmp_path: Path) -> Callable[..., Path]:
    """Write a checkpoint: ``make_log({0: [source line, ...]}, committed={0})``; its path.

    A batch given as a string is the file's whole text (a damaged file, say); ``header="v2"``
    writes a ``v2`` log. Each call writes a new checkpoint directory.
    """
    made = itertools.count()

    def make(
        batches: Mapping[int, Sequence[str] | str], committed: Collection[int], header: str = "v1"
    ) -> Path:
        files = {
            batch_id: text if isinstance(text, str) else offset_file(batch_id, *text, header=header)
            for batch_id, text in batches.items()
        }
        return LogFiles(files, frozenset(committed)).write(tmp_path / f"log{next(made)}")

    return make
