"""``commitOffsetsToGroup``: publish each batch's offsets to a consumer group, for lag tools.

Only for lag tools (kafka-consumer-groups, Burrow, kcat): the checkpoint stays the only truth
for where the query resumes, so a failed commit is a warning, not an error.
"""

from __future__ import annotations

from typing import Any

from kafka_rescalable._logging import logger
from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.kafka_clients import group_committer
from kafka_rescalable.state import OffsetState

__all__ = ["GroupCommits"]


class GroupCommits:
    """Commits to the group ``commitOffsetsToGroup`` names; does nothing when it names none.

    The Kafka client is opened at the first commit and never pickled.
    """

    def __init__(self, options: KafkaSourceOptions) -> None:
        self._options = options
        self._client: Any = None
        self._committed: dict[Any, int] | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Travel to executors (with the reader) without the live client."""
        return {"_options": self._options, "_client": None, "_committed": None}

    def commit(self, state: OffsetState) -> None:
        """Publish the offsets of ``state``, unless they are the ones published last."""
        group = self._options.commit_offsets_to_group
        if group is None:
            return
        offsets = state.offsets()
        if not offsets or offsets == self._committed:
            return
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        try:
            if self._client is None:
                self._client = group_committer(self._options, group)
            self._client.commit(
                offsets=[
                    KafkaTopicPartition(tp.topic, tp.partition, o)
                    for tp, o in sorted(offsets.items())
                ],
                asynchronous=False,
            )
            self._committed = offsets
        except KafkaException as exc:
            logger.warning("could not commit offsets to consumer group %r: %s", group, exc)

    def close(self) -> None:
        """Close the client, if one was opened."""
        if self._client is not None:
            self._client.close()
            self._client = None
