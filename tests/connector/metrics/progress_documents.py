"""Query progress documents for the metrics' unit tests, shaped as Spark reports them.

The shapes were copied from progress events of real queries on Spark 4.3: one of this
connector's (endOffset is the slots document, latestOffset what ``reportLatestOffset``
returns) and one of Spark's built-in Kafka source (both in Spark's per-topic form).
"""

from __future__ import annotations

import json
from typing import Any

from kafka_rescalable.state import OffsetState, PartitionOffset, SlotsDocument

QUERY_ID = "7af6072e-7879-4268-836b-a53af5cd4f83"
RUN_ID = "bb3dd1f5-7fc1-400f-9c48-aafcb4c47d51"


def slots_document(*slots: dict[tuple[str, int], int], topic_ids: bool = True) -> dict:
    """Build the slots document of slots mapping ``(topic, partition)`` to an offset."""
    state = OffsetState.of(
        [PartitionOffset(t, p, o) for (t, p), o in slot.items()] for slot in slots
    )
    topics = {t for slot in slots for t, _ in slot}
    ids = {t: f"id-{t}" for t in topics} if topic_ids else {}
    return SlotsDocument(state, topic_ids=ids).to_dict()


def per_topic(offsets: dict[tuple[str, int], int]) -> dict[str, dict[str, int]]:
    """Write Spark's ``{"<topic>": {"<partition>": offset}}``."""
    result: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        result.setdefault(topic, {})[str(partition)] = offset
    return result


def our_source(end: dict, latest: dict[tuple[str, int], int] | None) -> dict[str, Any]:
    """Build a source entry of this connector: ``latest`` as ``reportLatestOffset`` shows it."""
    report = None if latest is None else {"latest": per_topic(latest), "backlog": {"total": 0}}
    return {
        "description": "org.apache.spark.sql.execution.datasources.v2.python."
        "PythonMicroBatchStreamWithTriggerAvailableNow@1177cb8a",
        "startOffset": None,
        "endOffset": end,
        "latestOffset": report,
        "numInputRows": 100,
        "inputRowsPerSecond": 18.5,
        "processedRowsPerSecond": 210.1,
    }


def spark_kafka_source(
    end: dict[tuple[str, int], int], latest: dict[tuple[str, int], int]
) -> dict[str, Any]:
    """Build a source entry of Spark's built-in Kafka source."""
    return {
        "description": "KafkaV2[Subscribe[clicks]]",
        "startOffset": None,
        "endOffset": per_topic(end),
        "latestOffset": per_topic(latest),
        "numInputRows": 99,
        "metrics": {"maxOffsetsBehindLatest": "67"},
    }


RATE_SOURCE = {
    "description": "RateStreamV2[rowsPerSecond=1, rampUpTimeSeconds=0, numPartitions=default",
    "startOffset": 3,
    "endOffset": 5,
    "latestOffset": 5,
    "numInputRows": 2,
}


def progress(*sources: dict[str, Any], batch_id: int = 1, name: str | None = "orders_etl") -> dict:
    """Build a query progress with these sources, as ``StreamingQueryProgress.json`` parses."""
    return {
        "id": QUERY_ID,
        "runId": RUN_ID,
        "name": name,
        "timestamp": "2026-11-24T11:41:44.359Z",
        "batchId": batch_id,
        "batchDuration": 476,
        "numInputRows": 100,
        "inputRowsPerSecond": 18.5,
        "processedRowsPerSecond": 210.1,
        "durationMs": {
            "addBatch": 233,
            "commitOffsets": 104,
            "getBatch": 0,
            "latestOffset": 9,
            "queryPlanning": 56,
            "triggerExecution": 474,
            "walCommit": 67,
        },
        "stateOperators": [],
        "sources": list(sources),
        "sink": {"description": "NoopTable", "numOutputRows": 100},
    }


def as_json(document: dict) -> str:
    """Write the compact JSON Spark's ``progress.json`` returns."""
    return json.dumps(document, separators=(",", ":"))


END = slots_document({("orders", 0): 67, ("orders", 2): 66}, {("orders", 1): 67})
"""Two slots over three partitions of ``orders``: slot 0 owns 0 and 2, slot 1 owns 1."""
LATEST = {("orders", 0): 100, ("orders", 1): 100, ("orders", 2): 100}
"""The partitions' ends: backlogs 33, 33 and 34, 67 in slot 0 and 33 in slot 1."""
