"""Driver side of the byte cap (``maxBytesPerTrigger``): the size probe.

Kafka tells the driver how many offsets wait, never how many bytes: confluent-kafka has no
DescribeLogDirs, and a log's size on disk would be an average (compressed, over records long
since read) that says nothing about the next records of a backlog of mixed sizes. The Python
data source API gives the executors no channel back to the driver either. So the driver reads
the records a batch may admit, with one probe consumer, and counts their bytes as the executors
will get them: key, value and, when read (``includeHeaders``, dead letters), the headers' names
and values. The policy (:func:`kafka_rescalable.state.byte_cap.byte_capped_ends`) says which
sizes it needs and how many bytes are worth reading, so the probe reads about the batch's own
records, not the backlog, and what it read past a batch's end serves the next batch: each
record is read about once more on the driver. It is exact from the first batch on: no estimate
to warm up. If Kafka does not answer within the probe's time, the sizes not read count as too
large: the batch admits what is known to fit, and at least one record per partition, so it
still moves.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from kafka_rescalable._logging import logger
from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.kafka_clients import probe_consumer
from kafka_rescalable.state import TopicPartition
from kafka_rescalable.state.byte_cap import ByteCap, RecordSizes, byte_capped_ends

__all__ = ["SizeProbe"]

_PROBE_TIMEOUT_S = 30.0
_FETCH_WAIT_MS = 10  # a round ends at the end of a log: the broker need not wait for more


class SizeProbe:
    """The size probe of one query, on the driver, with the sizes it read across batches.

    A batch reads sizes past its own end (the records that did not fit); the next batch
    starts there, so they are kept and the probe reads each record about once. Only the
    partitions of the last batch are kept, and only where the log still reaches what was
    read: a partition that joins (a new or re-created topic) or whose log went back starts
    afresh. Executors never plan, so the reader ships without them.
    """

    def __init__(self, options: KafkaSourceOptions) -> None:
        self._options = options
        self._known: dict[TopicPartition, RecordSizes] = {}
        self.probed_bytes = 0
        """Bytes of records the probe read so far, for the log and the benchmark."""

    def __getstate__(self) -> dict[str, Any]:
        """Ship without the sizes: they are the driver's."""
        return {"_options": self._options, "_known": {}, "probed_bytes": 0}

    def cap(
        self,
        start: Mapping[TopicPartition, int],
        ends: Mapping[TopicPartition, int],
        latest: Mapping[TopicPartition, int],
        max_records: int | None,
    ) -> ByteCap:
        """Cap ``ends`` (from ``start``) to ``maxBytesPerTrigger``, reading the sizes it needs.

        ``latest`` is each partition's end of log now; ``max_records`` the row cap of the
        batch, if any: the tighter of the two wins.
        """
        options = self._options
        assert options.max_bytes_per_trigger is not None
        known = {}
        for tp, at in start.items():
            cached = self._known.get(tp)
            usable = cached is not None and cached.until <= latest.get(tp, -1)
            known[tp] = (cached.rebased(at) if usable else None) or RecordSizes(at, at)
        deadline = time.monotonic() + _PROBE_TIMEOUT_S
        consumer: Any = None
        probed, settle = 0, False
        try:
            while True:
                step = byte_capped_ends(
                    start,
                    ends,
                    known,
                    max_bytes=options.max_bytes_per_trigger,
                    max_records=max_records,
                    settle=settle,
                )
                if step.ends is not None:
                    break
                if consumer is None:
                    consumer = probe_consumer(options, fetch_wait_ms=_FETCH_WAIT_MS)
                before = {tp: known[tp].until for tp in step.need}
                probed += _read_sizes(consumer, step, ends, known, deadline, options.reads_headers)
                stuck = all(known[tp].until == at for tp, at in before.items())
                settle = stuck or time.monotonic() >= deadline
                if settle:
                    logger.warning(
                        "maxBytesPerTrigger: the record sizes of %d partitions could not be "
                        "read within %.0f s; this batch admits only records known to fit, and "
                        "at least one per partition",
                        len(step.need),
                        _PROBE_TIMEOUT_S,
                    )
        finally:
            if consumer is not None:
                consumer.close()
        self._known = known
        self.probed_bytes += probed
        logger.debug(
            "maxBytesPerTrigger: %d offsets admitted (%s); the size probe read %d bytes",
            step.records,
            "held by the byte cap" if step.by_bytes else "not held by the byte cap",
            probed,
        )
        return step


def _read_sizes(
    consumer: Any,
    step: ByteCap,
    ends: Mapping[TopicPartition, int],
    known: dict[TopicPartition, RecordSizes],
    deadline: float,
    headers: bool,
) -> int:
    """Read the sizes ``step`` asks for into ``known``; return the bytes read.

    Stops a partition at the offset it needs (or its end of log) and the whole read once more
    than ``step.budget`` bytes came in: past it the policy's answer is "too big" anyway.
    """
    from confluent_kafka import KafkaError
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    need = step.need
    consumer.assign([KafkaTopicPartition(tp.topic, tp.partition, known[tp].until) for tp in need])
    read: dict[TopicPartition, list[tuple[int, int]]] = {tp: [] for tp in need}
    reached = {tp: known[tp].until for tp in need}
    pending, spent = set(need), 0
    while pending and spent <= step.budget and time.monotonic() < deadline:
        # consume() waits for all 500 or the timeout: short, as a round needs few records.
        for message in consumer.consume(500, timeout=0.05):
            tp = TopicPartition(message.topic(), message.partition())
            if tp not in pending:
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    # Nothing more in the log: the offsets up to its end hold no records.
                    reached[tp] = max(reached[tp], min(message.offset(), ends[tp]))
                    pending.discard(tp)
                continue
            offset = message.offset()
            if offset < ends[tp]:
                size = _size(message, headers)
                read[tp].append((offset, size))
                spent += size
            reached[tp] = max(reached[tp], min(offset + 1, ends[tp]))
            if reached[tp] >= need[tp]:
                pending.discard(tp)
    consumer.unassign()
    for tp in need:
        known[tp] = known[tp].extended(read[tp], reached[tp])
    return spent


def _size(message: Any, headers: bool) -> int:
    """Count a record's bytes as the executors hold them: key, value, headers if read."""
    size = len(message.key() or b"") + len(message.value() or b"")
    if headers:
        size += sum(
            len(name.encode()) + len(value or b"") for name, value in message.headers() or ()
        )
    return size
