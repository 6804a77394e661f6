"""The cuts a batch's ends take after the AvailableNow target: alignment, then the byte cap.

Both read records on the driver (the event-time probe, the size probe) and both yield to
``ReadAllAvailable`` (``Trigger.Once``), which must read everything at once. The row cap is
not here: it needs no read, and :func:`~kafka_rescalable.state.batch_boundary.plan_batch_end`
applies it, or takes it from the byte cap, which holds it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows

from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.driver.alignment import EventTimeAlignment
from kafka_rescalable.driver.kafka_metadata import KafkaMetadata
from kafka_rescalable.driver.record_sizes import SizeProbe
from kafka_rescalable.state import SlotsDocument, TopicPartition
from kafka_rescalable.state.byte_cap import ByteCap

__all__ = ["BatchLimits", "CutEnds"]


@dataclass(frozen=True)
class CutEnds:
    """What the cuts answer, as :func:`plan_batch_end` takes it.

    Parameters
    ----------
    aligned : Mapping[TopicPartition, int] or None
        The ends cut at the event-time frontier, when the query aligns.
    event_time : Mapping or None
        The ``eventTime`` section to checkpoint, when the query aligns.
    max_records : int or None
        The row cap the engine passed.
    byte_cap : ByteCap or None
        The ends under ``maxBytesPerTrigger`` (and the row cap), when set.
    """

    aligned: Mapping[TopicPartition, int] | None
    event_time: Mapping[str, Any] | None
    max_records: int | None
    byte_cap: ByteCap | None


class BatchLimits:
    """One query's cuts across batch boundaries; the alignment's state lives on in it."""

    def __init__(self, options: KafkaSourceOptions) -> None:
        self._options = options
        self._alignment = EventTimeAlignment(options)
        self._sizes = SizeProbe(options)

    def cut(
        self,
        kafka: KafkaMetadata,
        known: Mapping[TopicPartition, int],
        ends: Mapping[TopicPartition, int],
        latest: Mapping[TopicPartition, int],
        document: SlotsDocument,
        limit: ReadLimit,
        available_now: bool,
    ) -> CutEnds:
        """Cut ``ends`` (each partition starting at ``known``) at the frontier, then in bytes.

        ``latest`` is each partition's end of log now.
        """
        options = self._options
        everything = isinstance(limit, ReadAllAvailable)
        aligned, event_time = None, None
        if options.max_event_time_drift_ms is not None and not everything:
            aligned, event_time = self._alignment.cut(
                kafka, known, ends, document, available_now=available_now
            )
        max_records = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        byte_cap = None
        if options.max_bytes_per_trigger is not None and not everything:
            cut = aligned if aligned is not None else ends
            forward = {tp: max(end, known[tp]) for tp, end in cut.items()}
            starts = {tp: known[tp] for tp in cut}
            byte_cap = self._sizes.cap(starts, forward, latest, max_records)
        return CutEnds(aligned, event_time, max_records, byte_cap)
