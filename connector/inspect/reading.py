"""Reading a checkpoint's offset log into values: one :class:`BatchOffsets` per file.

Spark writes ``<checkpoint>/offsets/<batch id>`` when it plans a batch: a version line
(``v1``, or ``v2`` with named sources), a JSON metadata line, then one line per source of the
query: its offset JSON (for us, the slots document: the *end* of the batch, the next offset
to read per partition), or ``-`` for a source that has no offset yet. ``v2`` lines are
``<source name>:<offset>``. ``<checkpoint>/commits/<batch id>`` appears once the sink has
committed the batch.

Everything here is pure but :func:`read_checkpoint`, which reads files through
:class:`~kafka_rescalable.inspect.files.CheckpointFiles`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Final

from kafka_rescalable.inspect._text import id_ranges, quote
from kafka_rescalable.inspect.files import (
    CheckpointFiles,
    LocalFiles,
    PathKind,
    batch_ids,
    is_directory,
    join,
    why_no_offsets,
)
from kafka_rescalable.state import (
    ForeignCheckpointError,
    KafkaRescalableError,
    OffsetDocumentError,
    SlotsDocument,
    TopicPartition,
)

SUPPORTED_LOG_VERSIONS: Final = frozenset({1, 2})
"""Spark's offset log formats read here: ``v1`` (sources by position), ``v2`` (by name)."""

_VOID_OFFSET: Final = "-"  # Spark's serialized "no offset" for a source
BUILTIN_DETAIL: Final = "Spark's built-in Kafka source?"
"""The detail of a source line that holds Kafka offsets in the built-in source's form."""


class CheckpointError(KafkaRescalableError, ValueError):
    """Not a checkpoint, no offsets, or a bad batch; the message names the path or the batch."""


class SourceKind(Enum):
    """What one source line of an offset file holds."""

    SLOTS = "kafka-rescalable"
    """A slots document of this connector."""
    NO_OFFSET = "no offset"
    """``-``: the source has no offset in this batch."""
    FOREIGN = "other source"
    """Valid JSON that is not ours: another source of the same query."""
    MALFORMED = "malformed"
    """A document that claims to be ours (or is not JSON) but cannot be read."""


@dataclass(frozen=True)
class SourceOffset:
    """One source's offset in one batch.

    Parameters
    ----------
    key : str
        The source's identity in the log: its position (``"0"``, ``"1"``) in a ``v1`` log,
        its name in a ``v2`` log. The same key names the same source in every batch.
    kind : SourceKind
        What the line holds.
    raw : str
        The line as Spark wrote it (without the ``v2`` name prefix).
    document : SlotsDocument or None
        The parsed document, for :attr:`SourceKind.SLOTS` only.
    detail : str or None
        Why the line is foreign or malformed, in words.
    builtin_offsets : Mapping[TopicPartition, int] or None
        For a line of Spark's built-in Kafka source (``{"orders": {"0": 5}}``), its next
        offset per partition.
    """

    key: str
    kind: SourceKind
    raw: str
    document: SlotsDocument | None = None
    detail: str | None = None
    builtin_offsets: Mapping[TopicPartition, int] | None = None

    @property
    def label(self) -> str:
        """``source 0``, or ``source <name>`` in a ``v2`` log."""
        return f"source {self.key}"

    @property
    def kafka_offsets(self) -> dict[TopicPartition, int] | None:
        """The next offset per Kafka partition of our source or the built-in one, else ``None``."""
        if self.document is not None:
            return self.document.state.offsets()
        return None if self.builtin_offsets is None else dict(self.builtin_offsets)


@dataclass(frozen=True)
class BatchOffsets:
    """One file of the offset log: where every source of the query ends this batch.

    Parameters
    ----------
    batch_id : int
        The file's name.
    committed : bool
        Whether ``commits/<batch_id>`` exists: the sink finished the batch.
    log_version : int
        1 or 2, from the file's first line.
    timestamp_ms : int or None
        ``batchTimestampMs`` of the metadata line: when Spark planned the batch.
    watermark_ms : int or None
        ``batchWatermarkMs`` of the metadata line.
    sources : tuple of SourceOffset
        One per source line, in the file's order.
    """

    batch_id: int
    committed: bool
    log_version: int
    timestamp_ms: int | None
    watermark_ms: int | None
    sources: tuple[SourceOffset, ...]

    def source(self, key: str) -> SourceOffset | None:
        """Return the source with ``key``, or ``None`` when this batch has no such source."""
        return next((s for s in self.sources if s.key == key), None)

    def documents(self) -> dict[str, SlotsDocument]:
        """Return the slots documents of this batch by source key."""
        return {s.key: s.document for s in self.sources if s.document is not None}


@dataclass(frozen=True)
class CheckpointLog:
    """Every readable batch of a checkpoint's offset log, in batch id order.

    Parameters
    ----------
    path : str
        The checkpoint directory, as given (a local path or a file system's path).
    batches : tuple of BatchOffsets
        Sorted by batch id; never empty.
    unreadable : Mapping[int, str]
        Batch files that could not be read at all (bad version line, no metadata), with why.
        Kept apart so one damaged file does not hide the rest of the history.
    committed_ids : frozenset of int
        The ids ``commits/`` holds, readable offset file or not.
    """

    path: str
    batches: tuple[BatchOffsets, ...]
    unreadable: Mapping[int, str] = field(default_factory=dict)
    committed_ids: frozenset[int] = frozenset()

    @property
    def latest(self) -> BatchOffsets:
        """The batch with the highest id: the one Spark planned last.

        Raises
        ------
        CheckpointError
            When the file with the highest id cannot be read: showing an older batch as the
            latest would mislead.
        """
        newest = self.batches[-1]
        damaged = [batch_id for batch_id in self.unreadable if batch_id > newest.batch_id]
        if damaged:
            msg = (
                f"the latest batch, {max(damaged)}, cannot be read: "
                f"{self.unreadable[max(damaged)]}; readable batches: "
                f"{id_ranges(b.batch_id for b in self.batches)} (use --batch)"
            )
            raise CheckpointError(msg)
        return newest

    def batch(self, batch_id: int) -> BatchOffsets:
        """Return batch ``batch_id``.

        Raises
        ------
        CheckpointError
            When the log has no readable file for it; the message gives the available ids.
        """
        for batch in self.batches:
            if batch.batch_id == batch_id:
                return batch
        if batch_id in self.unreadable:
            msg = f"batch {batch_id} cannot be read: {self.unreadable[batch_id]}"
            raise CheckpointError(msg)
        msg = (
            f"batch {batch_id} is not in the offset log of {self.path}; available: "
            f"{id_ranges(b.batch_id for b in self.batches)}"
        )
        raise CheckpointError(msg)

    def source_keys(self) -> tuple[str, ...]:
        """Keys of the sources that hold a slots document in at least one batch, in order."""
        keys: dict[str, None] = {}
        for batch in self.batches:
            for source in batch.sources:
                if source.kind is SourceKind.SLOTS:
                    keys.setdefault(source.key, None)
        return tuple(keys)


def parse_offset_file(batch_id: int, text: str, committed: bool) -> BatchOffsets:
    """Parse one offset log file as Spark writes it.

    Parameters
    ----------
    batch_id : int
        The file's name.
    text : str
        The file's content.
    committed : bool
        Whether the batch has a commit file.

    Returns
    -------
    BatchOffsets
        Every source line classified; a source line that is foreign or malformed does not
        make the file unreadable, it is reported as such.

    Raises
    ------
    CheckpointError
        When the file is empty, its version line is not ``v1`` or ``v2``, or its metadata
        line is not a JSON object.
    """
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise CheckpointError(f"offsets/{batch_id} is empty (an incomplete write?)")
    header = lines[0].strip()
    version = _log_version(header)
    if version not in SUPPORTED_LOG_VERSIONS:
        msg = (
            f"offsets/{batch_id} starts with {header[:20]!r}; this tool reads the offset log "
            f"versions {', '.join(f'v{v}' for v in sorted(SUPPORTED_LOG_VERSIONS))}"
        )
        raise CheckpointError(msg)
    if len(lines) < 2:
        raise CheckpointError(f"offsets/{batch_id} has no metadata line (an incomplete write?)")
    metadata = _metadata(batch_id, lines[1].strip())
    sources = []
    for index, line in enumerate(lines[2:]):
        if version == 2:
            key, separator, raw = line.partition(":")
            if not separator:
                msg = f"offsets/{batch_id}, line {index + 3}: expected '<source name>:<offset>'"
                raise CheckpointError(msg)
        else:
            key, raw = str(index), line
        sources.append(classify_source(key, raw))
    return BatchOffsets(
        batch_id=batch_id,
        committed=committed,
        log_version=version,
        timestamp_ms=_int_or_none(metadata.get("batchTimestampMs")),
        watermark_ms=_int_or_none(metadata.get("batchWatermarkMs")),
        sources=tuple(sources),
    )


def classify_source(key: str, raw: str) -> SourceOffset:
    """Read one source line: our slots document, no offset, another source's, or malformed.

    A line is ours when it parses as a slots document. A JSON object with neither
    ``version`` nor ``slots`` (:class:`ForeignCheckpointError`), or a JSON value that is not
    an object, belongs to another source of the query. Anything else that fails is a
    malformed document of ours: a JSON object with ``version`` or ``slots`` that does not
    check, or a line that is not JSON at all (every Spark source writes JSON).
    """
    if raw.strip() == _VOID_OFFSET:
        return SourceOffset(key, SourceKind.NO_OFFSET, raw)
    try:
        return SourceOffset(key, SourceKind.SLOTS, raw, document=SlotsDocument.from_json(raw))
    except ForeignCheckpointError as error:
        if error.offsets is not None:
            detail = BUILTIN_DETAIL
        else:
            detail = f"another source; top-level keys {_top_level_keys(raw)}"
        return SourceOffset(
            key, SourceKind.FOREIGN, raw, detail=detail, builtin_offsets=error.offsets
        )
    except OffsetDocumentError as error:
        try:
            value = json.loads(raw)
        except ValueError:
            return SourceOffset(key, SourceKind.MALFORMED, raw, detail=str(error))
        if isinstance(value, dict):
            return SourceOffset(key, SourceKind.MALFORMED, raw, detail=str(error))
        return SourceOffset(key, SourceKind.FOREIGN, raw, detail="another source")


def read_checkpoint(path: str | Path, files: CheckpointFiles | None = None) -> CheckpointLog:
    """Read every file of ``<path>/offsets`` and note which batches ``<path>/commits`` holds.

    Only files named by a batch id are read, not Spark's ``.crc`` and temporary files. ``files``
    is the path's file system: this machine's, or one from :mod:`kafka_rescalable.checkpoints`.

    Raises
    ------
    CheckpointError
        When ``path`` is not a directory, has no ``offsets`` directory, or the offset log
        has no readable file yet.
    """
    fs = LocalFiles() if files is None else files
    root = str(path).rstrip("/") or "/"
    kind = fs.kind(root)
    if kind is not PathKind.DIRECTORY:
        what = "does not exist" if kind is PathKind.MISSING else "is not a directory"
        raise CheckpointError(f"{root} {what}")
    offsets = join(root, "offsets")
    if not is_directory(fs, offsets):
        raise CheckpointError(why_no_offsets(fs, root))
    ids = batch_ids(fs.names(offsets))
    if not ids:
        msg = f"{root}: no offsets yet: offsets/ holds no batch (the query has not planned one)"
        raise CheckpointError(msg)
    commits = join(root, "commits")
    committed = set(batch_ids(fs.names(commits))) if is_directory(fs, commits) else set()
    batches = []
    unreadable = {}
    for batch_id in ids:
        try:
            text = fs.read_text(join(offsets, str(batch_id)))
            batches.append(parse_offset_file(batch_id, text, batch_id in committed))
        except CheckpointError as error:
            unreadable[batch_id] = str(error)
        except (OSError, UnicodeDecodeError) as error:
            unreadable[batch_id] = f"offsets/{batch_id} cannot be read ({error})"
    if not batches:
        first = unreadable[ids[0]]
        msg = f"{root}: no batch of the offset log can be read; {first}"
        raise CheckpointError(msg)
    return CheckpointLog(root, tuple(batches), unreadable, frozenset(committed))


def reject_malformed(batch: BatchOffsets) -> None:
    """Refuse a batch with a malformed slots document of ours, naming the first one.

    Both views stop there rather than show a batch with one source silently missing.

    Raises
    ------
    CheckpointError
        For the first source of kind :attr:`SourceKind.MALFORMED`, with its error.
    """
    for source in batch.sources:
        if source.kind is SourceKind.MALFORMED:
            msg = (
                f"batch {batch.batch_id}, {source.label}: malformed kafka-rescalable document: "
                f"{source.detail}"
            )
            raise CheckpointError(msg)


def _log_version(header: str) -> int | None:
    if header.startswith("v") and header[1:].isascii() and header[1:].isdigit():
        return int(header[1:])
    return None


def _metadata(batch_id: int, line: str) -> dict[str, Any]:
    if not line:  # Spark writes an empty line for a batch without metadata
        return {}
    try:
        value = json.loads(line)
    except ValueError as error:
        msg = f"offsets/{batch_id}: the metadata line is not JSON ({error})"
        raise CheckpointError(msg) from error
    if not isinstance(value, dict):
        msg = f"offsets/{batch_id}: the metadata line must be a JSON object"
        raise CheckpointError(msg)
    return value


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _top_level_keys(raw: str) -> str:
    try:
        keys = sorted(json.loads(raw))
    except (ValueError, TypeError):
        return "?"
    return quote(", ".join(repr(k) for k in keys))
