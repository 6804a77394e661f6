"""Topic identity across batches: telling a topic from a re-created one of the same name.

Kafka gives every topic an id when it is created. A topic deleted and created again under the
same name (by a person, or by a deployment that re-creates it) gets a new id and starts its
offsets from zero. Its name and partition numbers are unchanged, so offsets alone cannot tell:
once the new topic holds more records than the checkpointed offset, the old position looks
valid and the new topic's first records would be skipped without a word. Comparing the ids
kept in the offset document with the ids Kafka reports now always tells.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

__all__ = ["carried_topic_ids", "recreated_topics"]


def recreated_topics(checkpointed: Mapping[str, str], live: Mapping[str, str]) -> tuple[str, ...]:
    """Return, sorted, the topics whose id now differs from the id checkpointed with them.

    A topic missing from either side is not called re-created: without an id in the
    checkpoint (a document written before ids were kept) there is nothing to compare, and a
    topic without a live id is gone, which the caller reports as removed.
    """
    return tuple(
        sorted(
            topic
            for topic, topic_id in live.items()
            if topic in checkpointed and checkpointed[topic] != topic_id
        )
    )


def carried_topic_ids(
    checkpointed: Mapping[str, str], live: Mapping[str, str], topics: Collection[str]
) -> dict[str, str]:
    """Return the ids to checkpoint for ``topics``: Kafka's id now, else the one kept before.

    Keeping the old id of a topic whose lookup gave none this time (it was deleted between
    listing and describing, say) means the next batch still compares against the topic the
    offsets came from, instead of learning a new topic's id as if it were the old one.
    """
    ids = {}
    for topic in topics:
        topic_id = live.get(topic) or checkpointed.get(topic)
        if topic_id:
            ids[topic] = topic_id
    return ids
