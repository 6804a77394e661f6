"""A steady producer, the steady query every running-query benchmark starts, and its watch.

:class:`SteadyProducer` is a process writing a steady rate of 100-byte records round-robin to
a topic's 8 partitions (or to the partitions it is given); the latency, sustained-rate, memory
and many-partition benchmarks all feed their running queries from it, so they load the broker
and the machine the same way. Each record's CreateTime is its send time.

:func:`steady_query` starts the query they all measure: ``readStream`` from a source with
``trigger(processingTime="0 seconds")`` into ``foreachBatch``, which collects the batch's
``timestamp`` column as Arrow (``unix_millis``, so that every benchmark pays the same
collection) and hands it to the benchmark; on leaving, it stops the query between batches.
:func:`watch` waits while the query runs, failing as soon as it has failed.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "PARTITIONS",
    "PRODUCER_CONFIG",
    "VALUE_BYTES",
    "BatchLatencies",
    "BatchStamps",
    "SteadyProducer",
    "steady_query",
    "watch",
]

PARTITIONS = 8
VALUE_BYTES = 100
PRODUCER_CONFIG: Mapping[str, object] = {
    "linger.ms": 5,
    "acks": 1,
    "compression.type": "none",
    "queue.buffering.max.messages": 1_000_000,
}
"""A producer that adds little latency of its own: 5 ms of batching at most."""


class SteadyProducer:
    """A producer process writing ``rate`` records a second, paced every few milliseconds.

    ``target`` is a topic, written round-robin over its first :data:`PARTITIONS` partitions,
    or the ``(topic, partition)`` pairs to write round-robin.
    """

    def __init__(self, bootstrap: str, target: str | Sequence[tuple[str, int]], rate: int) -> None:
        if isinstance(target, str):
            target = [(target, partition) for partition in range(PARTITIONS)]
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._sent = context.Value("q", 0)
        self._process = context.Process(
            target=_produce_steadily,
            args=(bootstrap, list(target), rate, self._stop, self._sent),
            daemon=True,
        )
        self._started = 0.0

    def __enter__(self) -> SteadyProducer:
        """Start the producer process; it paces itself from this moment."""
        self._process.start()
        self._started = time.monotonic()
        return self

    def __exit__(self, *_exc: object) -> None:
        """Stop producing and flush what is queued; kill the process if it hangs."""
        self._stop.set()
        self._process.join(30)
        if self._process.is_alive():
            self._process.kill()

    def achieved_rate(self) -> float:
        """Return the records sent per second since the start."""
        return self._sent.value / max(1e-9, time.monotonic() - self._started)


def _produce_steadily(
    bootstrap: str, partitions: Sequence[tuple[str, int]], rate: int, stop: Any, sent: Any
) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_CONFIG})
    value = b"x" * VALUE_BYTES
    count = 0
    started = time.monotonic()
    while not stop.is_set():
        due = int((time.monotonic() - started) * rate)
        while count < due:
            topic, partition = partitions[count % len(partitions)]
            try:
                # No explicit timestamp: librdkafka stamps CreateTime when produce() is called.
                producer.produce(topic, value, partition=partition)
            except BufferError:
                producer.poll(0.01)
                continue
            count += 1
        sent.value = count
        producer.poll(0)
        time.sleep(0.002)
    producer.flush(30)


BatchStamps = Callable[[Any, int, float], None]
"""What a steady query's sink calls per batch: the batch's record timestamps in epoch
milliseconds (a ``pyarrow.Int64Array``), the batch id, and ``time.time()`` just after they
were collected."""


class BatchLatencies:
    """A :data:`BatchStamps` that keeps, per batch, when it was collected and each row's latency.

    A row's latency is the collection time minus its record's CreateTime, in milliseconds;
    the latency and many-partition benchmarks then keep the batches of their window.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._batches: list[tuple[float, Any]] = []

    def __call__(self, stamps: Any, _batch_id: int, now: float) -> None:
        """Keep the batch's latencies (called from the query's ``foreachBatch`` thread)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        latencies = pc.subtract(pa.scalar(int(now * 1000), pa.int64()), stamps)
        with self._lock:
            self._batches.append((now, latencies))

    def batches(self) -> list[tuple[float, Any]]:
        """Every batch so far: ``(collected at, Int64Array of latencies in ms)``."""
        with self._lock:
            return list(self._batches)


_DRAIN_S = 30.0
"""How long to wait for the batch in flight to end before stopping a query anyway."""


@contextlib.contextmanager
def steady_query(
    spark: Any,
    source: str,
    options: Mapping[str, str],
    on_batch: BatchStamps,
    checkpoint: Path | None = None,
) -> Iterator[Any]:
    """Run ``source`` with ``options`` as a ``processingTime=0`` query into ``foreachBatch``.

    The sink collects each batch's ``timestamp`` column as Arrow and calls ``on_batch``; the
    ``StreamingQuery`` is yielded. ``checkpoint`` defaults to a temporary directory. On
    leaving, later batches are skipped and the query is stopped once one has been, so that
    it stops between batches: stopping a query inside a ``foreachBatch`` that runs a Spark job
    makes Spark match the long Py4J error text with a regex that can overflow the stack,
    which prints a thousand lines (harmless, but it buries the output).
    """
    import pyarrow as pa
    from pyspark.sql import functions as F

    draining = threading.Event()
    skipped = threading.Event()

    def sink(frame: Any, batch_id: int) -> None:
        if draining.is_set():
            skipped.set()
            return
        stamps = frame.select(F.unix_millis("timestamp").alias("t")).toArrow().column("t")
        now = time.time()
        stamps = stamps.combine_chunks() if stamps.num_chunks else pa.array([], pa.int64())
        on_batch(stamps, batch_id, now)

    with contextlib.ExitStack() as stack:
        if checkpoint is None:
            checkpoint = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="steady-")))
        handle = (
            spark.readStream.format(source)
            .options(**options)
            .load()
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(checkpoint))
            .trigger(processingTime="0 seconds")
            .start()
        )
        try:
            yield handle
        finally:
            draining.set()
            deadline = time.monotonic() + _DRAIN_S
            while handle.isActive and not skipped.wait(0.5) and time.monotonic() < deadline:
                pass
            handle.stop()


def watch(
    query: Any,
    seconds: float,
    label: str,
    every_s: float = 0.5,
    tick: Callable[[float], None] | None = None,
    until: Callable[[], bool] | None = None,
) -> None:
    """Let ``query`` run for ``seconds`` (or until ``until()``); fail as soon as it fails.

    Every ``every_s`` seconds ``tick`` gets the seconds since the call (its own time comes
    out of the wait that follows it). ``label`` names the query in the error.
    """
    started = time.monotonic()
    while (elapsed := time.monotonic() - started) < seconds and not (until and until()):
        if query.exception() is not None:
            msg = f"{label} failed: {query.exception()}"
            raise RuntimeError(msg)
        if not query.isActive:
            msg = f"{label} stopped on its own"
            raise RuntimeError(msg)
        if tick is not None:
            tick(elapsed)
        time.sleep(max(0.0, every_s - (time.monotonic() - started - elapsed)))
