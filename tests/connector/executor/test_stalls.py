"""When a task that receives nothing fails, and the messages it fails with."""

from __future__ import annotations

import pytest

from kafka_rescalable.executor.stalls import (
    LOGIN_REFUSED_GRACE_S,
    Stall,
    login_refused_message,
    poll_timeout_message,
    stall,
)
from kafka_rescalable.state import OffsetRange


@pytest.mark.parametrize(
    ("idle_s", "refused", "timeout_ms", "expected"),
    [
        (0.0, False, 1000, None),
        (1.0, False, 1000, None),  # exactly the timeout is still within it
        (1.001, False, 1000, Stall.POLL_TIMEOUT),
        (LOGIN_REFUSED_GRACE_S, True, 120_000, None),  # a restarting broker may refuse a login
        (LOGIN_REFUSED_GRACE_S + 0.01, True, 120_000, Stall.LOGIN_REFUSED),
        (LOGIN_REFUSED_GRACE_S + 0.01, False, 120_000, None),
        # a poll timeout shorter than the grace ends the wait first, as a poll timeout
        (2.0, True, 1000, Stall.POLL_TIMEOUT),
        # both are past: the refused login, whose advice is the more useful
        (LOGIN_REFUSED_GRACE_S + 1, True, 1000, Stall.LOGIN_REFUSED),
    ],
)
def test_stall(idle_s: float, refused: bool, timeout_ms: int, expected: Stall | None) -> None:
    assert stall(idle_s, refused, timeout_ms) is expected


def test_the_poll_timeout_names_every_waiting_range_in_order() -> None:
    waiting = [OffsetRange("b", 0, 1, 2), OffsetRange("a", 3, 10, 20), OffsetRange("a", 1, 0, 5)]
    text = poll_timeout_message(500, waiting)
    assert "no record arrived for 500 ms while reading a-1[0, 5), a-3[10, 20), b-0[1, 2);" in text
    assert "'kafkaConsumer.pollTimeoutMs'" in text


def test_the_refused_login_names_the_range_and_the_clients_text() -> None:
    text = login_refused_message(OffsetRange("orders", 2, 7, 9), "SASL failed")
    assert text.startswith("authentication failed while reading orders-2[7, 9): SASL failed.")
    assert "user name, password and mechanism" in text
