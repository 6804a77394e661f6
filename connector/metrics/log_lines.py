"""The same numbers as log lines, for those who read logs rather than run Prometheus.

One INFO line per batch whose length does not grow with the number of partitions (totals,
and the partition that lags most); at DEBUG, one short line per partition. The logger is
``kafka_rescalable.metrics``, under the connector's own logger, so its lines reach the driver's
stderr like the connector's others; turn the detail on with
``logging.getLogger("kafka_rescalable.metrics").setLevel(logging.DEBUG)``.
"""

from __future__ import annotations

import logging

from kafka_rescalable._logging import logger as connector_logger
from kafka_rescalable.metrics.progress import BatchProgress, PartitionLag, SourceLag

__all__ = ["ProgressLog", "batch_line", "partition_line"]


def _seconds(millis: int) -> str:
    return f"{millis / 1000:.2f} s"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def batch_line(batch: BatchProgress) -> str:
    """Describe the batch in one line: rows, rates, durations, and the backlog of all Kafka sources.

    Only the slowest phase besides ``triggerExecution`` is named, and only the partition
    that lags most, so the line is as short at 10,000 partitions as at one.
    """
    parts = [
        f"query {batch.label} batch {batch.batch_id}: {batch.input_rows} rows",
        f"{_rate(batch.input_rows_per_second)} rows/s in, "
        f"{_rate(batch.processed_rows_per_second)} rows/s processed",
    ]
    phases = [(ms, phase) for phase, ms in batch.durations_ms if phase != "triggerExecution"]
    if batch.trigger_ms is not None:
        slowest = f" (most in {max(phases)[1]} {_seconds(max(phases)[0])})" if phases else ""
        parts.append(f"batch {_seconds(batch.trigger_ms)}{slowest}")
    if batch.sources:
        parts.append(_backlog_summary(batch.sources))
    return ", ".join(parts)


def _backlog_summary(sources: tuple[SourceLag, ...]) -> str:
    lags = [lag for source in sources for lag in source.partitions]
    topics = {lag.topic for lag in lags}
    text = (
        f"backlog {sum(source.backlog for source in sources)} records in {len(lags)} "
        f"partitions of {len(topics)} topic{'s' if len(topics) != 1 else ''}"
    )
    behind = [lag for lag in lags if lag.backlog]
    if behind:
        most = max(behind, key=lambda lag: lag.backlog or 0)
        text += f", most {most.topic}-{most.partition} ({most.backlog})"
    slots = [source.slots for source in sources if source.slots is not None]
    if slots:
        text += f", {sum(slots)} reader slots"
    return text


def partition_line(batch: BatchProgress, source: SourceLag, lag: PartitionLag) -> str:
    """One partition after the batch: its read and latest offsets, its backlog, its slot."""
    where = f" source {source.index}" if len(batch.sources) > 1 else ""
    text = (
        f"query {batch.label} batch {batch.batch_id}{where} {lag.topic}-{lag.partition}: "
        f"read {_known(lag.read)}, latest {_known(lag.latest)}, backlog {_known(lag.backlog)}"
    )
    if lag.slot is not None:
        text += f", slot {lag.slot}"
    return text


def _known(value: int | None) -> str:
    return "?" if value is None else str(value)


class ProgressLog:
    """Writes each batch (INFO) and each partition (DEBUG) to a logger.

    Parameters
    ----------
    log : logging.Logger, optional
        Where to write; ``kafka_rescalable.metrics`` by default.
    """

    def __init__(self, log: logging.Logger | None = None) -> None:
        self._log = log or connector_logger.getChild("metrics")

    def started(self, query_id: str, name: str) -> None:
        """Nothing to say: Spark logs a query's start itself."""

    def progress(self, batch: BatchProgress) -> None:
        """One INFO line for the batch, then one DEBUG line per partition if DEBUG is on."""
        self._log.info("%s", batch_line(batch))
        if self._log.isEnabledFor(logging.DEBUG):
            for source in batch.sources:
                for lag in source.partitions:
                    self._log.debug("%s", partition_line(batch, source, lag))

    def terminated(self, query_id: str, name: str, error: str | None) -> None:
        """Say the query ended, and with which error (its first line), if any."""
        label = name or query_id
        if error is None:
            self._log.info("query %s terminated", label)
        else:
            first = error.strip().splitlines()[0] if error.strip() else "unknown error"
            self._log.warning("query %s terminated with an error: %s", label, first)

    def close(self) -> None:
        """Nothing to release."""
