"""The Prometheus exporter: exposition of a batch, stale series, the endpoint, the extra."""

from __future__ import annotations

import subprocess
import sys
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kafka_rescalable.errors import MetricsEndpointError
from kafka_rescalable.metrics.progress import read_progress
from kafka_rescalable.metrics.prometheus import PrometheusExporter
from tests.connector.metrics.progress_documents import (
    END,
    LATEST,
    QUERY_ID,
    our_source,
    progress,
    slots_document,
)


def scrape(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Every sample of an exposition, by sample name, keyed by its sorted labels."""
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def labels(**values: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({"query": "orders_etl", "query_id": QUERY_ID, **values}.items()))


def exposed(exporter: PrometheusExporter) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    return scrape(generate_latest(exporter.registry).decode())


def test_a_batch_is_exposed_with_its_labels() -> None:
    exporter = PrometheusExporter()
    exporter.progress(read_progress(progress(our_source(END, LATEST), batch_id=5)))
    found = exposed(exporter)
    backlog = found["kafka_rescalable_partition_backlog_records"]
    assert backlog == {
        labels(source="0", topic="orders", partition="0"): 33.0,
        labels(source="0", topic="orders", partition="1"): 33.0,
        labels(source="0", topic="orders", partition="2"): 34.0,
    }
    assert found["kafka_rescalable_batch_id"] == {labels(): 5.0}
    assert found["kafka_rescalable_query_active"] == {labels(): 1.0}
    assert found["kafka_rescalable_batch_duration_seconds_count"] == {labels(): 1.0}
    assert found["kafka_rescalable_batch_duration_seconds_sum"] == {labels(): 0.474}
    assert found["kafka_rescalable_batch_duration_seconds_bucket"][labels(le="0.5")] == 1.0
    assert found["kafka_rescalable_batch_duration_seconds_bucket"][labels(le="0.25")] == 0.0


def test_the_next_batch_replaces_the_last_and_drops_series_it_no_longer_lists() -> None:
    exporter = PrometheusExporter()
    exporter.progress(read_progress(progress(our_source(END, LATEST), batch_id=5)))
    fewer = slots_document({("orders", 0): 100})  # partitions 1 and 2 left the query
    exporter.progress(read_progress(progress(our_source(fewer, {("orders", 0): 120}), batch_id=6)))
    found = exposed(exporter)
    assert found["kafka_rescalable_partition_backlog_records"] == {
        labels(source="0", topic="orders", partition="0"): 20.0
    }
    assert found["kafka_rescalable_slot_backlog_records"] == {labels(source="0", slot="0"): 20.0}
    assert found["kafka_rescalable_batch_id"] == {labels(): 6.0}
    assert found["kafka_rescalable_batch_duration_seconds_count"] == {labels(): 2.0}


def test_a_terminated_query_is_marked_and_keeps_its_last_batch() -> None:
    exporter = PrometheusExporter()
    exporter.started(QUERY_ID, "orders_etl")
    assert exposed(exporter)["kafka_rescalable_query_active"] == {labels(): 1.0}
    exporter.progress(read_progress(progress(our_source(END, LATEST))))
    exporter.terminated(QUERY_ID, "orders_etl", "DataLossError: ...")
    found = exposed(exporter)
    assert found["kafka_rescalable_query_active"] == {labels(): 0.0}
    assert found["kafka_rescalable_query_failed"] == {labels(): 1.0}
    assert found["kafka_rescalable_topic_backlog_records"] == {
        labels(source="0", topic="orders"): 100.0
    }


def test_per_topic_only_exposes_no_partition_label() -> None:
    exporter = PrometheusExporter(per_partition=False)
    exporter.progress(read_progress(progress(our_source(END, LATEST))))
    found = exposed(exporter)
    assert all("partition" not in dict(key) for series in found.values() for key in series)
    assert found["kafka_rescalable_topic_max_partition_backlog_records"] == {
        labels(source="0", topic="orders"): 34.0
    }


def test_a_given_registry_is_used_and_a_second_exporter_in_it_is_refused() -> None:
    registry = CollectorRegistry()
    exporter = PrometheusExporter(registry)
    assert exporter.registry is registry
    with pytest.raises(ValueError, match="kafka_rescalable_"):
        PrometheusExporter(registry)


def test_the_endpoint_serves_the_metrics_and_refuses_a_taken_port() -> None:
    exporter = PrometheusExporter()
    port = exporter.serve(0, "127.0.0.1")
    try:
        exporter.progress(read_progress(progress(our_source(END, LATEST))))
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
            found = scrape(reply.read().decode())
        assert found["kafka_rescalable_topic_backlog_records"] == {
            labels(source="0", topic="orders"): 100.0
        }
        with pytest.raises(MetricsEndpointError, match=f"127.0.0.1:{port}.*pick another port"):
            PrometheusExporter().serve(port, "127.0.0.1")
    finally:
        exporter.close()


def test_without_prometheus_client_the_error_names_the_extra() -> None:
    # A fresh interpreter where prometheus_client cannot be imported, as without the extra.
    code = (
        "import sys; sys.modules['prometheus_client'] = None\n"
        "import kafka_rescalable.metrics as metrics\n"
        "try:\n"
        "    metrics.PrometheusExporter()\n"
        "except metrics.prometheus.MissingExtraError as error:\n"
        "    print(type(error).__name__, error.extra, error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.startswith("MissingExtraError metrics ")
    assert "pip install 'kafka-rescalable[metrics]'" in result.stdout
