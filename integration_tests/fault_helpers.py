"""Helpers shared by the fault tests and the soak run: a producer that never loses a record.

Proving "every record exactly once" needs the exact set of records Kafka acknowledged. The
producer here is idempotent with ``acks=all`` and retries for minutes, so a broker killed
under it delays records but never drops or doubles them; a record it still could not deliver
fails the run instead of silently weakening the check.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable

from integration_tests.kafka_helpers import BackgroundProducer

__all__ = ["SafeProducer", "exactly_once_report"]


class SafeProducer(BackgroundProducer):
    """Produces to every partition from a thread: ``acks=all``, idempotent, no give-up.

    ``positions`` are the acknowledged ``(partition, offset)`` pairs. A record whose delivery
    failed would make "every record once" unprovable, so a failure fails the test (``stop``
    raises it).
    """

    def __init__(
        self, bootstrap: str, topic: str, partitions: int, per_second: int = 400
    ) -> None:
        super().__init__(
            bootstrap,
            topic,
            partitions,
            batch=max(1, per_second // 20),
            interval_s=0.05,
            max_records=sys.maxsize,
            config={
                "acks": "all",
                "enable.idempotence": True,
                "delivery.timeout.ms": 300_000,
                "log_level": 3,
            },
            flush_timeout_s=120,
        )


def exactly_once_report(
    produced: Iterable[tuple[int, int]], written: Iterable[tuple[int, int]]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Return the records never written and those written more than once, both sorted."""
    counts = Counter(written)
    twice = sorted(position for position, n in counts.items() if n > 1)
    missing = sorted(set(produced) - counts.keys())
    return missing, twice
