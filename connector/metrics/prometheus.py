"""The samples, served to Prometheus: a registry of their own and, if asked, an HTTP endpoint.

Needs the ``metrics`` extra (``pip install 'kafka-rescalable[metrics]'``, which brings
``prometheus_client``); without it, :class:`PrometheusExporter` raises
:class:`~kafka_rescalable.errors.MissingExtraError` naming the extra, and the rest of the package
still imports.

The gauges are not ``prometheus_client.Gauge`` objects: each query's last batch is kept as
one list of samples, replaced whole by the next batch, and turned into metric families when
Prometheus scrapes. A scrape therefore never mixes two batches (backlog of one, read offsets
of the next), and the series of a partition or slot that went away vanish with the batch
that no longer lists them, with no bookkeeping of what to remove.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from kafka_rescalable.errors import MetricsEndpointError, MissingExtraError
from kafka_rescalable.metrics.progress import BatchProgress
from kafka_rescalable.metrics.samples import (
    BATCH_DURATION,
    BATCH_DURATION_BUCKETS,
    METRICS,
    Sample,
    batch_samples,
    status_samples,
)

try:
    from prometheus_client import CollectorRegistry, Histogram, start_http_server
    from prometheus_client.core import GaugeMetricFamily
except ImportError:  # the metrics extra is not installed: say so when it is used
    CollectorRegistry = None

__all__ = ["PrometheusExporter"]

_GAUGES = tuple(metric for metric in METRICS if metric.kind == "gauge")


class PrometheusExporter:
    """Keeps every query's last samples and serves them in a ``CollectorRegistry``.

    Parameters
    ----------
    registry : prometheus_client.CollectorRegistry, optional
        Where to register the metrics; by default a new registry of their own, so they
        never mix with (or clash with) the process's default registry.
    per_partition : bool
        Whether to publish the per-partition series (see :mod:`kafka_rescalable.metrics.samples`).

    Raises
    ------
    MissingExtraError
        When ``prometheus_client`` is not installed.
    """

    def __init__(self, registry: Any = None, *, per_partition: bool = True) -> None:
        if CollectorRegistry is None:
            msg = (
                "Prometheus metrics need the prometheus_client package: install the extra "
                "with pip install 'kafka-rescalable[metrics]'"
            )
            raise MissingExtraError(msg, "metrics")
        self.registry = CollectorRegistry() if registry is None else registry
        self._per_partition = per_partition
        self._lock = threading.Lock()
        self._status: dict[str, list[Sample]] = {}  # query id -> active and failed
        self._batches: dict[str, list[Sample]] = {}  # query id -> its last batch's gauges
        self._durations = Histogram(
            BATCH_DURATION.name,
            BATCH_DURATION.help,
            BATCH_DURATION.labels,
            buckets=BATCH_DURATION_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(self)
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def serve(self, port: int, host: str) -> int:
        """Serve ``/metrics`` over HTTP on ``host:port`` in a daemon thread; return the port.

        Port 0 picks a free port, the one returned.

        Raises
        ------
        MetricsEndpointError
            When the address cannot be listened on (port taken, address not local).
        """
        try:
            self._server, self._thread = start_http_server(port, host, registry=self.registry)
        except OSError as error:
            msg = (
                f"cannot serve metrics on {host}:{port} ({error.strerror or error}); pick "
                "another port (0 picks a free one) or an address of this machine"
            )
            raise MetricsEndpointError(msg) from error
        return int(self._server.server_port)

    def started(self, query_id: str, name: str) -> None:
        """Mark the query running."""
        with self._lock:
            self._status[query_id] = status_samples(query_id, name, active=True, failed=False)

    def progress(self, batch: BatchProgress) -> None:
        """Replace the query's gauges with this batch's; observe its duration."""
        samples = batch_samples(batch, per_partition=self._per_partition)
        gauges = [s for s in samples if s.metric is not BATCH_DURATION]
        status = status_samples(batch.query_id, batch.name, active=True, failed=False)
        with self._lock:
            self._batches[batch.query_id] = gauges
            self._status[batch.query_id] = status
        for sample in samples:
            if sample.metric is BATCH_DURATION:
                self._durations.labels(*sample.labels).observe(sample.value)

    def terminated(self, query_id: str, name: str, error: str | None) -> None:
        """Mark the query terminated; its last batch's series stay, as its last known state."""
        failed = error is not None
        with self._lock:
            self._status[query_id] = status_samples(query_id, name, active=False, failed=failed)

    def close(self) -> None:
        """Stop the HTTP endpoint, if one was started."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def describe(self) -> list[Any]:
        """Return the gauges with no samples, so a registry can refuse a clashing name."""
        return [GaugeMetricFamily(m.name, m.help, labels=m.labels) for m in _GAUGES]

    def collect(self) -> Iterator[Any]:
        """Every query's status and last batch, as one family per gauge (called per scrape)."""
        with self._lock:
            samples = [s for q in self._status.values() for s in q]
            samples += [s for q in self._batches.values() for s in q]
        families = {m: GaugeMetricFamily(m.name, m.help, labels=m.labels) for m in _GAUGES}
        for sample in samples:
            families[sample.metric].add_metric(sample.labels, sample.value)
        yield from families.values()
