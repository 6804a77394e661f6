"""The metrics: their names and labels, and the samples one batch's progress gives them.

Every name starts with ``kafka_rescalable_``. Labels, outermost first:

- ``query``: the query's name (empty when it has none); ``query_id``: its id, which stays the
  same when the query restarts from its checkpoint;
- ``source``: the source's position in the query (``0`` unless the query reads several);
- ``topic``, ``partition``: the Kafka partition; ``slot``: a reader slot of this connector;
- ``phase``: one of Spark's ``durationMs`` phases (``triggerExecution``, ``addBatch``, ...).

Per-partition series cost three series per partition: 30,000 for a query over 10,000
partitions. With ``per_partition=False`` only the per-topic series are made, whose
``..._topic_max_partition_backlog_records`` still shows the partition that lags most.

Pure: a catalog of :class:`Metric` values and functions from values to :class:`Sample` lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from kafka_rescalable.metrics.progress import BatchProgress, SourceLag, read_progress

__all__ = [
    "BATCH_DURATION_BUCKETS",
    "METRICS",
    "Metric",
    "Sample",
    "batch_samples",
    "progress_samples",
    "status_samples",
]

QUERY: Final = ("query", "query_id")
SOURCE: Final = (*QUERY, "source")
TOPIC: Final = (*SOURCE, "topic")
PARTITION: Final = (*TOPIC, "partition")


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric: its full name, kind, label names and help text."""

    name: str
    kind: Literal["gauge", "histogram"]
    labels: tuple[str, ...]
    help: str


@dataclass(frozen=True, slots=True)
class Sample:
    """One value of a metric: a gauge's value, or one observation of a histogram.

    ``labels`` are the label values, in the order of ``metric.labels``.
    """

    metric: Metric
    labels: tuple[str, ...]
    value: float


def _metric(
    name: str,
    labels: tuple[str, ...],
    help_text: str,
    kind: Literal["gauge", "histogram"] = "gauge",
) -> Metric:
    return Metric(f"kafka_rescalable_{name}", kind, labels, help_text)


QUERY_ACTIVE = _metric("query_active", QUERY, "1 while the query runs, 0 once it terminated.")
QUERY_FAILED = _metric("query_failed", QUERY, "1 if the query terminated with an error, else 0.")
BATCH_ID = _metric("batch_id", QUERY, "Id of the query's last reported micro-batch.")
BATCH_TIMESTAMP = _metric(
    "batch_timestamp_seconds", QUERY, "When the last reported micro-batch started (Unix time)."
)
INPUT_ROWS = _metric("input_rows", QUERY, "Rows the last micro-batch read, all sources.")
INPUT_RATE = _metric(
    "input_rows_per_second", QUERY, "Spark's inputRowsPerSecond of the last micro-batch."
)
PROCESSED_RATE = _metric(
    "processed_rows_per_second", QUERY, "Spark's processedRowsPerSecond of the last micro-batch."
)
PHASE_SECONDS = _metric(
    "batch_phase_seconds",
    (*QUERY, "phase"),
    "Time the last micro-batch spent per phase (Spark's durationMs).",
)
BATCH_DURATION = _metric(
    "batch_duration_seconds",
    QUERY,
    "Micro-batch durations (Spark's triggerExecution), every batch observed.",
    kind="histogram",
)
READER_SLOTS = _metric("reader_slots", SOURCE, "Reader slots of a kafka-rescalable source.")
SLOT_BACKLOG = _metric(
    "slot_backlog_records", (*SOURCE, "slot"), "Records waiting in the partitions of a slot."
)
TOPIC_PARTITIONS = _metric("topic_partitions", TOPIC, "Partitions of the topic the batch lists.")
TOPIC_BACKLOG = _metric(
    "topic_backlog_records", TOPIC, "Records waiting in the topic: latest minus read offsets."
)
TOPIC_MAX_BACKLOG = _metric(
    "topic_max_partition_backlog_records", TOPIC, "Largest backlog of one partition of the topic."
)
PARTITION_BACKLOG = _metric(
    "partition_backlog_records",
    PARTITION,
    "Records waiting: latest offset minus the batch's end offset, at the batch's planning.",
)
PARTITION_LATEST = _metric(
    "partition_latest_offset", PARTITION, "The partition's end when the batch was planned."
)
PARTITION_READ = _metric(
    "partition_read_offset", PARTITION, "The batch's end offset: the next offset the query reads."
)

METRICS: Final = (
    QUERY_ACTIVE,
    QUERY_FAILED,
    BATCH_ID,
    BATCH_TIMESTAMP,
    INPUT_ROWS,
    INPUT_RATE,
    PROCESSED_RATE,
    PHASE_SECONDS,
    BATCH_DURATION,
    READER_SLOTS,
    SLOT_BACKLOG,
    TOPIC_PARTITIONS,
    TOPIC_BACKLOG,
    TOPIC_MAX_BACKLOG,
    PARTITION_BACKLOG,
    PARTITION_LATEST,
    PARTITION_READ,
)
"""Every metric, in the order they are exposed."""

BATCH_DURATION_BUCKETS: Final = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""Upper bounds, in seconds, of :data:`BATCH_DURATION`'s buckets: a trigger of 100 ms up to
minutes-long batches of a backfill."""


def status_samples(query_id: str, name: str, *, active: bool, failed: bool) -> list[Sample]:
    """``query_active`` and ``query_failed`` of a query."""
    labels = (name, query_id)
    return [
        Sample(QUERY_ACTIVE, labels, float(active)),
        Sample(QUERY_FAILED, labels, float(failed)),
    ]


def batch_samples(batch: BatchProgress, *, per_partition: bool = True) -> list[Sample]:
    """Every sample one batch gives: the query's, then each Kafka source's.

    The :data:`BATCH_DURATION` sample is one observation for the histogram; every other
    sample is a gauge's new value. Series a batch does not give (a partition that left, a
    slot that went away) are the caller's to drop.

    Parameters
    ----------
    batch : BatchProgress
        The batch, from :func:`kafka_rescalable.metrics.progress.read_progress`.
    per_partition : bool
        Whether to give the three per-partition series; the per-topic ones are always given.
    """
    query = (batch.name, batch.query_id)
    samples = [
        Sample(BATCH_ID, query, float(batch.batch_id)),
        Sample(INPUT_ROWS, query, float(batch.input_rows)),
    ]
    if batch.timestamp_s is not None:
        samples.append(Sample(BATCH_TIMESTAMP, query, batch.timestamp_s))
    if batch.input_rows_per_second is not None:
        samples.append(Sample(INPUT_RATE, query, batch.input_rows_per_second))
    if batch.processed_rows_per_second is not None:
        samples.append(Sample(PROCESSED_RATE, query, batch.processed_rows_per_second))
    for phase, millis in batch.durations_ms:
        samples.append(Sample(PHASE_SECONDS, (*query, phase), millis / 1000))
    if batch.trigger_ms is not None:
        samples.append(Sample(BATCH_DURATION, query, batch.trigger_ms / 1000))
    for source in batch.sources:
        samples.extend(_source_samples(query, source, per_partition))
    return samples


def _source_samples(query: tuple[str, str], source: SourceLag, per_partition: bool) -> list[Sample]:
    labels = (*query, str(source.index))
    samples = []
    if source.slots is not None:
        samples.append(Sample(READER_SLOTS, labels, float(source.slots)))
        for slot, backlog in enumerate(source.slot_backlogs()):
            samples.append(Sample(SLOT_BACKLOG, (*labels, str(slot)), float(backlog)))
    for topic in source.topics():
        at = (*labels, topic.topic)
        samples.append(Sample(TOPIC_PARTITIONS, at, float(topic.partitions)))
        samples.append(Sample(TOPIC_BACKLOG, at, float(topic.backlog)))
        samples.append(Sample(TOPIC_MAX_BACKLOG, at, float(topic.max_backlog)))
    if per_partition:
        for lag in source.partitions:
            at = (*labels, lag.topic, str(lag.partition))
            if lag.backlog is not None:
                samples.append(Sample(PARTITION_BACKLOG, at, float(lag.backlog)))
            if lag.latest is not None:
                samples.append(Sample(PARTITION_LATEST, at, float(lag.latest)))
            if lag.read is not None:
                samples.append(Sample(PARTITION_READ, at, float(lag.read)))
    return samples


def progress_samples(
    progress: str | bytes | Mapping[str, Any], *, per_partition: bool = True
) -> list[Sample]:
    """:func:`batch_samples` of a progress document (JSON text or parsed); see there."""
    return batch_samples(read_progress(progress), per_partition=per_partition)
