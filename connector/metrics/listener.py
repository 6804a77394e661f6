"""The driver-side listener that hands every query's progress to Prometheus and to the log.

Spark calls a ``StreamingQueryListener`` on the driver for each query of the session: when it
starts, after each micro-batch (with the batch's progress) and when it terminates. The
listener reads the progress once (:func:`~kafka_rescalable.metrics.progress.read_progress`) and
gives the value to its sinks; it never talks to Kafka, so publishing costs no broker round
trip and shows exactly what Spark reports.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQueryListener

from kafka_rescalable._logging import logger as connector_logger
from kafka_rescalable.metrics.log_lines import ProgressLog
from kafka_rescalable.metrics.progress import BatchProgress, read_progress
from kafka_rescalable.metrics.prometheus import PrometheusExporter

__all__ = ["MetricsListener", "ProgressSink", "log_progress", "publish"]

_log = connector_logger.getChild("metrics")


class ProgressSink(Protocol):
    """Where the listener sends what it reads: the exporter, the log, or your own."""

    def started(self, query_id: str, name: str) -> None:
        """Note that a query started."""

    def progress(self, batch: BatchProgress) -> None:
        """Take in one reported micro-batch of a query."""

    def terminated(self, query_id: str, name: str, error: str | None) -> None:
        """Note that a query ended; ``error`` is its exception's text, ``None`` if none."""

    def close(self) -> None:
        """Release what the sink holds: the listener stopped."""


class MetricsListener(StreamingQueryListener):
    """Reads every query's progress on the driver and passes it to the sinks.

    A failure inside a sink is logged as a warning and never reaches Spark, whose listener
    bus would otherwise log it once per batch with no hint of what it is.

    Parameters
    ----------
    sinks : sequence of ProgressSink
        Where each event goes, in order.
    exporter : PrometheusExporter, optional
        The Prometheus sink among them, if any: what :attr:`registry` shows.

    Attributes
    ----------
    port : int or None
        The HTTP port the metrics are served on (the one picked, for port 0); ``None`` when
        nothing is served.
    """

    def __init__(
        self, sinks: Sequence[ProgressSink], exporter: PrometheusExporter | None = None
    ) -> None:
        self._sinks = tuple(sinks)
        self._exporter = exporter
        self._names: dict[str, str] = {}  # query id -> name, which terminated events lack
        self._session: SparkSession | None = None
        self.port: int | None = None

    @property
    def registry(self) -> Any:
        """The ``prometheus_client`` registry of the metrics, or ``None`` without Prometheus."""
        return None if self._exporter is None else self._exporter.registry

    def listen(self, spark: SparkSession) -> MetricsListener:
        """Register with ``spark``'s streaming queries; return the listener."""
        spark.streams.addListener(self)
        self._session = spark
        return self

    def stop(self) -> None:
        """Stop listening, close the sinks (and the HTTP endpoint). Safe to call twice."""
        if self._session is not None:
            self._session.streams.removeListener(self)
            self._session = None
        for sink in self._sinks:
            sink.close()
        self.port = None

    def __enter__(self) -> MetricsListener:
        """Use as a context manager that stops the listener on exit."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the listener."""
        self.stop()

    def onQueryStarted(self, event: Any) -> None:
        """Remember the query's name; mark it running."""
        query_id, name = str(event.id), event.name or ""
        self._names[query_id] = name
        self._each("start", query_id, lambda sink: sink.started(query_id, name))

    def onQueryProgress(self, event: Any) -> None:
        """Read the batch's progress once and give it to every sink."""
        try:
            batch = read_progress(event.progress.json)
        except Exception:  # a listener must not disturb the query: report and go on
            _log.warning("metrics: could not read a query progress", exc_info=True)
            return
        self._names[batch.query_id] = batch.name
        self._each("progress", batch.query_id, lambda sink: sink.progress(batch))

    def onQueryIdle(self, event: Any) -> None:
        """Nothing changes while a query waits for data: its last batch still holds."""

    def onQueryTerminated(self, event: Any) -> None:
        """Mark the query terminated, failed if it ended with an exception."""
        query_id = str(event.id)
        name = self._names.get(query_id, "")
        error = event.exception
        self._each("termination", query_id, lambda sink: sink.terminated(query_id, name, error))

    def _each(self, what: str, query_id: str, call: Callable[[ProgressSink], None]) -> None:
        for sink in self._sinks:
            try:
                call(sink)
            except Exception:  # one sink's failure must not starve the others or the query
                _log.warning(
                    "metrics: %s failed on the %s of query %s",
                    type(sink).__name__,
                    what,
                    query_id,
                    exc_info=True,
                )


def publish(
    spark: SparkSession,
    port: int | None,
    *,
    host: str = "0.0.0.0",
    per_partition: bool = True,
    log: bool = False,
    registry: Any = None,
) -> MetricsListener:
    """Publish every streaming query's lag and batch metrics for Prometheus; one call.

    Parameters
    ----------
    spark : SparkSession
        The session whose queries to follow (all of them, this connector's or not; Kafka
        partitions are published for this connector's sources and Spark's built-in one).
    port : int or None
        The HTTP port to serve ``/metrics`` on; 0 picks a free one (see
        :attr:`MetricsListener.port`). ``None`` serves nothing: the metrics are only in
        :attr:`MetricsListener.registry`, for an endpoint you already run.
    host : str
        The address to listen on; all interfaces by default, as Prometheus exporters do.
    per_partition : bool
        Publish three series per Kafka partition (backlog, latest and read offset). Turn it
        off for thousands of partitions: the per-topic series remain.
    log : bool
        Also write each batch to the ``kafka_rescalable.metrics`` logger (see :func:`log_progress`).
    registry : prometheus_client.CollectorRegistry, optional
        Register in this registry instead of a new one of its own.

    Returns
    -------
    MetricsListener
        Registered already; call :meth:`MetricsListener.stop` (or use it in ``with``) to
        stop listening and serving.

    Raises
    ------
    MissingExtraError
        When ``prometheus_client`` is not installed: ``pip install 'kafka-rescalable[metrics]'``.
    MetricsEndpointError
        When ``host:port`` cannot be listened on.
    ValueError
        When ``port`` is not a port number.
    """
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)):
        msg = f"port: must be an int from 0 to 65535 or None, got {port!r}"
        raise ValueError(msg)
    if port is not None and not 0 <= port <= 65535:
        msg = f"port: must be from 0 to 65535 (0 picks a free port), got {port}"
        raise ValueError(msg)
    exporter = PrometheusExporter(registry, per_partition=per_partition)
    sinks: list[ProgressSink] = [exporter]
    if log:
        sinks.append(ProgressLog())
    listener = MetricsListener(sinks, exporter)
    if port is not None:
        listener.port = exporter.serve(port, host)
    try:
        return listener.listen(spark)
    except BaseException:
        exporter.close()  # no endpoint left serving for a listener that never listened
        raise


def log_progress(spark: SparkSession, log: logging.Logger | None = None) -> MetricsListener:
    """Write every streaming query's batches and lag to a logger; no Prometheus needed.

    One INFO line per batch (rows, rates, duration, total backlog, the partition that lags
    most) and, when the logger is at DEBUG, one line per Kafka partition.

    Parameters
    ----------
    spark : SparkSession
        The session whose queries to follow.
    log : logging.Logger, optional
        Where to write; ``kafka_rescalable.metrics`` by default.

    Returns
    -------
    MetricsListener
        Registered already; :meth:`MetricsListener.stop` stops it.
    """
    return MetricsListener([ProgressLog(log)]).listen(spark)
