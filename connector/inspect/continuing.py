"""Where a new query continues a checkpointed one: ``startingOffsets`` per Kafka source.

A query of Spark's built-in ``kafka`` source cannot be resumed by kafka-rescalable on its own
checkpoint (its offsets carry no reader slots); a new query with a new checkpoint continues it
when its ``startingOffsets`` are where the old query stopped. That is the end of the *last
committed* batch: Spark writes ``offsets/<id>`` when it plans a batch and ``commits/<id>``
once the sink has written it, and on restart it runs a planned batch without a commit again.
The end of such a batch may hold records no sink has written; starting after them would lose
them.

Each source line of that batch that holds Kafka offsets (the built-in source's
``{"orders": {"0": 5}}``, or a slots document of ours) gives one :class:`SourceStart`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_rescalable.inspect._text import id_ranges
from kafka_rescalable.inspect.reading import CheckpointError, CheckpointLog, SourceKind
from kafka_rescalable.state import TopicPartition

__all__ = ["Continuation", "SourceStart", "continuation"]


@dataclass(frozen=True)
class SourceStart:
    """One Kafka source's next offsets at the end of the last committed batch.

    Parameters
    ----------
    source_key : str
        The source's key in the offset log (position in ``v1``, name in ``v2``).
    kind : SourceKind
        :attr:`SourceKind.FOREIGN` for Spark's built-in source, :attr:`SourceKind.SLOTS` ours.
    offsets : Mapping[TopicPartition, int]
        The next offset to read per partition.
    """

    source_key: str
    kind: SourceKind
    offsets: Mapping[TopicPartition, int]

    def starting_offsets(self) -> dict[str, dict[str, int]]:
        """Return the ``startingOffsets`` JSON value: topics, then partitions, in order."""
        by_topic: dict[str, dict[str, int]] = {}
        for tp in sorted(self.offsets):
            by_topic.setdefault(tp.topic, {})[str(tp.partition)] = self.offsets[tp]
        return by_topic


@dataclass(frozen=True)
class Continuation:
    """The ``startingOffsets`` that continue a checkpointed query, one per Kafka source.

    Parameters
    ----------
    batch_id : int
        The last committed batch, whose end offsets these are.
    sources : tuple of SourceStart
        In the order of the offset file; never empty.
    """

    batch_id: int
    sources: tuple[SourceStart, ...]


def continuation(log: CheckpointLog, source: str | None = None) -> Continuation:
    """Return the starting offsets that continue the query of ``log`` after its last commit.

    Parameters
    ----------
    log
        The checkpoint's offset log.
    source
        Only this source (its key); every Kafka source when ``None``.

    Raises
    ------
    CheckpointError
        When no batch is committed, the last committed one cannot be read, ``source`` is not
        a source with Kafka offsets in it, or no source of it holds Kafka offsets.
    """
    if not log.committed_ids:
        msg = (
            f"{log.path}: no batch is committed yet (planned: "
            f"{id_ranges(b.batch_id for b in log.batches)}), so no record has been written for "
            "good; start the new query with the old one's own startingOffsets"
        )
        raise CheckpointError(msg)
    last = max(log.committed_ids)
    if last in log.unreadable:
        msg = f"the last committed batch, {last}, cannot be read: {log.unreadable[last]}"
        raise CheckpointError(msg)
    batch = log.batch(last)
    starts = []
    for line in batch.sources:
        offsets = line.kafka_offsets
        if source is not None and line.key != source:
            continue
        if offsets is None:
            if source is not None:
                msg = (
                    f"batch {last}, {line.label} holds no Kafka offsets "
                    f"({line.kind.value}: {line.detail or line.raw.strip()})"
                )
                raise CheckpointError(msg)
            continue
        starts.append(SourceStart(line.key, line.kind, offsets))
    if not starts:
        keys = ", ".join(line.key for line in batch.sources) or "none"
        what = f"has no source {source}" if source is not None else "holds no Kafka offsets"
        msg = f"the last committed batch, {last}, {what} (sources: {keys})"
        raise CheckpointError(msg)
    return Continuation(last, tuple(starts))
