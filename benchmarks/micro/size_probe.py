"""The byte cap's size probe (``maxBytesPerTrigger``): its time per batch and what it reads.

The driver reads the records a batch may admit to count their bytes (see
:mod:`kafka_rescalable.driver.record_sizes`). This drains one backlog batch by batch with the
probe alone, as the stream reader calls it, with no Spark: each batch starts where the last
ended, as in a running query. It reports the probe's seconds per batch, the bytes it read
against the backlog's (about 1: each record read about once), and the largest batch against
the cap, which it checks: above it only when the first records of the partitions alone are.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

from benchmarks.data import PRODUCER_CONFIG, create_topic, produce_one

__all__ = ["PROBE_CASES", "ProbeCase", "ProbeResult", "measure_size_probe"]


@dataclass(frozen=True)
class ProbeCase:
    """A backlog of ``records`` values of ``smallest`` to ``largest`` bytes, log-uniform.

    ``--quick`` writes a tenth of the records and caps batches at a tenth of the bytes
    (``quick_cap``), so that it still drains in several batches.
    """

    name: str
    records: int
    smallest: int
    largest: int
    partitions: int
    cap: str
    quick_cap: str


PROBE_CASES = (
    ProbeCase("large", 300, 1_000, 1_000_000, 3, "16m", "1600k"),
    ProbeCase("small", 200_000, 100, 1_000, 3, "16m", "1600k"),
)
"""Large uneven records, the option's purpose, and small ones, its most expensive use."""


@dataclass(frozen=True)
class ProbeResult:
    """One case drained: per-batch probe seconds, bytes read by the probe and admitted."""

    case: ProbeCase
    records: int
    cap: str
    batches: int
    median_s: float
    max_s: float
    backlog_bytes: int
    probed_bytes: int
    largest_batch_bytes: int
    cap_bytes: int

    @property
    def description(self) -> str:
        """One line for the table."""
        case = self.case
        return (
            f"{self.records:,} records of {case.smallest:,}-{case.largest:,} B, "
            f"{case.partitions} partitions, maxBytesPerTrigger={self.cap}"
        )


def measure_size_probe(bootstrap: str, topic: str, case: ProbeCase, quick: bool) -> ProbeResult:
    """Fill ``topic`` with ``case``'s records and drain it with the size probe alone."""
    from kafka_rescalable.config.options import parse_options
    from kafka_rescalable.driver.record_sizes import SizeProbe
    from kafka_rescalable.state import TopicPartition

    records = case.records // 10 if quick else case.records
    text = case.quick_cap if quick else case.cap
    sizes = _produce(bootstrap, topic, case, records)
    options = parse_options(
        {"kafka.bootstrap.servers": bootstrap, "subscribe": topic, "maxbytespertrigger": text},
        "stream",
    )
    assert options.max_bytes_per_trigger is not None
    parts = [TopicPartition(topic, p) for p in range(case.partitions)]
    ends = {tp: len(sizes[tp.partition]) for tp in parts}
    start = dict.fromkeys(parts, 0)
    probe = SizeProbe(options)
    seconds, largest = [], 0
    while start != ends:
        began = time.perf_counter()
        cap = probe.cap(start, ends, ends, None)
        seconds.append(time.perf_counter() - began)
        assert cap.ends is not None
        batch = sum(sum(sizes[tp.partition][start[tp] : cap.ends[tp]]) for tp in parts)
        floor = sum(sizes[tp.partition][start[tp]] for tp in parts if start[tp] < ends[tp])
        if batch > max(options.max_bytes_per_trigger, floor):  # the documented bound
            msg = f"a batch of {batch} bytes is over the cap and the first records ({floor})"
            raise AssertionError(msg)
        largest = max(largest, batch)
        start = dict(cap.ends)
    return ProbeResult(
        case,
        records,
        text,
        len(seconds),
        statistics.median(seconds),
        max(seconds),
        sum(map(sum, sizes)),
        probe.probed_bytes,
        largest,
        options.max_bytes_per_trigger,
    )


def _produce(bootstrap: str, topic: str, case: ProbeCase, records: int) -> list[list[int]]:
    """Write the backlog, round robin over partitions; the value sizes per partition."""
    from confluent_kafka import Producer

    create_topic(bootstrap, topic, case.partitions, config={"max.message.bytes": "2000000"})
    producer = Producer(
        {"bootstrap.servers": bootstrap, **PRODUCER_CONFIG, "message.max.bytes": 2_000_000}
    )
    rng = random.Random(46641)
    ratio = case.largest / case.smallest
    sizes: list[list[int]] = [[] for _ in range(case.partitions)]
    for index in range(records):
        size = int(case.smallest * ratio ** rng.random())
        partition = index % case.partitions
        produce_one(producer, topic, b"v" * size, partition)
        sizes[partition].append(size)
    if producer.flush(120):
        msg = f"records to {topic} were not delivered within 120 s"
        raise RuntimeError(msg)
    return sizes
