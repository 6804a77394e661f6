"""Lag and batch metrics of streaming queries, for Prometheus or the log; opt-in, driver-side.

>>> from kafka_rescalable import metrics
>>> listener = metrics.publish(spark, port=9108)  # doctest: +SKIP
>>> listener.stop()  # doctest: +SKIP

The package is split by job:

- :mod:`~kafka_rescalable.metrics.progress`: a query progress into values, lag per Kafka partition
  (:func:`read_progress`); pure.
- :mod:`~kafka_rescalable.metrics.samples`: the metrics' names and labels (:data:`METRICS`), and the
  samples of one batch (:func:`batch_samples`); pure.
- :mod:`~kafka_rescalable.metrics.prometheus`: :class:`PrometheusExporter`, the samples in a
  ``prometheus_client`` registry and over HTTP (the ``metrics`` extra).
- :mod:`~kafka_rescalable.metrics.log_lines`: :class:`ProgressLog`, the same numbers as log lines.
- :mod:`~kafka_rescalable.metrics.listener`: :class:`MetricsListener`, the
  ``StreamingQueryListener``
  that feeds them, and the one-call :func:`publish` and :func:`log_progress`.
"""

from kafka_rescalable.metrics.listener import MetricsListener, ProgressSink, log_progress, publish
from kafka_rescalable.metrics.log_lines import ProgressLog, batch_line, partition_line
from kafka_rescalable.metrics.progress import (
    OUR_FORMAT,
    SPARK_KAFKA_FORMAT,
    BatchProgress,
    PartitionLag,
    SourceLag,
    TopicLag,
    read_progress,
)
from kafka_rescalable.metrics.prometheus import PrometheusExporter
from kafka_rescalable.metrics.samples import (
    BATCH_DURATION_BUCKETS,
    METRICS,
    Metric,
    Sample,
    batch_samples,
    progress_samples,
    status_samples,
)

__all__ = [
    "BATCH_DURATION_BUCKETS",
    "METRICS",
    "OUR_FORMAT",
    "SPARK_KAFKA_FORMAT",
    "BatchProgress",
    "Metric",
    "MetricsListener",
    "PartitionLag",
    "ProgressLog",
    "ProgressSink",
    "PrometheusExporter",
    "Sample",
    "SourceLag",
    "TopicLag",
    "batch_line",
    "batch_samples",
    "log_progress",
    "partition_line",
    "progress_samples",
    "publish",
    "read_progress",
    "status_samples",
]
