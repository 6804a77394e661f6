"""The topic layout of the slots document: offsets as arrays, one per topic, with its id.

The slot layout of versions 1 and 2 writes one object per reader slot, each repeating the
names of its topics and the number of each partition as a string key. With one slot per
partition, Spark's default and ours, that is several times the size of Spark's built-in
offsets at thousands of partitions, and Spark keeps 100 of them. The topic layout (version 3
on) names each topic once and lists, per topic, its Kafka topic id and the partitions' next
offsets in partition order::

    {"version": 4, "slots": 4,
     "topics": {"orders": {"id": "b1XqV8AbT0mP3xk2Zc9yWw", "offsets": [120, 98, 133, 140, 101]},
                "audit": {"id": "Zz9Pq0", "partitions": [0, [5, 7]], "offsets": [9, 9, 9, 9],
                          "slots": [1, 3, 0, 1]}}}

- ``slots`` (top level) is the number of reader slots, empty ones included.
- ``id`` (version 4) is the topic's Kafka topic id, first in the entry; left out when it is
  not known (a topic of a version 1 checkpoint, until the next batch learns it). Version 3
  kept every id in a ``topicIds`` section of its own, which named each topic a second time:
  with many topics of few partitions that was a third of the document. Version 4's
  ``topicIds`` only holds the ids of topics without an entry here (a subscribed topic that
  has no partitions right now), and is left out when there are none.
- ``partitions`` lists the topic's partitions in increasing order, ``[first, last]`` standing
  for a run of three or more; it is left out when they are ``0 .. n-1``.
- ``offsets`` holds the next offset to read of each of those partitions, in the same order.
- ``slots`` (per topic) holds the slot of each of those partitions. It is left out when they
  are dealt round-robin: the k-th partition of the document, counting every topic in name
  order and partitions in number order, in slot ``k mod slots``. That is how the rebalancer
  fills slots on a first batch and stays while nothing moves, so the usual document names no
  slot at all.

Reading is all or nothing, as for the slot layout: every value is checked before the state is
built, and a refusal names the path of the bad value. A version 3 entry with an ``id`` is
refused: that key is version 4's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import cycle, groupby, islice
from operator import itemgetter
from typing import Any, Final

from kafka_rescalable.state._json import check_object, kind
from kafka_rescalable.state.errors import OffsetDocumentError
from kafka_rescalable.state.offset_state import OffsetState, Places, places_of, trusted_state
from kafka_rescalable.state.partitions import (
    MAX_OFFSET,
    MAX_PARTITION,
    PartitionOffset,
    trusted_partition_offset,
)

__all__ = ["TOPICS_KEY", "read_topic_layout", "topic_layout"]

TOPICS_KEY: Final = "topics"
"""The section of the topic layout that holds every topic's partitions and offsets."""

_ID: Final = "id"
_PARTITIONS: Final = "partitions"
_OFFSETS: Final = "offsets"
_SLOTS: Final = "slots"
_TOPIC_KEYS: Final = (_ID, _PARTITIONS, _OFFSETS, _SLOTS)
_first, _second = itemgetter(0), itemgetter(1)


def topic_layout(state: OffsetState, ids: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Return the ``topics`` section of ``state``: per topic, its id, offsets and slots.

    Topics come in name order, the keys of each in the order ``id``, ``partitions``,
    ``offsets``, ``slots``, so the same state and ids always give the same JSON. ``ids`` maps
    topics to their Kafka ids; a topic it does not name gets no ``id`` (ids of topics without
    partitions are the caller's to write elsewhere).
    """
    ids = ids or {}
    count = state.num_slots
    where = places_of(state)
    topics: dict[str, Any] = {}
    dealt = 0  # partitions of the document before this topic: the round-robin position
    # Per topic, C-level passes (map, islice over a cycle) rather than a Python loop per
    # partition: a document of 10,000 partitions is written every batch.
    for topic, grouped in groupby(sorted(where), key=_first):
        keys = list(grouped)
        numbers = list(map(_second, keys))
        places = list(map(where.__getitem__, keys))
        entry: dict[str, Any] = {}
        if topic in ids:
            entry[_ID] = ids[topic]
        if numbers[-1] != len(numbers) - 1:  # distinct, sorted, >= 0: dense iff it ends at n-1
            entry[_PARTITIONS] = _runs(numbers)
        entry[_OFFSETS] = list(map(_second, places))
        owners = list(map(_first, places))
        dealt_to = islice(cycle(range(count)), dealt % count, dealt % count + len(owners))
        if owners != list(dealt_to):
            entry[_SLOTS] = owners
        dealt += len(numbers)
        topics[topic] = entry
    return topics


def _runs(numbers: list[int]) -> list[int | list[int]]:
    """Write sorted partition numbers with ``[first, last]`` for runs of three or more.

    A run of two is shorter as two numbers; from three on the pair is never longer.
    """
    runs: list[int | list[int]] = []
    start = 0
    for index in range(1, len(numbers) + 1):
        if index == len(numbers) or numbers[index] != numbers[index - 1] + 1:
            if index - start >= 3:
                runs.append([numbers[start], numbers[index - 1]])
            else:
                runs.extend(numbers[start:index])
            start = index
    return runs


def read_topic_layout(
    count: object, topics: object, *, with_ids: bool
) -> tuple[OffsetState, dict[str, str]]:
    """Check a topic layout's slot count and ``topics`` section; build its state and ids.

    Parameters
    ----------
    count : object
        The document's ``slots``: the number of reader slots.
    topics : object
        The document's ``topics`` section.
    with_ids : bool
        Whether an entry may carry its topic's ``id`` (version 4); refused when not.

    Returns
    -------
    tuple of OffsetState and dict
        The state, and the ids the entries carry, by topic.

    Raises
    ------
    OffsetDocumentError
        When a value has the wrong type or range, the arrays of a topic differ in length, a
        partition is listed twice or out of order, a slot number is not below the count, or
        an id is not a non-empty string (or is there in version 3). The message starts with
        the path of the bad value.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        msg = f"must be the number of reader slots, an integer >= 0, got {kind(count)}"
        raise OffsetDocumentError(msg, _SLOTS)
    check_object(topics, TOPICS_KEY, "an object mapping each topic to its offsets", "topic")
    if topics and count == 0:
        msg = "is 0, but the document lists partitions: every partition belongs to a slot"
        raise OffsetDocumentError(msg, _SLOTS)
    slots: list[list[PartitionOffset]] = [[] for _ in range(count)]
    where: Places = {}
    ids: dict[str, str] = {}
    dealt = 0
    # Name order, whatever the order of the keys: the round-robin position depends on it.
    for topic in sorted(topics):
        entry = topics[topic]
        numbers, offsets, owners = _read_topic(topic, entry, count)
        if _ID in entry:
            ids[topic] = _read_id(entry[_ID], f"{TOPICS_KEY}[{topic!r}][{_ID!r}]", with_ids)
        if owners is None:
            owners = [(dealt + k) % count for k in range(len(numbers))]
        dealt += len(numbers)
        for number, offset, slot in zip(numbers, offsets, owners, strict=True):
            slots[slot].append(trusted_partition_offset(topic, number, offset))
            where[(topic, number)] = (slot, offset)
    # Topics in name order and partitions in number order: every slot is sorted already.
    return trusted_state(tuple(map(tuple, slots)), where), ids


def _read_id(value: object, path: str, with_ids: bool) -> str:
    """Check an entry's ``id``: a non-empty string, and only in a version 4 document."""
    if not with_ids:
        msg = (
            f"'{_ID}' is a key of version 4 documents; a version 3 document keeps its topic ids "
            "in 'topicIds'"
        )
        raise OffsetDocumentError(msg, path)
    if not isinstance(value, str) or not value:
        raise OffsetDocumentError(f"a topic id must be a non-empty string, got {kind(value)}", path)
    return value


def _read_topic(
    topic: object, entry: object, count: int
) -> tuple[Sequence[int], list[int], list[int] | None]:
    """Check one topic's entry: its partition numbers, offsets, and slots when listed."""
    here = f"{TOPICS_KEY}[{topic!r}]"
    if not isinstance(topic, str) or not topic:
        msg = f"topic names must be non-empty strings, got {topic!r}"
        raise OffsetDocumentError(msg, TOPICS_KEY)
    must_be = f"an object with '{_OFFSETS}' (and maybe '{_ID}', '{_PARTITIONS}', '{_SLOTS}')"
    check_object(entry, here, must_be, "key")
    unknown = sorted(set(entry) - set(_TOPIC_KEYS), key=str)
    if unknown:
        known = ", ".join(f"'{key}'" for key in _TOPIC_KEYS)
        msg = f"unknown key {unknown[0]!r}; a topic has {known}"
        raise OffsetDocumentError(msg, here)
    if _OFFSETS not in entry:
        raise OffsetDocumentError(f"'{_OFFSETS}' is missing", here)
    offsets = _int_array(entry[_OFFSETS], f"{here}[{_OFFSETS!r}]", MAX_OFFSET, "offset")
    if not offsets:
        msg = "is empty: a topic is listed only with at least one partition"
        raise OffsetDocumentError(msg, f"{here}[{_OFFSETS!r}]")
    if _PARTITIONS in entry:
        numbers: Sequence[int] = _read_partitions(
            entry[_PARTITIONS], f"{here}[{_PARTITIONS!r}]", len(offsets)
        )
    else:
        numbers = range(len(offsets))
    if len(numbers) != len(offsets):
        msg = (
            f"lists {len(offsets)} offsets for {len(numbers)} partitions; there is one offset "
            "per partition, in partition order"
        )
        raise OffsetDocumentError(msg, f"{here}[{_OFFSETS!r}]")
    owners = None
    if _SLOTS in entry:
        owners = _int_array(entry[_SLOTS], f"{here}[{_SLOTS!r}]", count - 1, "slot")
        if len(owners) != len(offsets):
            msg = f"lists {len(owners)} slots for {len(offsets)} partitions; one per partition"
            raise OffsetDocumentError(msg, f"{here}[{_SLOTS!r}]")
    return numbers, offsets, owners


def _int_array(value: object, path: str, highest: int, what: str) -> list[int]:
    """Check an array of integers in ``0 .. highest``; one pass in C when all are fine."""
    if type(value) is not list:
        raise OffsetDocumentError(f"must be an array of integers, got {kind(value)}", path)
    if not value or (set(map(type, value)) == {int} and min(value) >= 0 and max(value) <= highest):
        return value
    for index, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int):
            msg = f"{what} must be an integer, got {kind(item)}"
            raise OffsetDocumentError(msg, f"{path}[{index}]")
        if not 0 <= item <= highest:
            msg = _out_of_range(what, item, highest)
            raise OffsetDocumentError(msg, f"{path}[{index}]")
    return value  # not reached: some item failed the fast check


def _out_of_range(what: str, item: int, highest: int) -> str:
    if what == "slot":
        return f"slot {item} does not exist: the document has {highest + 1} slots (0 .. {highest})"
    if item < 0:
        return (
            f"offset must be >= 0 (the next offset to read), got {item}; symbolic offsets "
            "such as -2 (earliest) or -1 (latest) are never checkpointed"
        )
    return f"offset must be <= {highest} (Kafka's limit), got {item}"


def _read_partitions(value: object, path: str, expected: int) -> list[int]:
    """Expand partition numbers and ``[first, last]`` runs, checking they only increase.

    More than ``expected`` partitions (the number of offsets) are refused before a run is
    expanded, so a run such as ``[0, 2147483646]`` costs nothing to refuse.
    """
    if type(value) is not list:
        msg = f"must be an array of partition numbers and [first, last] runs, got {kind(value)}"
        raise OffsetDocumentError(msg, path)
    numbers: list[int] = []
    for index, item in enumerate(value):
        here = f"{path}[{index}]"
        if type(item) is list:
            if len(item) != 2 or not all(_is_partition(bound) for bound in item):
                msg = f"a run must be [first, last], two partition numbers, got {item!r}"
                raise OffsetDocumentError(msg, here)
            first, last = item
            if first >= last:
                msg = f"a run [first, last] needs first < last, got {item!r}"
                raise OffsetDocumentError(msg, here)
        elif _is_partition(item):
            first = last = item
        else:
            msg = (
                f"must be a partition number (0 .. {MAX_PARTITION}) or a run [first, last], "
                f"got {kind(item)}"
            )
            raise OffsetDocumentError(msg, here)
        if numbers and first <= numbers[-1]:
            msg = (
                f"partition {first} comes after {numbers[-1]}: partitions are listed once "
                "each, in increasing order"
            )
            raise OffsetDocumentError(msg, here)
        if len(numbers) + last - first + 1 > expected:
            msg = (
                f"lists more partitions than the {expected} offsets; there is one offset per "
                "partition, in partition order"
            )
            raise OffsetDocumentError(msg, path)
        numbers.extend(range(first, last + 1))
    if not numbers:
        raise OffsetDocumentError("is empty: a topic is listed with its partitions", path)
    return numbers


def _is_partition(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_PARTITION
