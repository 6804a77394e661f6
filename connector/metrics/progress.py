"""One micro-batch's progress, read into the lag of each Kafka partition the query reads.

Spark reports every micro-batch as a progress document (``StreamingQueryProgress.json``).
Per source it holds ``endOffset``, where the batch ends, and ``latestOffset``, what the
source last reported as the newest data:

- for this connector, ``endOffset`` is the slots document (:class:`state.SlotsDocument`),
  and ``latestOffset`` is what the reader's ``reportLatestOffset`` returns,
  ``{"latest": {"<topic>": {"<partition>": <offset>}}, "backlog": {...}}``;
- for Spark's built-in Kafka source (its description starts with ``Kafka``), both are
  Spark's per-topic form ``{"<topic>": {"<partition>": <offset>}}``.

Any other source is left out. The per-topic form is one slot of a slots document, so both
shapes are read by :class:`state.SlotsDocument` and get its checks.

Everything here is pure: no Spark, no Kafka, no metrics library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from kafka_rescalable.state import OffsetDocumentError, SlotsDocument

__all__ = [
    "OUR_FORMAT",
    "SPARK_KAFKA_FORMAT",
    "BatchProgress",
    "PartitionLag",
    "SourceLag",
    "TopicLag",
    "read_progress",
]

OUR_FORMAT: Final = "kafka-rescalable"
""":attr:`SourceLag.format` of this connector's source."""

SPARK_KAFKA_FORMAT: Final = "kafka"
""":attr:`SourceLag.format` of Spark's built-in Kafka source."""


@dataclass(frozen=True, slots=True)
class PartitionLag:
    """Where a query stands in one Kafka partition after a batch.

    Parameters
    ----------
    topic, partition
        The Kafka partition.
    read : int or None
        The batch's end offset: the next offset the query reads, once this batch is done.
        ``None`` when the batch's end does not list the partition.
    latest : int or None
        The partition's end when the source planned the batch: the high watermark, or the
        last stable offset under ``read_committed``. ``None`` when the source reported none.
    slot : int or None
        The reader slot that owns the partition (this connector only).
    """

    topic: str
    partition: int
    read: int | None
    latest: int | None
    slot: int | None = None

    @property
    def backlog(self) -> int | None:
        """Records waiting: ``latest - read``, never below zero; ``None`` if either is unknown.

        ``read`` is the batch's *end* offset, not its start: when Spark reports the batch,
        its records are being (or have been) processed, so they no longer wait. ``latest``
        is the end the source saw when it planned the batch, not a fresh look-up: it is the
        number Spark reports with that batch, so backlog, read and latest describe the same
        moment, and publishing it costs no Kafka round trip. Counted in offsets: on a
        compacted topic, or one with transaction markers, fewer records than that remain.
        A partition whose end went below the read offset (a topic re-created, under
        ``failOnDataLoss=false``) has nothing waiting: zero.
        """
        if self.read is None or self.latest is None:
            return None
        return max(0, self.latest - self.read)


@dataclass(frozen=True, slots=True)
class TopicLag:
    """One topic's partitions of one source, summed up.

    Parameters
    ----------
    topic : str
        The topic.
    partitions : int
        How many of its partitions the batch lists.
    backlog : int
        Records waiting in all of them (partitions of unknown backlog count zero).
    max_backlog : int
        The largest backlog of one partition: the one that lags most.
    """

    topic: str
    partitions: int
    backlog: int
    max_backlog: int


@dataclass(frozen=True)
class SourceLag:
    """The lag of one Kafka source of a query, per partition.

    Parameters
    ----------
    index : int
        The source's position in the progress's ``sources``: what tells two sources of
        one query apart.
    format : str
        :data:`OUR_FORMAT` or :data:`SPARK_KAFKA_FORMAT`.
    partitions : tuple of PartitionLag
        In ``(topic, partition)`` order.
    slots : int or None
        The number of reader slots (this connector only).
    """

    index: int
    format: str
    partitions: tuple[PartitionLag, ...]
    slots: int | None = None

    @property
    def backlog(self) -> int:
        """Records waiting in every partition (partitions of unknown backlog count zero)."""
        return sum(lag.backlog or 0 for lag in self.partitions)

    def topics(self) -> tuple[TopicLag, ...]:
        """Per topic, in topic order: partition count, total and largest backlog."""
        sums: dict[str, list[int]] = {}
        for lag in self.partitions:
            behind = lag.backlog or 0
            entry = sums.setdefault(lag.topic, [0, 0, 0])
            entry[0] += 1
            entry[1] += behind
            entry[2] = max(entry[2], behind)
        return tuple(TopicLag(topic, *sums[topic]) for topic in sorted(sums))

    def slot_backlogs(self) -> tuple[int, ...]:
        """Return the records waiting per reader slot, slot 0 first; none for Spark's source."""
        if self.slots is None:
            return ()
        per_slot = [0] * self.slots
        for lag in self.partitions:
            if lag.slot is not None:
                per_slot[lag.slot] += lag.backlog or 0
        return tuple(per_slot)


@dataclass(frozen=True)
class BatchProgress:
    """What one progress event says about a query, lag per Kafka partition included.

    Parameters
    ----------
    query_id : str
        The query's id, the same across restarts from one checkpoint.
    run_id : str
        This run's id.
    name : str
        The query's name; empty when it has none.
    batch_id : int
        The micro-batch.
    timestamp_s : float or None
        When the batch started, in seconds since the epoch.
    input_rows : int
        Rows the batch read, all sources together.
    input_rows_per_second, processed_rows_per_second : float or None
        Spark's rates; ``None`` where Spark left them out (it omits a rate it cannot compute).
    durations_ms : tuple of (str, int)
        Spark's ``durationMs``, phase by phase (``triggerExecution``, ``addBatch``,
        ``latestOffset``, ...), sorted by phase.
    sources : tuple of SourceLag
        The Kafka sources, ours and Spark's; other sources are left out.
    """

    query_id: str
    run_id: str
    name: str
    batch_id: int
    timestamp_s: float | None
    input_rows: int
    input_rows_per_second: float | None
    processed_rows_per_second: float | None
    durations_ms: tuple[tuple[str, int], ...]
    sources: tuple[SourceLag, ...]

    @property
    def label(self) -> str:
        """The query's name, or its id when it has none: how logs name the query."""
        return self.name or self.query_id

    @property
    def trigger_ms(self) -> int | None:
        """The whole batch's duration (``triggerExecution``), if Spark reported it."""
        return dict(self.durations_ms).get("triggerExecution")


def read_progress(progress: str | bytes | Mapping[str, Any]) -> BatchProgress:
    """Read a progress document (its JSON text, or the parsed object) into a value.

    Raises
    ------
    ValueError
        When ``progress`` is not JSON, or lacks the query's ``id`` or the ``batchId``: it is
        not a query progress.
    """
    data = json.loads(progress) if isinstance(progress, str | bytes) else progress
    if not isinstance(data, Mapping) or "id" not in data or "batchId" not in data:
        msg = "not a streaming query progress: expected a JSON object with 'id' and 'batchId'"
        raise ValueError(msg)
    sources = []
    for index, source in enumerate(data.get("sources") or ()):
        lag = _source_lag(index, source) if isinstance(source, Mapping) else None
        if lag is not None:
            sources.append(lag)
    durations = data.get("durationMs") or {}
    return BatchProgress(
        query_id=str(data["id"]),
        run_id=str(data.get("runId") or ""),
        name=str(data.get("name") or ""),
        batch_id=int(data["batchId"]),
        timestamp_s=_epoch_seconds(data.get("timestamp")),
        input_rows=int(data.get("numInputRows") or 0),
        input_rows_per_second=_number(data.get("inputRowsPerSecond")),
        processed_rows_per_second=_number(data.get("processedRowsPerSecond")),
        durations_ms=tuple(sorted((str(k), int(v)) for k, v in durations.items())),
        sources=tuple(sources),
    )


def _source_lag(index: int, source: Mapping[str, Any]) -> SourceLag | None:
    """Lag of one source, or ``None`` for a source that is not Kafka or has no end yet."""
    end = _json_value(source.get("endOffset"))
    if not isinstance(end, Mapping):
        return None
    latest_report = _json_value(source.get("latestOffset"))
    if str(source.get("description", "")).startswith("Kafka"):  # Spark's built-in source
        read = _per_topic(end)
        if read is None:
            return None
        return SourceLag(
            index, SPARK_KAFKA_FORMAT, _lags(read, _per_topic(latest_report) or {}, {})
        )
    try:
        document = SlotsDocument.from_dict(end)
    except OffsetDocumentError:  # another source's offsets (ForeignCheckpointError), or damaged
        return None
    state = document.state
    latest = None
    if isinstance(latest_report, Mapping):
        latest = _per_topic(latest_report.get("latest"))
    read: dict[tuple[str, int], int] = {}
    slots: dict[tuple[str, int], int] = {}
    for number, slot in enumerate(state.slots):
        for sub in slot:
            read[sub.topic, sub.partition] = sub.offset
            slots[sub.topic, sub.partition] = number
    return SourceLag(index, OUR_FORMAT, _lags(read, latest or {}, slots), state.num_slots)


def _lags(
    read: Mapping[tuple[str, int], int],
    latest: Mapping[tuple[str, int], int],
    slots: Mapping[tuple[str, int], int],
) -> tuple[PartitionLag, ...]:
    """One :class:`PartitionLag` per partition in either map, in ``(topic, partition)`` order."""
    return tuple(
        PartitionLag(key[0], key[1], read.get(key), latest.get(key), slots.get(key))
        for key in sorted(read.keys() | latest.keys())
    )


def _per_topic(value: object) -> dict[tuple[str, int], int] | None:
    """Spark's ``{"<topic>": {"<partition>": <offset>}}``, read as one slot of a slots document.

    ``None`` for anything else (``null``, another shape, a negative offset).
    """
    if not isinstance(value, Mapping):
        return None
    try:
        state = SlotsDocument.from_dict({"version": 1, "slots": [value]}).state
    except OffsetDocumentError:
        return None
    return {(sub.topic, sub.partition): sub.offset for sub in state.sub_states()}


def _json_value(value: object) -> object:
    """Parse an offset the progress holds as JSON text (PySpark's objects); pass others."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _epoch_seconds(text: object) -> float | None:
    """Spark's ``2026-11-24T11:41:38.961Z`` in seconds since the epoch."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None
