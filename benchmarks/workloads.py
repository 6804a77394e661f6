"""The throughput workloads, and the JSON records they hold.

Each workload is produced once per run and read by every contender. A record's value is a
JSON object padded to an exact size, so the second query can parse it with ``from_json``::

    {"id":17,"user":"u017","amount":1.7,"pad":"xxxxxxxx..."}
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["USERS", "VALUE_DDL", "Workload", "json_value", "workloads"]

USERS = 100
"""Distinct ``user`` values; the aggregating query groups by them."""

VALUE_DDL = "id BIGINT, user STRING, amount DOUBLE, pad STRING"
"""The schema ``from_json`` parses a value with."""

_PAD = b"x"


@dataclass(frozen=True)
class Workload:
    """One topic and how it is read.

    Parameters
    ----------
    key : str
        Short name, used in topic names and tables.
    records : int
        Records produced.
    value_bytes : int
        Size of every value (no key).
    partitions : int
        Kafka partitions of the topic.
    parallelism : int, optional
        Our ``parallelism`` option (reader slots); ``None`` keeps the default.
    min_partitions : int, optional
        ``minPartitions`` for both Spark sources; ``None`` leaves it unset.
    """

    key: str
    records: int
    value_bytes: int
    partitions: int
    parallelism: int | None = None
    min_partitions: int | None = None

    def __post_init__(self) -> None:
        """Refuse sizes a JSON value cannot have and counts that make no topic."""
        if self.records < 1 or self.partitions < 1:
            msg = f"records and partitions must be >= 1, got {self.records}, {self.partitions}"
            raise ValueError(msg)
        smallest = len(json_value(10**12, 0))
        if self.value_bytes < smallest:
            msg = (
                f"value_bytes must be >= {smallest} to hold the JSON fields, got {self.value_bytes}"
            )
            raise ValueError(msg)

    @property
    def description(self) -> str:
        """``5,000,000 x 100 B, 8 partitions`` (plus the read options that differ)."""
        size = (
            f"{self.value_bytes // 1000} KB"
            if self.value_bytes >= 1000
            else f"{self.value_bytes} B"
        )
        text = f"{self.records:,} x {size}, {self.partitions} partition"
        text += "" if self.partitions == 1 else "s"
        options = []
        if self.parallelism is not None:
            options.append(f"parallelism {self.parallelism}")
        if self.min_partitions is not None:
            options.append(f"minPartitions {self.min_partitions}")
        return text + (f" ({', '.join(options)})" if options else "")

    @property
    def total_bytes(self) -> int:
        """Value bytes in the topic."""
        return self.records * self.value_bytes


def workloads(quick: bool) -> tuple[Workload, ...]:
    """Return the issue's three workloads; ``quick`` shrinks them for a smoke test."""
    scale = 25 if quick else 1
    return (
        Workload("100B", 5_000_000 // scale, 100, 8),
        Workload("2KB", 500_000 // scale, 2000, 8),
        Workload("1-partition", 2_000_000 // scale, 100, 1, parallelism=2, min_partitions=2),
    )


def json_value(index: int, size: int) -> bytes:
    """Record ``index``'s value: a JSON object of exactly ``size`` bytes when ``size`` allows.

    ``user`` cycles through :data:`USERS` names and ``amount`` through 0.0 to 99.9, so the
    aggregate of a topic is known in advance. When ``size`` is below the unpadded length the
    unpadded object is returned.
    """
    head = b'{"id":%d,"user":"u%03d","amount":%d.%d,"pad":"' % (
        index,
        index % USERS,
        index % 1000 // 10,
        index % 10,
    )
    return head + _PAD * max(0, size - len(head) - 2) + b'"}'
