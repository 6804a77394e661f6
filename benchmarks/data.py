"""Create topics and fill them fast: several producer processes, large batches, no compression.

Values are uncompressed so that every contender reads the same bytes without a decompression
step that would measure the codec rather than the reader.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterable, Mapping

from benchmarks.workloads import USERS, Workload

__all__ = [
    "PRODUCER_CONFIG",
    "create_topic",
    "delete_topics",
    "end_offsets",
    "fill_partitions",
    "produce",
    "produce_one",
]

PRODUCER_CONFIG: Mapping[str, object] = {
    "linger.ms": 50,
    "batch.size": 1_000_000,
    "batch.num.messages": 100_000,
    "queue.buffering.max.messages": 2_000_000,
    "queue.buffering.max.kbytes": 1_048_576,
    "compression.type": "none",
    "acks": 1,
    "delivery.report.only.error": True,
}


def create_topic(
    bootstrap: str,
    topic: str,
    partitions: int,
    timeout_s: float = 120.0,
    config: Mapping[str, str] | None = None,
) -> None:
    """Create ``topic`` (with topic ``config``) and wait until every partition has a leader."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = NewTopic(
        topic, num_partitions=partitions, replication_factor=1, config=dict(config or {})
    )
    futures = admin.create_topics(
        [new],
        operation_timeout=timeout_s,
    )
    futures[topic].result(timeout=timeout_s)
    deadline = time.monotonic() + timeout_s
    while True:
        metadata = admin.list_topics(topic=topic, timeout=timeout_s).topics.get(topic)
        if (
            metadata is not None
            and metadata.error is None
            and len(metadata.partitions) == partitions
            and all(p.leader >= 0 for p in metadata.partitions.values())
        ):
            return
        if time.monotonic() > deadline:
            msg = f"topic {topic} has no leader for all {partitions} partitions after {timeout_s} s"
            raise TimeoutError(msg)
        time.sleep(0.2)


def delete_topics(bootstrap: str, topics: Iterable[str], timeout_s: float = 120.0) -> None:
    """Delete ``topics`` and wait until the broker has.

    A benchmark's next topics then have the broker (and its memory, where the data is in
    memory) to themselves.
    """
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.delete_topics(list(topics), operation_timeout=timeout_s).values():
        future.result(timeout=timeout_s)


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    """Return the high watermark of every partition of ``topic``."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)}
    futures = admin.list_offsets(request, request_timeout=60)
    return {tp.partition: future.result().offset for tp, future in futures.items()}


def produce(bootstrap: str, topic: str, workload: Workload, processes: int = 2) -> float:
    """Fill ``topic`` (already created) with ``workload``'s records; return the seconds taken.

    Process ``k`` of ``processes`` writes records ``k, k + processes, ...``; record ``i`` goes
    to partition ``i % partitions``. Fails unless the topic then holds exactly the records.
    """
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        errors = pool.starmap(
            _produce_share,
            [(bootstrap, topic, workload, k, processes) for k in range(processes)],
        )
    elapsed = time.perf_counter() - started
    if any(errors):
        msg = f"producing {topic} failed: {sum(errors)} delivery errors"
        raise RuntimeError(msg)
    held = sum(end_offsets(bootstrap, topic, workload.partitions).values())
    if held != workload.records:
        msg = f"{topic} holds {held} records after producing {workload.records}"
        raise RuntimeError(msg)
    return elapsed


def fill_partitions(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    """Write ``per_partition`` small records to every partition (planning topics)."""
    from confluent_kafka import Producer

    # log_level 3: the producer may see a new partition before its leader and says so, per
    # partition, at warning level; that is harmless and would flood the output.
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_CONFIG, "log_level": 3})
    for partition in range(partitions):
        for index in range(per_partition):
            produce_one(producer, topic, b"%d" % index, partition)
    remaining = producer.flush(60)
    if remaining:
        msg = f"{remaining} records to {topic} were not delivered within 60 s"
        raise RuntimeError(msg)


def _produce_share(bootstrap: str, topic: str, workload: Workload, share: int, shares: int) -> int:
    """One producer process; returns its delivery error count."""
    from confluent_kafka import Producer

    failures = []

    def on_error(error: object, _message: object) -> None:
        if error is not None:
            failures.append(error)

    config = {"bootstrap.servers": bootstrap, **PRODUCER_CONFIG, "on_delivery": on_error}
    producer = Producer(config)
    size = workload.value_bytes
    partitions = workload.partitions
    # json_value inlined, with the padding precomputed per head length: this loop runs
    # millions of times and the function call alone would slow producing by a third.
    pads = [b"x" * max(0, size - length - 2) + b'"}' for length in range(size + 1)]
    template = b'{"id":%d,"user":"u%03d","amount":%d.%d,"pad":"'
    for index in range(share, workload.records, shares):
        head = template % (index, index % USERS, index % 1000 // 10, index % 10)
        value = head + pads[min(len(head), size)]
        produce_one(producer, topic, value, index % partitions)
    producer.flush(120)
    return len(failures) + len(producer)


def produce_one(producer: object, topic: str, value: bytes, partition: int) -> None:
    """Queue one record, serving delivery reports while the producer's queue is full."""
    while True:
        try:
            producer.produce(topic, value, partition=partition)  # type: ignore[attr-defined]
            return
        except BufferError:
            producer.poll(0.05)  # type: ignore[attr-defined]
