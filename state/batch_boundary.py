"""Where the next micro-batch ends: every batch-boundary decision, from plain values.

The driver reads from Kafka what exists now (:class:`KafkaNow`) and calls, in order:

1. :func:`reconcile`: which checkpointed positions still hold. A topic whose id changed was
   deleted and re-created; a partition gone was deleted; an end below the checkpointed offset
   lost records. Each is a :class:`DataLoss`, fatal under ``failOnDataLoss``, and the
   partitions that start again are listed in :attr:`Carried.joining`.
2. :func:`must_wait`: ``minOffsetsPerTrigger`` and ``maxTriggerDelay``.
3. :func:`target_ends`: the latest offsets, cut at the ``Trigger.AvailableNow`` target. The
   driver then cuts them at the event-time frontier (``kafka_rescalable.state.event_time``) when it
   aligns.
4. :func:`plan_batch_end`: the row cap (or the byte cap the driver worked out with
   ``kafka_rescalable.state.byte_cap``), the rebalance over the slot count, the end document,
   what was held back and why, and the backlog.

The driver's reads from Kafka happen between these steps (the earliest offsets of
:attr:`Carried.joining`, the event-time probe), which is why the planner is several
functions rather than one: each step decides which lookups the next one needs, so a batch
never asks Kafka for offsets it does not use.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import lt, sub
from typing import Any

from kafka_rescalable.state.admission import cap_end_offsets
from kafka_rescalable.state.batch_edges import backlog_report
from kafka_rescalable.state.byte_cap import ByteCap
from kafka_rescalable.state.document import SlotsDocument
from kafka_rescalable.state.event_time import EVENT_TIME_KEY
from kafka_rescalable.state.partitions import (
    PartitionOffset,
    TopicPartition,
    describe_partitions,
    trusted_partition_offset,
)
from kafka_rescalable.state.rebalancer import Rebalance, rebalance, settled
from kafka_rescalable.state.topic_identity import carried_topic_ids, recreated_topics

__all__ = [
    "HELD_BY_ALIGNMENT",
    "HELD_BY_BYTES",
    "HELD_BY_CAP",
    "HELD_BY_TARGET",
    "BatchEnd",
    "Carried",
    "DataLoss",
    "KafkaNow",
    "must_wait",
    "plan_batch_end",
    "reconcile",
    "recreation_loss",
    "target_ends",
]

HELD_BY_TARGET = "the Trigger.AvailableNow target"
HELD_BY_ALIGNMENT = "event-time alignment (maxEventTimeDrift)"
HELD_BY_CAP = "the row cap (maxOffsetsPerTrigger)"
HELD_BY_BYTES = "the byte cap (maxBytesPerTrigger)"


@dataclass(frozen=True)
class KafkaNow:
    """What Kafka holds at this boundary, as the driver read it.

    Parameters
    ----------
    partitions : frozenset of TopicPartition
        The subscribed partitions that exist.
    topic_ids : Mapping[str, str]
        Kafka's id of each subscribed topic that exists, where the broker gave one.
    latest : Mapping[TopicPartition, int]
        The latest offset of every partition in ``partitions``.
    """

    partitions: frozenset[TopicPartition]
    topic_ids: Mapping[str, str]
    latest: Mapping[TopicPartition, int]


@dataclass(frozen=True)
class DataLoss:
    """Records the query should have read that are gone, and whether that stops it.

    ``message`` is the whole text: under ``failOnDataLoss=true`` it says how to go on, under
    ``false`` what the query does instead.
    """

    message: str
    fatal: bool


@dataclass(frozen=True)
class Carried:
    """The checkpointed positions that still hold against what Kafka has now.

    Parameters
    ----------
    known : Mapping[TopicPartition, int]
        Where each partition that carries on starts this batch.
    live : frozenset of TopicPartition
        The partitions of this batch (under AvailableNow, only those of its target or
        already known).
    joining : frozenset of TopicPartition
        Live partitions without a position: new ones, those of re-created topics and those
        that start again. They join at their earliest offset and read nothing this batch.
    recreated : tuple of str
        Topics whose Kafka id changed since the checkpoint.
    losses : tuple of DataLoss
        In the order they are reported: re-created topics, partitions gone, ends gone back.
    """

    known: Mapping[TopicPartition, int]
    live: frozenset[TopicPartition]
    joining: frozenset[TopicPartition]
    recreated: tuple[str, ...] = ()
    losses: tuple[DataLoss, ...] = ()


@dataclass(frozen=True)
class BatchEnd:
    """The planned end of a batch.

    Parameters
    ----------
    document : SlotsDocument or None
        The end document; ``None`` when nothing is to be read and nothing moved, so no batch.
    rebalance : Rebalance
        How the slots changed, for the driver's log.
    backlog : Mapping[str, Any]
        Records left after the batch, as :func:`backlog_report` counts them.
    held_back : Mapping[TopicPartition, str]
        Partitions that end before their latest offset, and the first rule that held them.
    """

    document: SlotsDocument | None
    rebalance: Rebalance
    backlog: Mapping[str, Any]
    held_back: Mapping[TopicPartition, str] = field(default_factory=dict)


def recreation_loss(
    topics: Collection[str],
    checkpointed: Mapping[str, str],
    live: Mapping[str, str],
    fail_on_data_loss: bool,
) -> DataLoss:
    """Report topics deleted and re-created: the old topic's unread records are gone."""
    shown = ", ".join(f"{t} (id {checkpointed[t]} -> {live[t]})" for t in topics)
    message = (
        f"topic {shown} was deleted and re-created since the last batch: its Kafka topic "
        "id changed, so the records of the old topic not yet read are lost"
    )
    if fail_on_data_loss:
        return DataLoss(
            message + ". Set 'failOnDataLoss' to false to read the new topic from its earliest "
            "offset, or start the query with a new checkpoint",
            fatal=True,
        )
    return DataLoss(
        message + "; reading the new topic from its earliest offset because failOnDataLoss is "
        "false",
        fatal=False,
    )


def reconcile(
    document: SlotsDocument,
    kafka: KafkaNow,
    *,
    fail_on_data_loss: bool,
    target: Mapping[TopicPartition, int] | None = None,
) -> Carried:
    """Carry the checkpointed positions of ``document`` over to what Kafka holds now.

    A re-created topic's partitions are new partitions from here on. Under AvailableNow
    (``target`` set) a partition created after the run started is left for a later run.
    An end below the checkpointed offset keeps its partition going from the new end when the
    topic's id is unchanged (an unclean leader election, as Spark's source does); without an
    id to compare (a version 1 checkpoint) it is taken for a re-creation and starts again.
    """
    known = document.state.offsets()
    losses: list[DataLoss] = []
    recreated = recreated_topics(document.topic_ids, kafka.topic_ids)
    if recreated:
        losses.append(
            recreation_loss(recreated, document.topic_ids, kafka.topic_ids, fail_on_data_loss)
        )
        known = {tp: at for tp, at in known.items() if tp.topic not in recreated}
    live = kafka.partitions
    if target is not None:
        live = frozenset(tp for tp in live if tp in target or tp in known)
    removed = frozenset(tp for tp in known.keys() - live if tp.topic not in recreated)
    if removed:
        losses.append(_removal_loss(removed, fail_on_data_loss))
    reset, loss = _went_back(known, kafka.latest, document.topic_ids, fail_on_data_loss)
    if loss is not None:
        losses.append(loss)
        known = {tp: at for tp, at in known.items() if tp not in reset}
    joining = live.difference(known)
    return Carried(known, live, joining, recreated, tuple(losses))


def _removal_loss(removed: frozenset[TopicPartition], fail_on_data_loss: bool) -> DataLoss:
    message = (
        f"{describe_partitions(removed)} no longer exist (topic or partitions deleted); "
        "their unread records, if any, are lost"
    )
    if fail_on_data_loss:
        return DataLoss(
            message + ". Set 'failOnDataLoss' to false to drop them with a warning and go on.",
            fatal=True,
        )
    return DataLoss(message + "; removing them because failOnDataLoss is false", fatal=False)


def _went_back(
    known: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    topic_ids: Mapping[str, str],
    fail_on_data_loss: bool,
) -> tuple[frozenset[TopicPartition], DataLoss | None]:
    """Partitions whose end is below the checkpointed offset that start again, and the loss."""
    back = sorted(compress(known, map(lt, map(latest.get, known, known.values()), known.values())))
    if not back:
        return frozenset(), None
    shown = "; ".join(
        f"{tp}: the latest offset {latest[tp]} is below the checkpointed position {known[tp]}"
        for tp in back
    )
    reset = frozenset(tp for tp in back if tp.topic not in topic_ids)
    cause = (
        "the topic was probably deleted and re-created"
        if reset
        else "the topic's id is unchanged: an unclean leader election may have lost them"
    )
    message = f"{shown}. Records may be lost: {cause}"
    if fail_on_data_loss:
        return reset, DataLoss(message + ". Set 'failOnDataLoss' to false to go on.", fatal=True)
    action = "reading them again from their earliest offset" if reset else "going on from there"
    return reset, DataLoss(f"{message}; {action} because failOnDataLoss is false", fatal=False)


def must_wait(
    carried: Carried,
    latest: Mapping[TopicPartition, int],
    *,
    min_records: int | None,
    max_trigger_delay_ms: int,
    now_ms: float,
    last_batch_ms: float,
    must_read: bool,
) -> bool:
    """Whether to skip this trigger under ``minOffsetsPerTrigger``.

    A trigger is skipped until ``min_records`` records wait, but never for longer than
    ``max_trigger_delay_ms`` after the last batch, and never while partitions join (their
    position must be checkpointed). ``must_read`` is for AvailableNow and ``ReadAllAvailable``,
    which must reach their end and never wait.
    """
    if min_records is None or must_read or carried.joining:
        return False
    known = carried.known
    waiting = sum(max(0, latest[tp] - known[tp]) for tp in latest if tp in known)
    overdue = now_ms - last_batch_ms >= max_trigger_delay_ms
    return waiting < min_records and not overdue


def target_ends(
    carried: Carried,
    latest: Mapping[TopicPartition, int],
    target: Mapping[TopicPartition, int] | None,
) -> dict[TopicPartition, int]:
    """Return each carried partition's latest offset, cut at the AvailableNow ``target``."""
    if carried.known.keys() >= latest.keys():  # the steady state: no partition joins
        ends = dict(latest)
    else:
        ends = {tp: end for tp, end in latest.items() if tp in carried.known}
    if target is not None:
        ends = {tp: min(end, target.get(tp, end)) for tp, end in ends.items()}
    return ends


def plan_batch_end(
    document: SlotsDocument,
    carried: Carried,
    kafka: KafkaNow,
    *,
    earliest: Mapping[TopicPartition, int],
    slots: int,
    ends: Mapping[TopicPartition, int],
    aligned: Mapping[TopicPartition, int] | None = None,
    event_time: Mapping[str, Any] | None = None,
    max_records: int | None = None,
    byte_cap: ByteCap | None = None,
    subscribed: Collection[str] = (),
) -> BatchEnd:
    """Plan the end of the batch that starts at ``document``.

    Parameters
    ----------
    document : SlotsDocument
        The batch start, as checkpointed.
    carried : Carried
        :func:`reconcile`'s result for ``document`` and ``kafka``.
    kafka : KafkaNow
        What Kafka holds now.
    earliest : Mapping[TopicPartition, int]
        The earliest offset of every partition in ``carried.joining``.
    slots : int
        The reader slot count of this batch.
    ends : Mapping[TopicPartition, int]
        :func:`target_ends`: the latest offsets, cut at the AvailableNow target.
    aligned : Mapping[TopicPartition, int], optional
        ``ends`` cut at the event-time frontier, when the query aligns.
    event_time : Mapping, optional
        The event-time section to checkpoint, when the query aligns; otherwise the document
        carries none.
    max_records : int, optional
        The row cap of this batch, shared by the partitions still free to move.
    byte_cap : ByteCap, optional
        The byte cap's ends (:mod:`kafka_rescalable.state.byte_cap`), which hold the row cap
        too: ``max_records`` is then not applied again.
    subscribed : collection of str
        The topics of ``document.topic_ids`` still subscribed: a deleted topic keeps its id
        while subscribed, so that after a restart it is known as deleted, not as a typo.

    Returns
    -------
    BatchEnd
        The end document (``None`` when there is no batch), with the held-back partitions
        and the backlog. The rebalancer keeps the offset each partition had; a partition that
        joins is set to its earliest offset explicitly, as it may have had another before.
    """
    latest = kafka.latest
    known = carried.known
    final = dict(aligned if aligned is not None else ends)
    if byte_cap is not None and byte_cap.ends is not None:
        final = {tp: min(end, byte_cap.ends.get(tp, end)) for tp, end in final.items()}
    elif max_records is not None:
        forward = {tp: max(end, known[tp]) for tp, end in final.items()}
        capped = cap_end_offsets({tp: known[tp] for tp in final}, forward, max_records)
        final = {tp: min(end, capped[tp]) for tp, end in final.items()}
    capped_by = HELD_BY_BYTES if byte_cap is not None and byte_cap.by_bytes else HELD_BY_CAP
    held = _held_back(latest, ends, aligned, final, capped_by)
    joining = {tp: earliest[tp] for tp in carried.joining}
    starts: Mapping[TopicPartition, int]
    if not joining and known.keys() == carried.live:  # the steady state
        starts = known
    else:
        starts = {tp: known.get(tp, joining.get(tp, 0)) for tp in carried.live}
    behind = map(sub, map(latest.__getitem__, starts), starts.values())
    weights = dict(zip(starts, map(max, repeat(0), behind), strict=True))
    current = document.state
    if settled(current, slots, starts, weights):
        result = Rebalance(current, frozenset(), (), ())  # what rebalance would answer
    else:
        # The known offsets come from a checked document; Kafka's earliest ones are checked.
        sub_states = [
            trusted_partition_offset(tp.topic, tp.partition, at)
            if tp in known
            else PartitionOffset(tp.topic, tp.partition, at)
            for tp, at in starts.items()
        ]
        result = rebalance(current, slots, sub_states, weights)
    end_state = result.state.with_offsets({**joining, **final} if joining else final)
    backlog = backlog_report(end_state, latest)
    sections = {k: v for k, v in document.extras.items() if k != EVENT_TIME_KEY}
    if event_time is not None:
        sections[EVENT_TIME_KEY] = dict(event_time)
    kept = {topic for topic in document.topic_ids if topic in subscribed}
    ids = carried_topic_ids(document.topic_ids, kafka.topic_ids, end_state.topics() | kept)
    if end_state == current and ids == dict(document.topic_ids):
        return BatchEnd(None, result, backlog, held)  # no batch, even if clocks ticked
    return BatchEnd(SlotsDocument(end_state, sections, ids), result, backlog, held)


def _held_back(
    latest: Mapping[TopicPartition, int],
    ends: Mapping[TopicPartition, int],
    aligned: Mapping[TopicPartition, int] | None,
    final: Mapping[TopicPartition, int],
    capped_by: str,
) -> dict[TopicPartition, str]:
    """Each partition ending before its latest offset, with the first rule that held it."""
    held = {}
    # Almost always none: found in C-level passes, each then told in Python.
    for tp in compress(final, map(lt, final.values(), map(latest.__getitem__, final))):
        if ends[tp] < latest[tp]:
            held[tp] = HELD_BY_TARGET
        elif aligned is not None and aligned[tp] < ends[tp]:
            held[tp] = HELD_BY_ALIGNMENT
        else:
            held[tp] = capped_by
    return held
