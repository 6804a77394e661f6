"""The exactly-once sink's record of which (micro-batch, sink partition) pairs are in Kafka.

Each Spark task of the exactly-once Kafka sink writes its rows inside one Kafka transaction
and, in the same transaction, commits an offset for a consumer group of its own (one group per
query and sink partition). That offset is the marker: it says "this sink partition's rows of
batch ``b`` are committed". It becomes visible atomically with the rows, so a later attempt of
the same task (a retry, a speculative copy, the replay of the batch after a restart) reads it
and knows whether to write.

The marker offset is ``batch id + 1``, not the batch id: Kafka reports "nothing committed" as
a negative offset, and batch 0 must be distinguishable from it. The metadata string beside the
offset is for people reading the group's offsets (``kafka-consumer-groups --describe``); the
decision reads the offset alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from kafka_rescalable.state.errors import StateError

__all__ = [
    "MARKER_VERSION",
    "SinkMarker",
    "committed_batch",
    "marker_offset",
    "must_write",
]

MARKER_VERSION: Final = 1
"""Version of the marker's metadata document."""


def marker_offset(batch_id: int) -> int:
    """Return the offset that records batch ``batch_id`` as committed (``batch_id + 1``).

    Raises
    ------
    ValueError
        For a negative batch id: Spark numbers micro-batches from 0.
    """
    if batch_id < 0:
        msg = f"batch id {batch_id} is negative; Spark numbers micro-batches from 0"
        raise ValueError(msg)
    return batch_id + 1


def committed_batch(offset: int | None) -> int | None:
    """Return the last batch a committed marker offset records, or ``None`` for none.

    ``offset`` is what Kafka returns for the group: ``None`` or a negative value (librdkafka's
    ``OFFSET_INVALID``, -1001) when nothing was committed; ``0`` is never written by the sink
    and also means none.
    """
    if offset is None or offset < 1:
        return None
    return offset - 1


def must_write(committed_offset: int | None, batch_id: int) -> bool:
    """Say whether an attempt of batch ``batch_id`` must write its rows.

    It must unless a marker for this batch, or a later one, is already committed: batches are
    written in order, so a marker past ``batch_id`` means this batch's rows are in Kafka too
    (a replay of an old batch after its marker moved on writes nothing).
    """
    done = committed_batch(committed_offset)
    return done is None or done < batch_id


@dataclass(frozen=True)
class SinkMarker:
    """What one sink task commits beside its rows: batch, sink partition, attempt, row count.

    Parameters
    ----------
    batch_id
        Spark's micro-batch id (0 for a batch write).
    partition
        The Spark partition (sink task) that wrote the rows.
    attempt
        Spark's attempt number of the task that committed.
    records
        How many records the transaction holds.
    """

    batch_id: int
    partition: int
    attempt: int
    records: int

    def __post_init__(self) -> None:
        """Refuse negative fields: each is a count or an id Spark numbers from 0."""
        for name in ("batch_id", "partition", "attempt", "records"):
            if getattr(self, name) < 0:
                msg = f"SinkMarker.{name} must not be negative, got {getattr(self, name)}"
                raise ValueError(msg)

    @property
    def offset(self) -> int:
        """The offset committed for the marker: :func:`marker_offset` of the batch."""
        return marker_offset(self.batch_id)

    def to_dict(self) -> dict[str, int]:
        """Return the versioned metadata document."""
        return {
            "version": MARKER_VERSION,
            "batch": self.batch_id,
            "partition": self.partition,
            "attempt": self.attempt,
            "records": self.records,
        }

    def to_metadata(self) -> str:
        """Return the metadata string committed with the offset: stable, compact JSON."""
        return json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_dict(cls, document: object) -> SinkMarker:
        """Read a metadata document written by :meth:`to_dict`.

        Raises
        ------
        StateError
            For a document of another version or with a missing or malformed field.
        """
        if not isinstance(document, dict) or document.get("version") != MARKER_VERSION:
            msg = f"not a version {MARKER_VERSION} sink marker: {document!r}"
            raise StateError(msg)
        try:
            values = [document[key] for key in ("batch", "partition", "attempt", "records")]
        except KeyError as missing:
            msg = f"sink marker {document!r} lacks the field {missing}"
            raise StateError(msg) from None
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            msg = f"sink marker {document!r} holds a field that is not an integer"
            raise StateError(msg)
        try:
            return cls(*values)
        except ValueError as error:
            raise StateError(str(error)) from error

    @classmethod
    def from_metadata(cls, metadata: str) -> SinkMarker:
        """Read the metadata string Kafka returns with the committed offset."""
        try:
            document = json.loads(metadata)
        except ValueError as error:
            msg = f"sink marker metadata is not JSON: {metadata!r}"
            raise StateError(msg) from error
        return cls.from_dict(document)
