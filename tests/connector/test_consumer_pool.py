"""The executors' consumer pool, with fake consumers and a fake clock: no Kafka, no Spark."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import pytest

from kafka_rescalable.consumer_pool import MAX_POOLED_PARTITIONS, ConsumerPool


@dataclass(eq=False)
class FakeConsumer:
    """Records what the pool does to it."""

    config: dict
    closed: bool = False
    unassigned: int = 0
    busy: bool = False

    def unassign(self) -> None:
        """Count the assignment resets the pool makes on return."""
        assert not self.closed
        self.unassigned += 1

    def close(self) -> None:
        """Mark the consumer closed; closing twice would be a pool bug."""
        assert not self.closed
        self.closed = True


@dataclass
class FakeErrors:
    """What ``ClientErrors`` offers the pool: the last client error, if any."""

    last: object = None


@dataclass
class Opener:
    """Builds fake consumers and keeps them all."""

    made: list[FakeConsumer] = field(default_factory=list)

    def __call__(self, config):
        """Build a fake consumer for ``config``, with an empty error record."""
        consumer = FakeConsumer(dict(config))
        self.made.append(consumer)
        return consumer, FakeErrors()


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        """Return the time the test set."""
        return self.now


CONFIG = {"bootstrap.servers": "b:9092", "group.id": "g-executor"}


def make_pool(**kwargs):
    opener = Opener()
    clock = Clock()
    pool = ConsumerPool(opener, clock=clock, sweep_in_background=False, **kwargs)
    return pool, opener, clock


def test_a_returned_consumer_is_lent_again_to_the_next_task() -> None:
    pool, opener, _clock = make_pool()
    with pool.lend(CONFIG) as first:
        assert not first.reused
    with pool.lend(dict(CONFIG)) as second:
        assert second.reused
        assert second.consumer is first.consumer
    assert len(opener.made) == 1
    assert (pool.opened, pool.reused) == (1, 1)
    assert opener.made[0].unassigned == 2  # every return clears the assignment
    assert not opener.made[0].closed


def test_another_configuration_gets_its_own_consumer() -> None:
    pool, opener, _clock = make_pool()
    with pool.lend(CONFIG):
        pass
    with pool.lend({**CONFIG, "group.id": "other-query"}) as loan:
        assert not loan.reused
    assert len(opener.made) == 2
    assert pool.idle_count() == 2


def test_a_lent_consumer_is_never_lent_twice_at_once() -> None:
    pool, opener, _clock = make_pool()
    with pool.lend(CONFIG) as first, pool.lend(CONFIG) as second:
        assert first.consumer is not second.consumer
        assert pool.lent_count() == 2
    assert pool.lent_count() == 0
    assert pool.idle_count() == 2


def test_a_task_that_fails_closes_its_consumer_instead_of_returning_it() -> None:
    pool, opener, _clock = make_pool()
    with pytest.raises(RuntimeError), pool.lend(CONFIG):
        raise RuntimeError("read failed")
    assert opener.made[0].closed
    assert pool.idle_count() == 0
    with pool.lend(CONFIG) as loan:
        assert not loan.reused
        assert loan.consumer is opener.made[1]


def test_a_generator_closed_early_closes_its_consumer() -> None:
    pool, opener, _clock = make_pool()

    def task():
        with pool.lend(CONFIG):
            yield 1
            yield 2

    rows = task()
    next(rows)
    rows.close()
    assert opener.made[0].closed
    assert pool.idle_count() == 0


def test_a_consumer_whose_client_reported_an_error_is_closed() -> None:
    pool, opener, _clock = make_pool()
    with pool.lend(CONFIG) as loan:
        loan.errors.last = "broker transport failure"
    assert opener.made[0].closed
    assert pool.idle_count() == 0


def test_a_borrower_can_mark_its_consumer_failed() -> None:
    pool, opener, _clock = make_pool()
    with pool.lend(CONFIG) as loan:
        loan.failed = True
    assert opener.made[0].closed


def test_a_consumer_assigned_too_many_partitions_is_closed_not_kept() -> None:
    pool, opener, _clock = make_pool()
    with pool.lend(CONFIG) as loan:
        loan.partitions = MAX_POOLED_PARTITIONS + 1
    assert opener.made[0].closed
    assert pool.idle_count() == 0
    with pool.lend(CONFIG) as loan:
        loan.partitions = MAX_POOLED_PARTITIONS
    with pool.lend(CONFIG) as again:
        assert again.reused
        assert again.partitions == 0  # the count is the new borrower's, not the last one's
    assert not opener.made[1].closed
    assert len(opener.made) == 2


def test_a_consumer_that_cannot_unassign_is_closed() -> None:
    pool, opener, _clock = make_pool()

    def refuse() -> None:
        raise RuntimeError("handle destroyed")

    with pool.lend(CONFIG) as loan:
        loan.consumer.unassign = refuse
    assert opener.made[0].closed
    assert pool.idle_count() == 0


def test_idle_consumers_are_closed_after_their_timeout() -> None:
    pool, opener, clock = make_pool()
    with pool.lend(CONFIG, idle_timeout_s=60):
        pass
    clock.now += 59
    assert pool.sweep() == 0
    with pool.lend(CONFIG, idle_timeout_s=60) as loan:
        assert loan.reused  # 59 s idle: still kept; the loan restarts its idle time
    clock.now += 60
    assert pool.sweep() == 1
    assert opener.made[0].closed
    with pool.lend(CONFIG) as loan:
        assert not loan.reused


def test_lending_sweeps_expired_consumers_of_other_configurations() -> None:
    pool, opener, clock = make_pool()
    with pool.lend({**CONFIG, "group.id": "finished-query"}, idle_timeout_s=10):
        pass
    clock.now += 11
    with pool.lend(CONFIG):
        pass
    assert opener.made[0].closed
    assert pool.idle_count() == 1


def test_the_longest_idle_go_first_beyond_the_cap() -> None:
    pool, opener, clock = make_pool(max_idle=2)
    for query in range(3):
        with pool.lend({**CONFIG, "group.id": f"q{query}"}):
            pass
        clock.now += 1
    assert [c.closed for c in opener.made] == [True, False, False]
    assert pool.idle_count() == 2


def test_closing_the_pool_closes_idle_consumers_and_later_returns() -> None:
    pool, opener, _clock = make_pool()
    with pool.lend(CONFIG):
        pass
    with pool.lend({**CONFIG, "group.id": "other"}):
        pool.close()  # the worker exits while a task still holds a consumer
        assert opener.made[0].closed
        assert not opener.made[1].closed
    assert opener.made[1].closed
    assert pool.idle_count() == 0


def test_background_sweeper_closes_expired_consumers() -> None:
    opener = Opener()
    pool = ConsumerPool(opener)
    with pool.lend(CONFIG, idle_timeout_s=0.01):
        pass
    sweeper = pool._sweeper
    assert sweeper is not None
    sweeper.join(timeout=30)
    assert opener.made[0].closed
    assert pool.idle_count() == 0


def test_threads_never_share_a_consumer() -> None:
    pool, opener, _clock = make_pool()
    errors: list[str] = []
    barrier = threading.Barrier(8)

    def task() -> None:
        barrier.wait()
        for _ in range(200):
            with pool.lend(CONFIG) as loan:
                consumer = loan.consumer
                if consumer.busy or consumer.closed:
                    errors.append("lent while busy or closed")
                consumer.busy = True
                time.sleep(0.0001)  # let other threads run while this one holds it
                consumer.busy = False

    threads = [threading.Thread(target=task) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert pool.lent_count() == 0
    assert len(opener.made) <= 8  # never more consumers than tasks at once
    assert pool.opened + pool.reused == 8 * 200
