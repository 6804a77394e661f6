"""Where a query that starts from a consumer group's committed offsets starts each partition.

``startingOffsetsFromGroup`` lets a team move a consumer-group application to this source
without reading again what the application already read, as Flink's ``KafkaSource`` starts
from committed offsets. The rules, decided here from plain values:

- a partition the group has committed an offset for starts there; ``startingOffsets`` (or the
  timestamp options) has no say over it, even when its JSON names the partition;
- a partition without a committed offset starts where ``startingOffsets`` says
  (:attr:`GroupStart.fallback`);
- a committed offset below the partition's earliest offset points at records retention has
  deleted: data loss, fatal under ``failOnDataLoss``, else the partition starts at its
  earliest offset;
- a committed offset above the partition's latest offset cannot come from this topic as it is
  now: it was deleted and re-created since the group committed, or the offsets were committed
  on another cluster. Starting at the end would skip every record of the new topic without a
  word, so this is data loss too, and under ``failOnDataLoss=false`` the partition starts at
  its earliest offset, as a re-created topic does in a checkpointed query.

The group is read once, when a query starts without a checkpoint; afterwards the checkpoint
is the only truth, whatever the group does.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from kafka_rescalable.state.batch_boundary import DataLoss
from kafka_rescalable.state.partitions import TopicPartition, describe_partitions

__all__ = ["GroupStart", "start_from_group"]


@dataclass(frozen=True)
class GroupStart:
    """The starting offsets a consumer group gives, and the partitions it leaves to others.

    Parameters
    ----------
    group : str
        The consumer group id.
    placed : Mapping[TopicPartition, int]
        Where each partition with a usable committed offset starts (out-of-range ones
        already moved to their earliest offset when that is allowed).
    fallback : frozenset of TopicPartition
        The partitions the group has no committed offset for: ``startingOffsets`` decides.
    losses : tuple of DataLoss
        Committed offsets out of the partitions' range; the first fatal one stops the query.
    """

    group: str
    placed: Mapping[TopicPartition, int]
    fallback: frozenset[TopicPartition]
    losses: tuple[DataLoss, ...] = ()

    def merged(self, fallback_offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Return every partition's start: the group's where it has one, else the fallback's.

        A fallback value for a partition the group placed is not used.

        Raises
        ------
        ValueError
            When ``fallback_offsets`` misses a partition of :attr:`fallback`.
        """
        missing = self.fallback - fallback_offsets.keys()
        if missing:
            msg = f"no fallback offset for {describe_partitions(missing)}"
            raise ValueError(msg)
        return {**{tp: fallback_offsets[tp] for tp in self.fallback}, **self.placed}


def start_from_group(
    group: str,
    live: Collection[TopicPartition],
    committed: Mapping[TopicPartition, int],
    earliest: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    *,
    fail_on_data_loss: bool,
) -> GroupStart:
    """Decide where each of the ``live`` partitions starts from ``group``'s committed offsets.

    Parameters
    ----------
    group
        The consumer group id, for the messages.
    live
        The partitions of the subscription that exist.
    committed
        The group's committed offset of each partition that has one (others left out);
        partitions not in ``live`` are ignored.
    earliest, latest
        The first offset still present and the end of at least every committed partition.
    fail_on_data_loss
        Whether an offset out of range is fatal (see the module's rules).
    """
    live_set = frozenset(live)
    placed = {tp: at for tp, at in committed.items() if tp in live_set}
    below = sorted(tp for tp, at in placed.items() if at < earliest[tp])
    above = sorted(tp for tp, at in placed.items() if at > latest[tp])
    losses = []
    if below:
        shown = "; ".join(
            f"{tp}: committed offset {placed[tp]}, but its records start at {earliest[tp]} now"
            for tp in below
        )
        losses.append(
            _loss(
                f"consumer group '{group}' ('startingOffsetsFromGroup') committed offsets whose "
                f"records are gone: {shown}. Retention (or a deletion of records) removed them "
                "before the group read them",
                group,
                below,
                fail_on_data_loss,
            )
        )
    if above:
        shown = "; ".join(
            f"{tp}: committed offset {placed[tp]}, but the partition ends at {latest[tp]}"
            for tp in above
        )
        losses.append(
            _loss(
                f"consumer group '{group}' ('startingOffsetsFromGroup') committed offsets past "
                f"the end of their partitions: {shown}. The topic was probably deleted and "
                "re-created since the group committed (or the offsets were committed on "
                "another cluster), so they do not say what of this topic was read; starting "
                "at the end would skip its records",
                group,
                above,
                fail_on_data_loss,
            )
        )
    for tp in (*below, *above):
        placed[tp] = earliest[tp]
    return GroupStart(group, placed, live_set - placed.keys(), tuple(losses))


def _loss(
    message: str, group: str, partitions: list[TopicPartition], fail_on_data_loss: bool
) -> DataLoss:
    if not fail_on_data_loss:
        return DataLoss(
            f"{message}; starting {describe_partitions(partitions)} at their earliest offset "
            "because failOnDataLoss is false",
            fatal=False,
        )
    by_topic: dict[str, list[str]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(str(tp.partition))
    topics = " ".join(f"--topic {topic}:{','.join(ps)}" for topic, ps in by_topic.items())
    return DataLoss(
        f"{message}. Set 'failOnDataLoss' to false to start these partitions at their earliest "
        "offset, or move the group's offsets first (kafka-consumer-groups --bootstrap-server "
        f"<brokers> --group {group} --reset-offsets --to-earliest {topics} --execute)",
        fatal=True,
    )
