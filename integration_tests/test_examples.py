"""The example pipelines run as a user runs them: a separate process, real broker, real Spark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_etl_pipeline_writes_the_clean_events(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    command = [
        sys.executable,
        str(ROOT / "examples" / "etl_pipeline.py"),
        "--bootstrap", kafka_bootstrap,
        "--topic", topic_name,
        "--events", "500",
        "--output", str(tmp_path / "etl"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    # 500 events, 5 malformed, 10 producer retries that the pipeline deduplicates.
    assert f"Produced 510 events (5 malformed, 10 duplicates) to {topic_name}" in done.stdout
    assert "Wrote 495 clean events" in done.stdout
    # Four partitions, one slot each: the topic layout, dealt round-robin (no slot listed),
    # the topic's Kafka id in its entry.
    assert f'"version": 4, "slots": 4, "topics": {{"{topic_name}": {{"id": "' in done.stdout
    assert '", "offsets": [' in done.stdout
    events = list((tmp_path / "etl" / "events").glob("*.parquet"))
    assert events, "the pipeline wrote no Parquet file"


def test_windowed_pipeline_counts_everything_only_with_alignment(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    command = [
        sys.executable,
        str(ROOT / "examples" / "windowed_pipeline.py"),
        "--bootstrap", kafka_bootstrap,
        "--minutes", "4",
        "--output", str(tmp_path / "windowed"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    totals = next(line for line in done.stdout.splitlines() if line.startswith("total"))
    unaligned, aligned = (int(n) for n in totals.split()[1:])
    assert aligned == 480, done.stdout
    assert unaligned < 480, "without alignment the lagging partition loses records"


def test_kafka_to_kafka_pipeline_writes_each_event_once(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    command = [
        sys.executable,
        str(ROOT / "examples" / "kafka_to_kafka.py"),
        "--bootstrap", kafka_bootstrap,
        "--topic", topic_name,
        "--events", "500",
        "--output", str(tmp_path / "k2k"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    # 500 events + 10 producer retries, 5 malformed: 505 parsed events, each written once.
    assert f"Produced 510 events (5 malformed, 10 duplicates) to {topic_name}" in done.stdout
    assert "Read back 505 events with read_committed" in done.stdout, done.stdout


def test_avro_orders_pipeline_writes_each_minute_total_once(
    kafka_bootstrap: str, schema_registry_url: str, topic_name: str, tmp_path: Path
) -> None:
    command = [
        sys.executable,
        str(ROOT / "examples" / "avro_orders.py"),
        "--bootstrap", kafka_bootstrap,
        "--registry", schema_registry_url,
        "--topic", topic_name,
        "--orders", "400",
        "--customers", "12",
        "--minutes", "4",
        "--output", str(tmp_path / "avro_orders"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"Produced 400 Avro orders of 12 customers over 4 minutes to {topic_name}" in done.stdout
    # 4 minutes of orders and a 1-minute watermark: the first 2 minutes close.
    wrote = next(line for line in done.stdout.splitlines() if line.startswith("Wrote"))
    assert " totals of 2 closed minutes " in wrote, done.stdout
    totals = int(wrote.split()[1])
    checked = f"Read back {totals} totals, each window and customer once; all equal the input's"
    assert f"{checked}: True" in done.stdout, done.stdout
