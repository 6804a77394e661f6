"""When a task that receives nothing gives up, and what it says: pure policy, no Kafka client.

:func:`kafka_rescalable.executor.range_reader.read_ranges` measures how long it has received nothing
and whether the client reported a refused login, then asks :func:`stall`; it raises the
error whose message is built here.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from kafka_rescalable.state import OffsetRange

__all__ = [
    "LOGIN_REFUSED_GRACE_S",
    "Stall",
    "login_refused_message",
    "poll_timeout_message",
    "stall",
]

LOGIN_REFUSED_GRACE_S = 5.0
"""How long a refused login may last before a task fails: a restarting broker may refuse one."""


class Stall(Enum):
    """Why a task that receives nothing stops waiting."""

    LOGIN_REFUSED = "login refused"
    """The broker refused the consumer's login for longer than :data:`LOGIN_REFUSED_GRACE_S`."""
    POLL_TIMEOUT = "poll timeout"
    """Nothing arrived for ``kafkaConsumer.pollTimeoutMs``."""


def stall(idle_s: float, login_refused: bool, poll_timeout_ms: int) -> Stall | None:
    """Return why a task stops waiting after ``idle_s`` seconds without a record, or ``None``.

    A refused login that outlasts the grace fails first, with its own advice; it gets no
    longer than ``poll_timeout_ms`` either, since a task that waits that long fails anyway.

    Parameters
    ----------
    idle_s
        Seconds since the task last received anything (or since it started).
    login_refused
        Whether the client reported a refused login that no delivery has cleared since.
    poll_timeout_ms
        ``kafkaConsumer.pollTimeoutMs``.
    """
    if login_refused and idle_s > LOGIN_REFUSED_GRACE_S:
        return Stall.LOGIN_REFUSED
    if idle_s * 1000 > poll_timeout_ms:
        return Stall.POLL_TIMEOUT
    return None


def login_refused_message(reading: OffsetRange, detail: str) -> str:
    """Say that the login failed while reading ``reading``; ``detail`` is the client's text."""
    return (
        f"authentication failed while reading {reading}: {detail}. "
        "Check the user name, password and mechanism (OAUTHBEARER: the OAuth client id, "
        "secret and token endpoint, or the token provider)"
    )


def poll_timeout_message(poll_timeout_ms: int, waiting: Iterable[OffsetRange]) -> str:
    """Say which ranges waited ``poll_timeout_ms`` in vain and what to check."""
    ranges = ", ".join(str(r) for r in sorted(waiting, key=lambda r: (r.topic, r.partition)))
    return (
        f"no record arrived for {poll_timeout_ms} ms while reading {ranges}; "
        "check that the brokers are reachable from the executors, or raise "
        "'kafkaConsumer.pollTimeoutMs'"
    )
