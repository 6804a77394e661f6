"""``SpreadCalls``: the calls of one offset lookup shared among a few clients.

The clients are stand-ins that record what they were asked (a real broker answers the same
lookups in ``integration_tests/test_offset_lookup.py``, split into up to five calls).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kafka_rescalable.driver.offset_calls import SpreadCalls


class Client:
    """Answers each asked partition with itself; records the calls and the asking thread."""

    def __init__(self, name: str, fail_on: object = None) -> None:
        self.name = name
        self.calls: list[list[Any]] = []
        self.threads: set[str] = set()
        self.closed = False
        self.fail_on = fail_on

    def offsets_for_times(self, call: list[Any], timeout: float) -> list[Any]:
        """Answer as confluent-kafka's consumer: one entry per asked partition."""
        assert not self.closed, f"{self.name} used after close"
        self.calls.append(call)
        self.threads.add(threading.current_thread().name)
        if self.fail_on in call:
            raise RuntimeError(f"{self.name} failed on {self.fail_on}")
        return list(call)

    def close(self) -> None:
        """Refuse any later call."""
        self.closed = True


class Opener:
    """Opens numbered clients, the first ``failing`` of them failing on a given partition."""

    def __init__(self, fail_on: object = None) -> None:
        self.opened: list[Client] = []
        self.fail_on = fail_on

    def __call__(self) -> Client:
        """Open the next client."""
        client = Client(f"extra-{len(self.opened)}", self.fail_on)
        self.opened.append(client)
        return client


def test_a_lookup_of_one_call_uses_the_callers_client_alone() -> None:
    opener = Opener()
    spread = SpreadCalls(opener)
    own = Client("own")
    assert spread.offsets_for_times(own, [[1, 2, 3]], timeout=1.0) == [1, 2, 3]
    assert opener.opened == []
    assert own.threads == {threading.current_thread().name}
    spread.close()


def test_many_calls_are_shared_among_the_connections_and_all_answered() -> None:
    opener = Opener()
    spread = SpreadCalls(opener, connections=3)
    own = Client("own")
    calls = [[n, n + 100] for n in range(7)]
    found = spread.offsets_for_times(own, calls, timeout=1.0)
    assert found == [p for call in calls for p in call]  # in the order of the calls
    assert len(opener.opened) == 2
    asked = [own.calls, *(c.calls for c in opener.opened)]
    assert sorted(len(share) for share in asked) == [2, 2, 3]  # calls 0,3,6 / 1,4 / 2,5
    assert sorted(call[0] for share in asked for call in share) == list(range(7))
    assert all(
        c.threads and threading.current_thread().name not in c.threads for c in opener.opened
    )
    spread.close()


def test_the_extra_clients_serve_every_lookup_until_renewed() -> None:
    opener = Opener()
    spread = SpreadCalls(opener, connections=2)
    own = Client("own")
    spread.offsets_for_times(own, [[1], [2]], timeout=1.0)
    spread.offsets_for_times(own, [[3], [4]], timeout=1.0)
    assert len(opener.opened) == 1
    spread.renew()
    assert opener.opened[0].closed
    spread.offsets_for_times(own, [[5], [6]], timeout=1.0)
    assert len(opener.opened) == 2 and not opener.opened[1].closed
    spread.close()
    assert opener.opened[1].closed
    spread.close()  # again: nothing happens


def test_a_failed_share_is_raised_once_every_share_is_done() -> None:
    opener = Opener(fail_on=2)
    spread = SpreadCalls(opener, connections=3)
    own = Client("own")
    with pytest.raises(RuntimeError, match="failed on 2"):
        spread.offsets_for_times(own, [[0], [1], [2], [3], [4], [5]], timeout=1.0)
    # The other shares ran to their end (own: 0 and 3, extra-0: 1 and 4); extra-1 stopped
    # at its failure, before 5.
    assert [call[0] for call in own.calls] == [0, 3]
    asked = sorted(call[0] for c in opener.opened for call in c.calls)
    assert asked == [1, 2, 4]
    spread.close()


def test_a_failure_of_the_callers_own_share_is_raised_too() -> None:
    spread = SpreadCalls(Opener(), connections=2)
    own = Client("own", fail_on=0)
    with pytest.raises(RuntimeError, match="own failed on 0"):
        spread.offsets_for_times(own, [[0], [1]], timeout=1.0)
    spread.close()
