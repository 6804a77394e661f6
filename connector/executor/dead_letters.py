"""Executor side of ``deadLetterTopic``: records that do not decode leave the output for a topic.

A task decodes each Arrow batch it reads (:func:`kafka_rescalable.formats.decoding.
decode_separating`), yields the records that decoded, and keeps the others, raw, with their
headers and the reason. It commits them per source topic-partition
(:mod:`kafka_rescalable.executor.dead_letter_commits`) when its ranges are read, before it ends:
Spark completes the task, and so the micro-batch, only after its dead letters are committed.
A task that keeps more than a bound commits what it has early, for the offsets it has read.

Nothing of this runs for a batch without a bad record beyond the check that none is there: no
producer is opened, no marker read.

Which query and micro-batch a task belongs to, Spark tells the task through its local
properties (``sql.streaming.queryId``, ``streaming.sql.batchId``), as it tells the sink's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

import pyarrow as pa

from kafka_rescalable._logging import logger
from kafka_rescalable.errors import DeadLetterWriteError
from kafka_rescalable.executor.dead_letter_commits import (
    DeadLetter,
    DeadLetterUnit,
    commit_dead_letters,
)
from kafka_rescalable.formats.decoding import DecodePlan, Separated, decode_separating
from kafka_rescalable.state import OffsetRange
from kafka_rescalable.state.dead_letters import (
    DeadLetterOrigin,
    Interval,
    dead_letter_headers,
    done_intervals,
    framed_schema_id,
)
from kafka_rescalable.task.dead_letters import DeadLetterTarget

__all__ = ["QUERY_ID_PROPERTY", "BATCH_ID_PROPERTY", "decode_with_dead_letters"]

BATCH_ID_PROPERTY: Final = "streaming.sql.batchId"
QUERY_ID_PROPERTY: Final = "sql.streaming.queryId"
_FLUSH_RECORDS: Final = 10_000
_FLUSH_BYTES: Final = 32 * 1024 * 1024
"""A task holding more dead letters than this commits them before reading on."""

_Key = tuple[str, int]


def decode_with_dead_letters(
    batches: Iterable[pa.RecordBatch],
    ranges: Sequence[OffsetRange],
    plan: DecodePlan,
    target: DeadLetterTarget,
) -> Iterator[pa.RecordBatch]:
    """Yield the decoded records of ``batches``; commit the others to the dead-letter topic."""
    query_id, batch_id = _current_query()
    held = _Held(target, query_id, batch_id, ranges)
    for batch in batches:
        separated = decode_separating(batch, plan)
        if separated.bad_rows:
            held.add(batch, separated)
        elif held.letters:
            held.note_read(batch)
        if held.too_large:
            held.commit(final=False)
        good = separated.good
        if not target.keep_headers:
            good = good.drop_columns(["headers"])
        if good.num_rows:
            yield good
    held.commit(final=True)


def _current_query() -> tuple[str, int]:
    from pyspark import TaskContext

    context = TaskContext.get()
    query = context.getLocalProperty(QUERY_ID_PROPERTY) if context else None
    batch = context.getLocalProperty(BATCH_ID_PROPERTY) if context else None
    if query is None or batch is None:
        msg = (
            "'deadLetterTopic' writes each dead letter once per micro-batch of a streaming "
            "query, but this task was given no query id or batch id by Spark (a streaming "
            "query's tasks always are). Inside foreachBatch, run Spark jobs from the calling "
            "thread or from pyspark.InheritableThread, which pass Spark's local properties on "
            "(a plain thread or ThreadPoolExecutor does not); elsewhere, read with "
            "spark.readStream"
        )
        raise DeadLetterWriteError(msg)
    return query, int(batch)


@dataclass
class _Held:
    """The task's dead letters not committed yet, by source topic-partition."""

    target: DeadLetterTarget
    query_id: str
    batch_id: int
    ranges: Sequence[OffsetRange]
    letters: dict[_Key, list[DeadLetter]] = field(default_factory=dict)
    read_until: dict[_Key, int] = field(default_factory=dict)
    count: int = 0
    size: int = 0

    @property
    def too_large(self) -> bool:
        """Whether the held dead letters pass the bound on a task's memory."""
        return self.count > _FLUSH_RECORDS or self.size > _FLUSH_BYTES

    def add(self, raw: pa.RecordBatch, separated: Separated) -> None:
        """Keep the records of ``raw`` that did not decode, as dead letters."""
        rows = pa.array(separated.bad_rows, pa.int64())
        bad = raw.take(rows).to_pydict()
        millis = raw.column("timestamp").take(rows).cast(pa.int64()).to_pylist()
        for i, reason in enumerate(separated.reasons):
            key, value = bad["key"][i], bad["value"][i]
            origin = DeadLetterOrigin(
                topic=bad["topic"][i],
                partition=bad["partition"][i],
                offset=bad["offset"][i],
                timestamp_ms=None if millis[i] is None else millis[i] // 1000,
                timestamp_type=bad["timestampType"][i],
                reason=reason,
                key_schema_id=framed_schema_id(key) if self.target.key_framed else None,
                value_schema_id=framed_schema_id(value) if self.target.value_framed else None,
                query_id=self.query_id,
                batch_id=self.batch_id,
            )
            original = [(h["key"], h["value"]) for h in bad["headers"][i] or ()]
            letter = DeadLetter(
                origin.offset, key, value, tuple(dead_letter_headers(original, origin))
            )
            self.letters.setdefault((origin.topic, origin.partition), []).append(letter)
            self.count += 1
            self.size += letter.size
        self.note_read(raw)

    def note_read(self, raw: pa.RecordBatch) -> None:
        """Record how far ``raw`` read each partition that holds dead letters."""
        ends = (
            pa.Table.from_batches([raw])
            .group_by(["topic", "partition"])
            .aggregate([("offset", "max")])
        )
        for topic, partition, last in zip(
            ends.column("topic").to_pylist(),
            ends.column("partition").to_pylist(),
            ends.column("offset_max").to_pylist(),
            strict=True,
        ):
            key = (topic, partition)
            if key in self.letters:
                self.read_until[key] = max(self.read_until.get(key, 0), last + 1)

    def commit(self, *, final: bool) -> None:
        """Commit every held dead letter; ``final``: the task's ranges are all read."""
        for key, letters in sorted(self.letters.items()):
            topic, partition = key
            done = self._done(key, final)
            unit = DeadLetterUnit(self.query_id, self.batch_id, topic, partition)
            written = commit_dead_letters(self.target, unit, letters, done)
            logger.info(
                "Batch %d: %d dead letter(s) of %s-%d to %s (%d found, the rest committed "
                "by an earlier attempt)",
                self.batch_id,
                written,
                topic,
                partition,
                self.target.topic,
                len(letters),
            )
        self.letters.clear()
        self.read_until.clear()
        self.count = self.size = 0

    def _done(self, key: _Key, final: bool) -> tuple[Interval, ...]:
        mine = [(r.start, r.until) for r in self.ranges if (r.topic, r.partition) == key]
        until = max(u for _, u in mine) if final else self.read_until[key]
        return done_intervals(mine, until)
