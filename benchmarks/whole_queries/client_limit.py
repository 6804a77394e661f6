"""The raw client limit: confluent-kafka ``consume()`` batches in one process per core, no Spark.

This is the reference, not the product: each process assigns its share of the topic, calls
``consume()`` in a loop and only counts what it gets. Nothing a Python reader built on this
client does can beat it, since every such reader pays for the same ``consume()`` calls.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Mapping, Sequence

from benchmarks.data import end_offsets
from benchmarks.workloads import Workload

__all__ = ["client_limit", "shares"]

Share = tuple[tuple[int, int, int], ...]
"""``(partition, start, until)`` ranges one process reads."""


def shares(ends: Mapping[int, int], processes: int) -> list[Share]:
    """Split the partitions over ``processes``, cutting ranges when partitions are too few.

    With at least as many partitions as processes, partitions are dealt round-robin. With
    fewer, each partition's range is cut into ``processes // partitions`` contiguous pieces
    (as Spark's ``minPartitions`` would), the longer pieces first.
    """
    partitions = sorted(ends)
    if len(partitions) >= processes:
        return [tuple((p, 0, ends[p]) for p in partitions[k::processes]) for k in range(processes)]
    pieces_each = processes // len(partitions)
    result: list[Share] = []
    for p in partitions:
        base, longer = divmod(ends[p], pieces_each)
        cursor = 0
        for piece in range(pieces_each):
            size = base + (1 if piece < longer else 0)
            result.append(((p, cursor, cursor + size),))
            cursor += size
    return result


def client_limit(
    bootstrap: str,
    topic: str,
    workload: Workload,
    consumer_config: Mapping[str, object],
    batch_size: int,
    processes: int = 2,
) -> tuple[int, float]:
    """Read all of ``topic`` as fast as the client allows; return ``(records, seconds)``.

    The clock starts once every process has imported the client (so interpreter start-up is
    not counted) and stops when the last process has its share; consumer creation and the
    first fetch are inside the measurement, as they are for a Spark task.
    """
    ends = end_offsets(bootstrap, topic, workload.partitions)
    plan = shares(ends, processes)
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(len(plan) + 1)
    results = context.Queue()
    workers = [
        context.Process(
            target=_consume_share,
            args=(results, bootstrap, topic, share, dict(consumer_config), batch_size, ready),
        )
        for share in plan
    ]
    for worker in workers:
        worker.start()
    try:
        ready.wait(timeout=120)
        started = time.perf_counter()
        outcomes = [results.get(timeout=1800) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout=30)
    failed = [text for text in outcomes if isinstance(text, str)]
    if failed:
        raise RuntimeError(f"a client-limit process failed: {failed[0]}")
    results_ok = [outcome for outcome in outcomes if not isinstance(outcome, str)]
    finished = max(done for _, done in results_ok)
    records = sum(count for count, _ in results_ok)
    return records, finished - started


def _consume_share(results: object, *share_args: object) -> None:
    """Count a share (:func:`_count_share`'s arguments); put the count and the end on ``results``.

    The end is ``perf_counter()`` when the share is read: CLOCK_MONOTONIC on Linux, one clock
    for all processes. A failure goes to ``results`` as text, for the parent to raise.
    """
    try:
        results.put(_count_share(*share_args))  # type: ignore[arg-type, attr-defined]
    except BaseException as error:  # reported to the parent, which raises it
        results.put(f"{type(error).__name__}: {error}")  # type: ignore[attr-defined]
        raise


def _count_share(
    bootstrap: str,
    topic: str,
    share: Sequence[tuple[int, int, int]],
    config: Mapping[str, object],
    batch_size: int,
    ready: object,
) -> tuple[int, float]:
    from confluent_kafka import Consumer, TopicPartition

    wanted = sum(until - start for _, start, until in share)
    ready.wait()  # type: ignore[attr-defined]
    consumer = Consumer(
        {
            **config,
            "bootstrap.servers": bootstrap,
            "group.id": "benchmark-client-limit",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, start) for p, start, _ in share])
        count = 0
        # The topic holds nothing past the ranges' ends except the next share's records, so
        # counting is enough: at most one batch past the end is read and not counted.
        while count < wanted:
            count += len(consumer.consume(batch_size, timeout=1.0))
        return min(count, wanted), time.perf_counter()
    finally:
        consumer.close()
