"""Arrow conversion of consumed messages (a stand-in message type: pure conversion logic)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from kafka_rescalable.executor.arrow_rows import messages_to_batch


@dataclass
class StubMessage:
    """Just the accessors of confluent_kafka.Message that the conversion calls."""

    k: bytes | None
    v: bytes | None
    off: int
    ts: tuple[int, int]
    hdrs: list[tuple[str, bytes | None]] | None = None

    def key(self) -> bytes | None:
        """Return the key bytes; ``None`` stands for a null key, as in ``Message.key()``."""
        return self.k

    def value(self) -> bytes | None:
        """Return the value bytes; ``None`` stands for a tombstone."""
        return self.v

    def topic(self) -> str:
        """Return one fixed topic: the conversion copies it into every row."""
        return "orders"

    def partition(self) -> int:
        """Return one fixed partition: the conversion copies it into every row."""
        return 3

    def offset(self) -> int:
        """Return the offset the test gave, to check that it lands in the row."""
        return self.off

    def timestamp(self) -> tuple[int, int]:
        """Return ``(timestamp type, milliseconds)``, the pair ``Message.timestamp()`` gives."""
        return self.ts

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        """Return the header pairs, or ``None`` for none, as ``Message.headers()`` does."""
        return self.hdrs


def test_rows_keep_every_field() -> None:
    messages = [
        StubMessage(b"k1", b"v1", 10, (1, 1_700_000_000_123), [("h", b"x"), ("n", None)]),
        StubMessage(None, None, 11, (2, 1_700_000_000_456)),
    ]
    rows = messages_to_batch(messages, include_headers=True).to_pylist()
    assert rows[0] == {
        "key": b"k1",
        "value": b"v1",
        "topic": "orders",
        "partition": 3,
        "offset": 10,
        "timestamp": datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=timezone.utc),
        "timestampType": 0,
        "headers": [{"key": "h", "value": b"x"}, {"key": "n", "value": None}],
    }
    assert rows[1]["key"] is None and rows[1]["value"] is None
    assert rows[1]["timestampType"] == 1
    assert rows[1]["headers"] is None


def test_without_headers_there_is_no_headers_column() -> None:
    batch = messages_to_batch([StubMessage(b"k", b"v", 0, (1, 0), [("h", b"x")])], False)
    assert batch.schema.names[-1] == "timestampType"
