"""Offset lookups of many calls, spread over a few driver connections to the brokers.

A broker handles the requests of one connection one at a time, in order: the calls of one
lookup sent through one client each wait for the previous answer, though the broker has
request threads to spare. At 10,000 partitions (20 calls of 500, a steady producer on the
same broker, this 2-core machine) the end offsets took a median of 184 ms over one
connection, 134 ms over two and 121 ms over four, for the same 60 ms of the driver's CPU
(``benchmarks/RESULTS.md``, eighth session). A lookup of one call, every topic of fewer than
:data:`~kafka_rescalable.driver.offset_lookups.OFFSETS_PER_CALL` partitions, opens nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain
from typing import Any, Final

__all__ = ["OFFSET_CONNECTIONS", "SpreadCalls"]

OFFSET_CONNECTIONS: Final = 4
"""At most this many clients (so connections per broker) answer one lookup's calls."""


class SpreadCalls:
    """Extra driver clients and the threads that wait on them, opened at the first need.

    The caller's own client takes one share of the calls on the caller's thread, so a lookup
    of ``n`` calls uses ``min(n, connections) - 1`` extra clients. confluent-kafka releases the
    interpreter while a call waits for the broker, so the threads wait side by side.

    Parameters
    ----------
    open_client
        Opens one more client with the driver's settings (a consumer that never subscribes).
    connections
        The most clients one lookup uses, the caller's own included.
    """

    def __init__(
        self, open_client: Callable[[], Any], connections: int = OFFSET_CONNECTIONS
    ) -> None:
        self._open_client = open_client
        self._connections = max(1, connections)
        self._extra: list[Any] = []
        self._threads: ThreadPoolExecutor | None = None

    def offsets_for_times(
        self, client: Any, calls: Sequence[list[Any]], timeout: float
    ) -> list[Any]:
        """Ask every call's partitions; return the answers in the order of the calls.

        The order lets the caller key the answers by the very objects it asked for (see
        ``_offsets`` in :mod:`kafka_rescalable.driver.offset_lookups`). Each client's share is asked
        one call after the other. Every share is waited for before returning or raising, so
        no client is still in use when the caller retries with new clients after a failure;
        the first failure is raised.
        """
        width = min(len(calls), self._connections)
        if width <= 1:
            return list(chain.from_iterable(_ask(client, calls, timeout)))
        clients = [client, *self._clients(width - 1)]
        threads = self._pool()
        waiting: list[Future[list[list[Any]]]] = [
            threads.submit(_ask, extra, calls[share::width], timeout)
            for share, extra in enumerate(clients[1:], start=1)
        ]
        answers: list[list[Any]] = [[] for _ in calls]
        failure: BaseException | None = None
        try:
            answers[0::width] = _ask(client, calls[0::width], timeout)
        except BaseException as exc:  # noqa: BLE001 - raised once the other shares are done
            failure = exc
        for share, future in enumerate(waiting, start=1):
            try:
                answers[share::width] = future.result()
            except BaseException as exc:  # noqa: BLE001 - the first failure is raised
                failure = failure or exc
        if failure is not None:
            raise failure
        return list(chain.from_iterable(answers))

    def _clients(self, count: int) -> list[Any]:
        while len(self._extra) < count:
            self._extra.append(self._open_client())
        return self._extra[:count]

    def _pool(self) -> ThreadPoolExecutor:
        if self._threads is None:
            self._threads = ThreadPoolExecutor(
                max_workers=self._connections - 1, thread_name_prefix="kafka-offsets"
            )
        return self._threads

    def renew(self) -> None:
        """Close the extra clients; the next lookup opens new ones (after a broker change)."""
        extra, self._extra = self._extra, []
        for client in extra:
            client.close()

    def close(self) -> None:
        """Close the extra clients and stop the threads; calling it again does nothing."""
        self.renew()
        threads, self._threads = self._threads, None
        if threads is not None:
            threads.shutdown(wait=True)


def _ask(client: Any, calls: Sequence[list[Any]], timeout: float) -> list[list[Any]]:
    """Each call's answer, one call after the other on ``client``."""
    return [client.offsets_for_times(call, timeout=timeout) for call in calls]
