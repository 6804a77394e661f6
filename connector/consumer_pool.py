"""The executors' consumers, kept per Python worker process and lent to one task at a time.

Building a librdkafka consumer is cheap; what costs is what it does before its first record:
connecting to the bootstrap server, asking for API versions and metadata, connecting to each
partition's leader and opening a fetch session. A consumer per task pays that on every task
of every micro-batch. Spark reuses its Python worker processes across tasks (the default
``spark.python.worker.reuse``), so a consumer kept in the worker pays it once per worker.

The pool is the one owner of those consumers (a consumer lives in exactly one of: lent to a
task, idle here, closed):

- keyed by the consumer's whole configuration, so a task only gets a consumer built with its
  own settings (the group id, which names one query, is part of it);
- lent to one task at a time; a task that asks while every consumer of its key is lent gets a
  new one;
- returned at the task's end, with its assignment cleared; the next task assigns partitions
  with explicit offsets, so where the last task left a consumer cannot matter;
- closed, never returned, when the task failed while holding it or the client reported an
  error meanwhile, or when the task assigned it more than :data:`MAX_POOLED_PARTITIONS`
  partitions (see there why); closed after ``idle_timeout_s`` without a task, when more than
  ``max_idle`` wait, and at the worker's exit;
- forgotten, not closed, in a child process after ``fork()``: librdkafka clients do not
  survive a fork, and the parent still owns them.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from kafka_rescalable._logging import logger

__all__ = ["IDLE_TIMEOUT_S", "MAX_IDLE", "MAX_POOLED_PARTITIONS", "ConsumerPool", "Loan"]

IDLE_TIMEOUT_S: Final = 60.0
"""Seconds a consumer may wait unused before it is closed."""

MAX_IDLE: Final = 32
"""Idle consumers one worker keeps at most (over all keys); the longest idle go first."""

MAX_POOLED_PARTITIONS: Final = 500
"""A consumer whose task assigned more partitions than this is closed, not kept.

A librdkafka consumer reused for a task of many partitions burns CPU in its own threads just
after the task: over a 10,000-partition topic, 30-330 ms in the half second after each task of
1,000 partitions, where a new consumer (opened, read, closed in under 10 ms) burned nothing
after, and read its task in about the same time (0.2-0.3 s). Over a 2,500-partition topic,
tasks of all 2,500 cost 20-70 ms each. In a running stream over 10,000 partitions each Python
worker ran several such tasks per batch, and the last ones' CPU landed on the driver's planning
of the next batch (``benchmarks/RESULTS.md``, tenth and eleventh sessions). Tasks of 100
partitions showed no such cost, even over 10,000; there a reused consumer skips connecting
and its first metadata request. The cost grows with the topic's partitions as well, which the
executor does not know: tasks of all 1,000 partitions of a 1,000-partition topic cost nothing
reused, and pay about 0.2 s more each for their new consumer.
"""

Opener = Callable[[Mapping[str, Any]], tuple[Any, Any]]
"""Builds a consumer for a configuration; returns it with its error record (``error_cb``)."""

_Key = tuple[tuple[str, str], ...]


@dataclass(eq=False)
class Loan:
    """A consumer lent to one task, with the record of its client errors.

    ``reused`` tells whether an earlier task used this consumer before; ``failed`` may be set
    by the borrower to have the consumer closed instead of returned.
    """

    consumer: Any
    errors: Any
    reused: bool
    failed: bool = False
    partitions: int = 0
    """How many partitions the borrower assigned (it sets it): too many and it is closed."""
    _key: _Key = field(default=(), repr=False)
    _idle_timeout_s: float = field(default=IDLE_TIMEOUT_S, repr=False)


@dataclass(eq=False)
class _Idle:
    loan: Loan
    since: float


class ConsumerPool:
    """Consumers of one process, lent to one task at a time; see the module's doc.

    Parameters
    ----------
    opener
        Builds a consumer for a configuration (``kafka_rescalable.kafka_clients`` passes its own).
    clock
        Monotonic seconds; tests pass a fake one.
    max_idle
        Idle consumers kept at most.
    sweep_in_background
        Close idle consumers from a daemon thread while no task runs; without it they are
        closed when the pool is next used (or at exit).
    """

    def __init__(
        self,
        opener: Opener,
        clock: Callable[[], float] = time.monotonic,
        max_idle: int = MAX_IDLE,
        sweep_in_background: bool = True,
    ) -> None:
        self._opener = opener
        self._clock = clock
        self._max_idle = max_idle
        self._background = sweep_in_background
        self._lock = threading.Lock()
        self._idle: dict[_Key, list[_Idle]] = {}
        self._lent = 0
        self._closed = False
        self._sweeper: threading.Thread | None = None
        self._wake = threading.Event()
        self._pid = os.getpid()
        self.opened = 0
        """Consumers built so far."""
        self.reused = 0
        """Loans served by a consumer an earlier task used."""

    @contextmanager
    def lend(
        self, config: Mapping[str, Any], idle_timeout_s: float = IDLE_TIMEOUT_S
    ) -> Iterator[Loan]:
        """Lend a consumer built with ``config`` for the ``with`` block.

        It goes back to the pool when the block ends normally and ``failed`` was not set;
        otherwise (an exception, including a generator closed early) it is closed.
        """
        loan = self._take(config, idle_timeout_s)
        try:
            yield loan
        except BaseException:
            loan.failed = True
            raise
        finally:
            self._give_back(loan)

    def sweep(self) -> int:
        """Close consumers idle longer than their timeout; return how many were closed."""
        now = self._clock()
        expired = []
        with self._lock:
            for key, waiting in list(self._idle.items()):
                keep = [w for w in waiting if now - w.since < w.loan._idle_timeout_s]
                expired += [w.loan for w in waiting if now - w.since >= w.loan._idle_timeout_s]
                if keep:
                    self._idle[key] = keep
                else:
                    del self._idle[key]
        for loan in expired:
            _close(loan, "idle")
        return len(expired)

    def close(self) -> None:
        """Close every idle consumer; consumers lent now are closed when they come back."""
        with self._lock:
            self._closed = True
            waiting = [w.loan for entries in self._idle.values() for w in entries]
            self._idle.clear()
        self._wake.set()
        for loan in waiting:
            _close(loan, "pool closed")

    def idle_count(self) -> int:
        """Return how many consumers wait in the pool."""
        with self._lock:
            return sum(len(entries) for entries in self._idle.values())

    def lent_count(self) -> int:
        """Return how many consumers are lent out now."""
        with self._lock:
            return self._lent

    def _take(self, config: Mapping[str, Any], idle_timeout_s: float) -> Loan:
        self._forget_after_fork()
        self.sweep()
        key = _key_of(config)
        with self._lock:
            waiting = self._idle.get(key)
            if waiting:
                # The most recently returned: its connections are the least likely to be stale.
                loan = waiting.pop().loan
                if not waiting:
                    del self._idle[key]
                self._lent += 1
                self.reused += 1
                loan.reused = True
                loan.failed = False
                loan.partitions = 0
                loan._idle_timeout_s = idle_timeout_s
                return loan
            self._lent += 1
        try:
            consumer, errors = self._opener(config)
        except BaseException:
            with self._lock:
                self._lent -= 1
            raise
        with self._lock:
            self.opened += 1
        return Loan(consumer, errors, False, _key=key, _idle_timeout_s=idle_timeout_s)

    def _give_back(self, loan: Loan) -> None:
        with self._lock:
            self._lent -= 1
        reason = _unfit(loan)
        if reason is None:
            try:
                loan.consumer.unassign()
            except Exception as exc:  # a consumer that cannot even unassign is broken
                reason = f"unassign failed: {exc}"
        if reason is not None:
            _close(loan, reason)
            return
        surplus = []
        with self._lock:
            if self._closed or os.getpid() != self._pid:
                surplus.append(loan)
            else:
                self._idle.setdefault(loan._key, []).append(_Idle(loan, self._clock()))
                surplus = self._over_capacity()
        for extra in surplus:
            _close(extra, "pool full" if extra is not loan else "pool closed")
        if self._background:
            self._start_sweeper()

    def _over_capacity(self) -> list[Loan]:
        """Remove and return the longest-idle consumers beyond ``max_idle`` (lock held)."""
        everything = sorted(
            (w for entries in self._idle.values() for w in entries), key=lambda w: w.since
        )
        extra = everything[: max(0, len(everything) - self._max_idle)]
        for waiting in extra:
            entries = self._idle[waiting.loan._key]
            entries.remove(waiting)
            if not entries:
                del self._idle[waiting.loan._key]
        return [w.loan for w in extra]

    def _start_sweeper(self) -> None:
        with self._lock:
            if self._sweeper is not None and self._sweeper.is_alive():
                return
            self._sweeper = threading.Thread(
                target=self._sweep_while_idle, name="kafka-rescalable-pool-sweeper", daemon=True
            )
            self._sweeper.start()

    def _sweep_while_idle(self) -> None:
        """Close idle consumers as they expire; stop once none is left."""
        while True:
            with self._lock:
                if self._closed or not self._idle:
                    return
                waits = [w.since + w.loan._idle_timeout_s for e in self._idle.values() for w in e]
            self._wake.wait(max(0.05, min(waits) - self._clock()))
            self.sweep()

    def _forget_after_fork(self) -> None:
        if os.getpid() == self._pid:
            return
        with self._lock:
            self._idle.clear()
            self._lent = 0
            self._sweeper = None
            self._pid = os.getpid()


def _key_of(config: Mapping[str, Any]) -> _Key:
    return tuple(sorted((str(name), repr(value)) for name, value in config.items()))


def _unfit(loan: Loan) -> str | None:
    """Why a returned consumer must not be lent again, or ``None``."""
    if loan.failed:
        return "the task failed"
    if loan.partitions > MAX_POOLED_PARTITIONS:
        return f"assigned {loan.partitions} partitions, more than {MAX_POOLED_PARTITIONS}"
    errors = loan.errors
    if getattr(errors, "last", None) is not None:
        return f"client error: {errors.last}"
    return None


def _close(loan: Loan, reason: str) -> None:
    logger.debug("closing a pooled consumer (%s)", reason)
    try:
        loan.consumer.close()
    except Exception as exc:  # closing is best effort: the consumer is dropped either way
        logger.debug("closing a pooled consumer failed: %s", exc)


_process_pool: ConsumerPool | None = None
_process_pool_lock = threading.Lock()


def process_pool(opener: Opener) -> ConsumerPool:
    """Return this process's pool, created on first use and closed at the process's exit."""
    global _process_pool
    with _process_pool_lock:
        if _process_pool is None or _process_pool._pid != os.getpid():
            _process_pool = ConsumerPool(opener)
            atexit.register(_process_pool.close)
        return _process_pool
