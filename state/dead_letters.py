"""Dead letters: which records to write again, and the headers that say where each came from.

Under ``deadLetterTopic`` a record whose key or value does not decode is written, raw, to that
topic instead of the query's output. Each source topic-partition has its own transactional
producer (``<prefix>-<query>-<topic>-<partition>``); its dead letters and a marker are
committed in one transaction. The marker is an offset of the query's marker group on the
source topic-partition itself, and its metadata (:class:`DeadLetterMarker`) says which offsets
of which micro-batch already have their dead letters committed.

Why offsets and not tasks: a replayed micro-batch reads the same offset ranges, but not
necessarily in the same Spark tasks (the planner may cut them otherwise after a restart with
other options), and one batch's range of a partition may be cut into pieces read by several
tasks at once. So a record is written unless its offset lies in an interval the marker records
for its batch; every commit adds the intervals its task finished (:func:`after_commit`).

The marker's offset is the end of the highest committed interval, so that a group listing shows
how far dead letters go; the decision reads the metadata alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from kafka_rescalable.state.errors import StateError

__all__ = [
    "HEADER_PREFIX",
    "MARKER_METADATA_LIMIT",
    "MARKER_VERSION",
    "DeadLetterMarker",
    "DeadLetterOrigin",
    "after_commit",
    "dead_letter_headers",
    "done_intervals",
    "framed_schema_id",
    "merge_intervals",
    "must_write",
]

MARKER_VERSION: Final = 1
"""Version of the marker's metadata document."""

MARKER_METADATA_LIMIT: Final = 4096
"""Kafka's default ``offset.metadata.max.bytes``: a longer metadata string is refused."""

HEADER_PREFIX: Final = "__kafka_rescalable.errors."
"""Prefix of the headers a dead letter carries after the record's own (as Kafka Connect's
``__connect.errors.`` headers), so a consumer of the topic can tell them apart."""

Interval = tuple[int, int]
"""Offsets ``[start, until)`` of one topic-partition."""


@dataclass(frozen=True)
class DeadLetterOrigin:
    """Where a dead letter comes from, and why it is one.

    Parameters
    ----------
    topic, partition, offset
        The source record's position.
    timestamp_ms, timestamp_type
        The source record's Kafka timestamp (milliseconds) and its type (0 create time, 1 log
        append time); the dead letter itself gets the time it is written, so that a topic's
        retention does not delete a dead letter of an old record at once.
    reason
        The same text the ``decodeError`` column carries under ``PERMISSIVE``.
    key_schema_id, value_schema_id
        The writer schema id of a framed key or value (magic byte and id), else ``None``.
    query_id, batch_id
        The streaming query and micro-batch that read the record.
    """

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None
    timestamp_type: int | None
    reason: str
    key_schema_id: int | None
    value_schema_id: int | None
    query_id: str
    batch_id: int


def dead_letter_headers(
    original: Iterable[tuple[str, bytes | None]], origin: DeadLetterOrigin
) -> list[tuple[str, bytes | None]]:
    """Return the record's own headers, in order, then ours, as UTF-8 text.

    Numbers are written as decimal text, as Kafka Connect writes its dead-letter headers, so
    that any tool (``kcat``, the console consumer) shows them; absent values are left out.
    """
    ours: list[tuple[str, object]] = [
        ("topic", origin.topic),
        ("partition", origin.partition),
        ("offset", origin.offset),
        ("timestamp", origin.timestamp_ms),
        ("timestamp.type", origin.timestamp_type),
        ("key.schema.id", origin.key_schema_id),
        ("value.schema.id", origin.value_schema_id),
        ("reason", origin.reason),
        ("query.id", origin.query_id),
        ("batch.id", origin.batch_id),
    ]
    headers = list(original)
    headers.extend(
        (HEADER_PREFIX + name, str(value).encode()) for name, value in ours if value is not None
    )
    return headers


def framed_schema_id(payload: bytes | None) -> int | None:
    """Return the writer schema id of a schema registry's framing (magic byte 0, 4-byte id).

    ``None`` for a payload too short or without the magic byte: the reason then says what was
    wrong with the frame.
    """
    if payload is None or len(payload) < 5 or payload[0] != 0:
        return None
    return int.from_bytes(payload[1:5], "big")


def merge_intervals(intervals: Iterable[Interval]) -> tuple[Interval, ...]:
    """Sort ``intervals`` and merge those that overlap or touch; empty ones are dropped."""
    merged: list[Interval] = []
    for start, until in sorted(i for i in intervals if i[0] < i[1]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], until))
        else:
            merged.append((start, until))
    return tuple(merged)


def done_intervals(ranges: Sequence[Interval], read_until: int) -> tuple[Interval, ...]:
    """Return the parts of one partition's task ranges that are read below ``read_until``.

    A task reads its ranges of one partition in offset order, so once the record before
    ``read_until`` is decoded, every record of the ranges below it is decoded too: its dead
    letters can be committed as done even if the task has more to read.
    """
    return merge_intervals((start, min(until, read_until)) for start, until in ranges)


@dataclass(frozen=True)
class DeadLetterMarker:
    """The committed dead letters of one source topic-partition: a batch and its offsets.

    Parameters
    ----------
    batch_id
        The micro-batch whose dead letters the intervals record.
    done
        Sorted, merged, non-empty intervals ``[start, until)`` of source offsets whose dead
        letters are committed.
    """

    batch_id: int
    done: tuple[Interval, ...]

    def __post_init__(self) -> None:
        """Refuse what no commit writes: a negative batch, unsorted or empty intervals."""
        if self.batch_id < 0:
            msg = f"DeadLetterMarker.batch_id must not be negative, got {self.batch_id}"
            raise ValueError(msg)
        if not self.done or merge_intervals(self.done) != self.done or self.done[0][0] < 0:
            msg = f"DeadLetterMarker.done must be sorted, merged, non-empty: {self.done!r}"
            raise ValueError(msg)

    @property
    def offset(self) -> int:
        """The offset committed for the marker: the end of its highest interval."""
        return self.done[-1][1]

    def covers(self, offset: int) -> bool:
        """Say whether ``offset`` lies in one of the intervals."""
        return any(start <= offset < until for start, until in self.done)

    def to_metadata(self) -> str:
        """Return the metadata string committed with the offset: stable, compact JSON.

        Raises
        ------
        StateError
            When it is longer than Kafka's default ``offset.metadata.max.bytes``, which would
            make the broker refuse the commit.
        """
        document = {
            "version": MARKER_VERSION,
            "batch": self.batch_id,
            "done": [list(interval) for interval in self.done],
        }
        text = json.dumps(document, separators=(",", ":"), sort_keys=True)
        if len(text) > MARKER_METADATA_LIMIT:
            msg = (
                f"the dead-letter marker of batch {self.batch_id} holds {len(self.done)} "
                f"intervals, more than Kafka keeps beside an offset ({MARKER_METADATA_LIMIT} "
                "bytes): fewer tasks must share one partition's range. Raise "
                "maxRecordsPerPartition or lower minPartitions, and restart the query"
            )
            raise StateError(msg)
        return text

    @classmethod
    def from_metadata(cls, metadata: str) -> DeadLetterMarker:
        """Read the metadata string Kafka returns with the committed offset.

        Raises
        ------
        StateError
            For text that is not a version 1 marker (a group reused by something else).
        """
        try:
            document = json.loads(metadata)
        except ValueError as error:
            msg = f"dead-letter marker metadata is not JSON: {metadata!r}"
            raise StateError(msg) from error
        if not isinstance(document, dict) or document.get("version") != MARKER_VERSION:
            msg = f"not a version {MARKER_VERSION} dead-letter marker: {metadata!r}"
            raise StateError(msg)
        batch, done = document.get("batch"), document.get("done")
        try:
            intervals = tuple((int(s), int(u)) for s, u in done)  # type: ignore[union-attr]
            if not isinstance(batch, int) or isinstance(batch, bool):
                raise TypeError(batch)
            return cls(batch, intervals)
        except (TypeError, ValueError) as error:
            msg = f"dead-letter marker {metadata!r} is malformed: {error}"
            raise StateError(msg) from error


def must_write(marker: DeadLetterMarker | None, batch_id: int, offset: int) -> bool:
    """Say whether the dead letter of the record at ``offset``, read in ``batch_id``, is due.

    It is, unless the marker records it: same batch and an interval holding the offset, or a
    later batch (Spark runs a batch only once every earlier one is committed, so a replay of
    an older batch finds its dead letters written).
    """
    if marker is None or marker.batch_id < batch_id:
        return True
    if marker.batch_id > batch_id:
        return False
    return not marker.covers(offset)


def after_commit(
    marker: DeadLetterMarker | None, batch_id: int, done: Iterable[Interval]
) -> DeadLetterMarker:
    """Return the marker to commit once the dead letters of ``done`` are written.

    Intervals of the same batch are kept and merged with ``done``; those of an earlier batch are
    dropped, since no later read of this query reads that batch again.

    Raises
    ------
    ValueError
        When the marker records a later batch: nothing of ``batch_id`` is due then
        (:func:`must_write`), and committing would move the marker back.
    """
    if marker is not None and marker.batch_id > batch_id:
        msg = f"batch {batch_id} is older than the marker's batch {marker.batch_id}"
        raise ValueError(msg)
    kept = marker.done if marker is not None and marker.batch_id == batch_id else ()
    return DeadLetterMarker(batch_id, merge_intervals((*kept, *done)))
