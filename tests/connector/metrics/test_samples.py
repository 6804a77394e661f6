"""The metric catalog, and the samples a batch gives it."""

from __future__ import annotations

import re
from pathlib import Path

from kafka_rescalable.metrics.progress import read_progress
from kafka_rescalable.metrics.samples import (
    BATCH_DURATION,
    METRICS,
    Sample,
    batch_samples,
    progress_samples,
    status_samples,
)
from tests.connector.metrics.progress_documents import (
    END,
    LATEST,
    QUERY_ID,
    as_json,
    our_source,
    progress,
    slots_document,
    spark_kafka_source,
)

Q = ("orders_etl", QUERY_ID)


def by_name(samples: list[Sample]) -> dict[str, dict[tuple[str, ...], float]]:
    found: dict[str, dict[tuple[str, ...], float]] = {}
    for sample in samples:
        series = found.setdefault(sample.metric.name, {})
        assert sample.labels not in series, f"{sample.metric.name}{sample.labels} given twice"
        assert len(sample.labels) == len(sample.metric.labels)
        series[sample.labels] = sample.value
    return found


def test_every_metric_is_named_under_the_prefix_once_with_prometheus_names() -> None:
    names = [metric.name for metric in METRICS]
    assert len(set(names)) == len(names)
    for metric in METRICS:
        assert re.fullmatch(r"kafka_rescalable_[a-z_]+", metric.name), metric.name
        assert metric.kind in {"gauge", "histogram"}
        assert all(re.fullmatch(r"[a-z_]+", label) for label in metric.labels)


def test_per_partition_series_hold_backlog_latest_and_read_offsets() -> None:
    found = by_name(progress_samples(as_json(progress(our_source(END, LATEST)))))
    at = {p: (*Q, "0", "orders", str(p)) for p in range(3)}
    assert found["kafka_rescalable_partition_backlog_records"] == {
        at[0]: 33.0,
        at[1]: 33.0,
        at[2]: 34.0,
    }
    assert found["kafka_rescalable_partition_latest_offset"] == {at[p]: 100.0 for p in range(3)}
    assert found["kafka_rescalable_partition_read_offset"] == {
        at[0]: 67.0,
        at[1]: 67.0,
        at[2]: 66.0,
    }


def test_topic_slot_and_query_series() -> None:
    found = by_name(progress_samples(progress(our_source(END, LATEST), batch_id=4)))
    topic = (*Q, "0", "orders")
    assert found["kafka_rescalable_topic_backlog_records"] == {topic: 100.0}
    assert found["kafka_rescalable_topic_max_partition_backlog_records"] == {topic: 34.0}
    assert found["kafka_rescalable_topic_partitions"] == {topic: 3.0}
    assert found["kafka_rescalable_reader_slots"] == {(*Q, "0"): 2.0}
    assert found["kafka_rescalable_slot_backlog_records"] == {
        (*Q, "0", "0"): 67.0,
        (*Q, "0", "1"): 33.0,
    }
    assert found["kafka_rescalable_batch_id"] == {Q: 4.0}
    assert found["kafka_rescalable_input_rows"] == {Q: 100.0}
    assert found["kafka_rescalable_input_rows_per_second"] == {Q: 18.5}
    assert found["kafka_rescalable_processed_rows_per_second"] == {Q: 210.1}
    assert found["kafka_rescalable_batch_phase_seconds"][(*Q, "addBatch")] == 0.233
    assert found["kafka_rescalable_batch_phase_seconds"][(*Q, "triggerExecution")] == 0.474
    assert found[BATCH_DURATION.name] == {Q: 0.474}


def test_per_topic_only_leaves_out_every_per_partition_series() -> None:
    samples = batch_samples(read_progress(progress(our_source(END, LATEST))), per_partition=False)
    found = by_name(samples)
    assert not {name for name in found if "_partition_" in name} - {
        "kafka_rescalable_topic_max_partition_backlog_records"
    }
    assert found["kafka_rescalable_topic_backlog_records"] == {(*Q, "0", "orders"): 100.0}


def test_the_series_count_stays_per_topic_at_ten_thousand_partitions() -> None:
    partitions = {("big", p): p for p in range(10_000)}
    document = progress(our_source(slots_document(partitions), {k: 10_000 for k in partitions}))
    per_topic = batch_samples(read_progress(document), per_partition=False)
    per_partition = batch_samples(read_progress(document), per_partition=True)
    assert len(per_topic) < 30
    assert len(per_partition) == len(per_topic) + 30_000


def test_two_sources_are_told_apart_by_the_source_label() -> None:
    spark_source = spark_kafka_source({("orders", 0): 90}, {("orders", 0): 100})
    found = by_name(progress_samples(progress(our_source(END, LATEST), spark_source)))
    backlog = found["kafka_rescalable_partition_backlog_records"]
    assert backlog[(*Q, "0", "orders", "0")] == 33.0
    assert backlog[(*Q, "1", "orders", "0")] == 10.0
    assert set(found["kafka_rescalable_reader_slots"]) == {(*Q, "0")}  # ours only


def test_unknown_values_give_no_sample() -> None:
    found = by_name(progress_samples(progress(our_source(END, None))))
    assert "kafka_rescalable_partition_backlog_records" not in found
    assert "kafka_rescalable_partition_latest_offset" not in found
    assert len(found["kafka_rescalable_partition_read_offset"]) == 3


def test_status_samples() -> None:
    assert by_name(status_samples("id", "q", active=False, failed=True)) == {
        "kafka_rescalable_query_active": {("q", "id"): 0.0},
        "kafka_rescalable_query_failed": {("q", "id"): 1.0},
    }


def documented_metrics() -> dict[str, tuple[str, ...]]:
    """Read the metrics page's table (docs/how-to/metrics.md): each metric, with its labels."""
    page = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "metrics.md"
    lines = page.read_text(encoding="utf-8").splitlines()
    start = lines.index("| Metric (`kafka_rescalable_...`) | Labels | Value |")
    found: dict[str, tuple[str, ...]] = {}
    labels: tuple[str, ...] = ()
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        names_cell, labels_cell = line.split("|")[1:3]
        if labels_cell.strip() != "same":
            labels = tuple(label.strip() for label in labels_cell.split(","))
        for name in re.findall(r"`([a-z_]+)`", names_cell):
            found[f"kafka_rescalable_{name}"] = labels
    return found


def test_the_docs_table_lists_every_metric_with_its_labels() -> None:
    assert documented_metrics() == {metric.name: metric.labels for metric in METRICS}
