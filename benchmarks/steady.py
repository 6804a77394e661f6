"""A producer process writing a steady rate of 100-byte records round-robin to 8 partitions.

The latency, sustained-rate and memory benchmarks all feed their running queries from it, so
they load the broker and the machine the same way. Each record's CreateTime is its send time.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["PARTITIONS", "PRODUCER_CONFIG", "VALUE_BYTES", "SteadyProducer"]

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
    """A producer process writing ``rate`` records a second, paced every few milliseconds."""

    def __init__(self, bootstrap: str, topic: str, rate: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._sent = context.Value("q", 0)
        self._process = context.Process(
            target=_produce_steadily,
            args=(bootstrap, topic, rate, self._stop, self._sent),
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


def _produce_steadily(bootstrap: str, topic: str, rate: int, stop: Any, sent: Any) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_CONFIG})
    value = b"x" * VALUE_BYTES
    count = 0
    started = time.monotonic()
    while not stop.is_set():
        due = int((time.monotonic() - started) * rate)
        while count < due:
            try:
                # No explicit timestamp: librdkafka stamps CreateTime when produce() is called.
                producer.produce(topic, value, partition=count % PARTITIONS)
            except BufferError:
                producer.poll(0.01)
                continue
            count += 1
        sent.value = count
        producer.poll(0)
        time.sleep(0.002)
    producer.flush(30)
