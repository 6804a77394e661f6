"""Helpers shared by the fault tests and the soak run: a producer that never loses a record.

Proving "every record exactly once" needs the exact set of records Kafka acknowledged. The
producer here is idempotent with ``acks=all`` and retries for minutes, so a broker killed
under it delays records but never drops or doubles them; a record it still could not deliver
fails the run instead of silently weakening the check.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable

from confluent_kafka import KafkaError, Message, Producer

__all__ = ["SafeProducer", "exactly_once_report"]


class SafeProducer:
    """Produces to every partition from a thread: ``acks=all``, idempotent, no give-up.

    ``positions`` are the acknowledged ``(partition, offset)`` pairs. A record whose delivery
    failed would make "every record once" unprovable, so a failure fails the test.
    """

    def __init__(
        self, bootstrap: str, topic: str, partitions: int, per_second: int = 400
    ) -> None:
        self._producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "delivery.timeout.ms": 300_000,
                "log_level": 3,
            }
        )
        self._topic = topic
        self._partitions = partitions
        self._interval_s = 0.05
        self._per_tick = max(1, per_second // 20)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._positions: list[tuple[int, int]] = []
        self._errors: list[KafkaError] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> SafeProducer:
        """Start producing in the background for the length of the block."""
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop producing even when the block failed, so no thread outlives its run."""
        self.stop()

    def _delivered(self, error: KafkaError | None, message: Message) -> None:
        with self._lock:
            if error is not None:
                self._errors.append(error)
            else:
                self._positions.append((message.partition(), message.offset()))

    def _run(self) -> None:
        sent = 0
        while not self._stop.is_set():
            for _ in range(self._per_tick):
                self._producer.produce(
                    self._topic,
                    value=b"r-%d" % sent,
                    partition=sent % self._partitions,
                    on_delivery=self._delivered,
                )
                sent += 1
            self._producer.poll(0)
            self._stop.wait(self._interval_s)
        self._producer.flush(120)

    def count(self) -> int:
        """How many records were acknowledged so far."""
        with self._lock:
            return len(self._positions)

    def stop(self) -> list[tuple[int, int]]:
        """Stop producing, wait for every acknowledgement, and return the positions."""
        self._stop.set()
        self._thread.join(150)
        if self._errors:
            msg = f"the producer could not deliver {len(self._errors)} records: {self._errors[:3]}"
            raise RuntimeError(msg)
        with self._lock:
            return sorted(self._positions)


def exactly_once_report(
    produced: Iterable[tuple[int, int]], written: Iterable[tuple[int, int]]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Return the records never written and those written more than once, both sorted."""
    counts = Counter(written)
    twice = sorted(position for position, n in counts.items() if n > 1)
    missing = sorted(set(produced) - counts.keys())
    return missing, twice
