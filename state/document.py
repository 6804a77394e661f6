"""The slots document: the JSON Spark keeps in its checkpoint offset log for this source.

The module is long because every refusal of a checkpointed document names the path of the bad
value and says what to do, and every version of the format is read here.

Version 4, like version 3, has two layouts and the writer takes the shorter, so a document is
never longer than version 2 would be. The *topic layout* (``kafka_rescalable.state.topic_layout``)
names each
topic once, with its Kafka topic id and its offsets in an array, and is what thousands of
partitions get::

    {"version": 4, "slots": 1000,
     "topics": {"<topic>": {"id": "<Kafka topic id>", "offsets": [<next offset>, ...]}}}

The *slot layout*, version 2's, is one object per reader slot, each in Spark's own per-topic
form (partition keys are decimal strings), so a person who knows Spark's Kafka checkpoints can
read ours; a small state is often shorter this way::

    {"version": 4, "slots": [{"<topic>": {"<partition>": <next offset>}}, ...],
     "topicIds": {"<topic>": "<Kafka topic id>"}}

``slots`` tells them apart: the number of slots in the topic layout, their array in the slot
layout. Kafka's topic id of each topic the offsets belong to is kept: a topic deleted and
re-created under the same name gets a new id, which is how a re-creation between two batches
is always noticed, even when the new topic already holds more records than the checkpointed
offset. The slot layout keeps every id in ``topicIds``; the topic layout keeps each in its
topic's entry, and in ``topicIds`` only the ids of topics that have no entry (a subscribed
topic without partitions right now), leaving ``topicIds`` out when there are none. The writer
counts the ids where each layout puts them when it compares the two.

Older versions are still read, as they were written. Version 3 is version 4 with every id in
``topicIds``, in both layouts (an ``id`` in a version 3 topic entry is refused). Version 2 is
the slot layout alone. Version 1, written before topic ids were kept, is version 2 without
``topicIds``; its topics' ids are then learned at the next batch. Other top-level sections
(an event-time section, say) may sit beside ``slots``; they are kept as they are, so a
connector that adds one does not need a new version of this reader to round-trip them.

Reading is all or nothing: a document is fully checked before any value is built, and a bad
one is rejected with an :class:`OffsetDocumentError` that says what is wrong and where.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from types import MappingProxyType
from typing import Any, Final

from kafka_rescalable.state._json import JSON_OBJECTS as _JSON_OBJECTS
from kafka_rescalable.state._json import JsonObject as _JsonObject
from kafka_rescalable.state._json import check_object as _check_object
from kafka_rescalable.state._json import kind as _kind
from kafka_rescalable.state._json import no_constant as _no_constant
from kafka_rescalable.state._json import repeated as _repeated
from kafka_rescalable.state.errors import ForeignCheckpointError, OffsetDocumentError
from kafka_rescalable.state.offset_state import OffsetState, Places, sorted_slot, trusted_state
from kafka_rescalable.state.partitions import (
    MAX_OFFSET,
    MAX_PARTITION,
    PartitionOffset,
    TopicPartition,
    trusted_partition_offset,
)
from kafka_rescalable.state.topic_layout import TOPICS_KEY, read_topic_layout, topic_layout

__all__ = ["SLOTS_DOCUMENT_VERSION", "SUPPORTED_VERSIONS", "TOPICS_KEY", "SlotsDocument"]

SLOTS_DOCUMENT_VERSION: Final = 4
"""The version :meth:`SlotsDocument.to_dict` writes."""

SUPPORTED_VERSIONS: Final = frozenset({1, 2, 3, 4})
"""The versions :meth:`SlotsDocument.from_dict` reads."""

TOPIC_IDS_KEY: Final = "topicIds"
"""The section that maps topics to their Kafka topic ids (from version 2 on).

Every topic's id in versions 2 and 3 and in version 4's slot layout; in version 4's topic
layout only the ids of topics without an entry in ``topics``, the others being in the entries.
"""

# Never extras. Read in the versions that have them (topicIds from 2, topics from 3), dropped
# from older ones, which no connector wrote them in: they are not carried forward.
_offset_of = attrgetter("offset")
_partition_of = attrgetter("partition")
_RESERVED: Final = frozenset({"version", "slots", TOPIC_IDS_KEY, TOPICS_KEY})
# Canonical decimal only: "01" or "+1" would name partition 1 a second way, and str.isdigit
# accepts non-ASCII digits.
_PARTITION_KEY: Final = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class SlotsDocument:
    """A slots document: the offset state plus any other top-level sections, kept verbatim.

    Parameters
    ----------
    state : OffsetState
        The per-slot sub-states.
    extras : Mapping[str, Any]
        Top-level sections other than ``version``, ``slots`` and ``topicIds``, as JSON
        values. They are copied (through JSON, so tuples become lists) and exposed read-only,
        so the document stays a value.
    topic_ids : Mapping[str, str]
        Kafka's topic id of each topic, where known (base64, as Kafka's tools print it).

    Raises
    ------
    TypeError
        When ``state`` is not an :class:`OffsetState` or an extra is not JSON-serializable.
    ValueError
        When an extra's key is not a string or is ``version`` or ``slots``.
    """

    state: OffsetState
    extras: Mapping[str, Any] = field(default_factory=dict)
    topic_ids: Mapping[str, str] = field(default_factory=dict)
    # Whether the topic layout is the shorter, decided on first write; derived, like a cache.
    _by_topic: bool | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Copy the extras through JSON, so the document is a value no caller can change."""
        ids = dict(self.topic_ids)
        for topic, topic_id in ids.items():
            if not isinstance(topic, str) or not isinstance(topic_id, str) or not topic_id:
                msg = f"topic_ids: expected topic name -> non-empty id, got {topic!r}: {topic_id!r}"
                raise TypeError(msg)
        object.__setattr__(self, "topic_ids", MappingProxyType(ids))
        if not isinstance(self.state, OffsetState):
            msg = f"state: must be an OffsetState, got {type(self.state).__name__}"
            raise TypeError(msg)
        extras = dict(self.extras)
        for key in extras:
            if not isinstance(key, str):
                msg = f"extras: keys must be strings, got {type(key).__name__} {key!r}"
                raise ValueError(msg)
            if key in _RESERVED:
                msg = f"extras: {key!r} is reserved for the slots document itself"
                raise ValueError(msg)
        try:
            copied = json.loads(json.dumps(extras, allow_nan=False))
        except (TypeError, ValueError) as error:
            msg = f"extras: must hold JSON values only ({error})"
            raise TypeError(msg) from error
        object.__setattr__(self, "extras", MappingProxyType(copied))

    def to_dict(self) -> dict[str, Any]:
        """Return the document as plain, fresh dicts and lists, ready for ``json.dumps``.

        Keys come in a fixed order (``version``, ``slots``, ``topics`` in the topic layout,
        ``topicIds`` when it holds any id, then the extras sorted by key; topics sorted, each
        entry's ``id`` first; partitions in numeric order, not string order) so the JSON is
        stable without ``sort_keys``, which would put partition "10" before "2". The layout is
        the shorter of the two (see the module), ids included, in Spark's spacing
        (``json.dumps`` defaults, as Spark writes the offset log) and in :meth:`to_json`'s;
        the topic layout on a tie. The same state and ids always take the same.
        """
        document: dict[str, Any] = {"version": SLOTS_DOCUMENT_VERSION, **self._layout()}
        for key in sorted(self.extras):
            document[key] = _sorted_json(self.extras[key])
        return document

    def _layout(self) -> dict[str, Any]:
        """``slots``, ``topics`` and ``topicIds`` in the shorter layout, fresh dicts and lists."""
        if self._by_topic is None:
            by_topic = self._by_topic_sections()
            if _surely_shorter(by_topic, self.state, self.topic_ids):
                shorter, by_slot = True, None
            else:
                by_slot = self._by_slot_sections()
                shorter = _never_longer(by_topic, by_slot)
            object.__setattr__(self, "_by_topic", shorter)
            return by_topic if shorter else by_slot
        return self._by_topic_sections() if self._by_topic else self._by_slot_sections()

    def _by_topic_sections(self) -> dict[str, Any]:
        """Return the topic layout: ids in the entries, ``topicIds`` for topics without one."""
        ids = self.topic_ids
        topics = topic_layout(self.state, ids)
        sections: dict[str, Any] = {"slots": self.state.num_slots, TOPICS_KEY: topics}
        others = {topic: ids[topic] for topic in sorted(ids) if topic not in topics}
        if others:
            sections[TOPIC_IDS_KEY] = others
        return sections

    def _by_slot_sections(self) -> dict[str, Any]:
        """Return the slot layout, with every id in ``topicIds``."""
        sections: dict[str, Any] = {"slots": _slot_layout(self.state)}
        if self.topic_ids:
            sections[TOPIC_IDS_KEY] = _all_ids(self.topic_ids)
        return sections

    def to_json(self) -> str:
        """Return compact JSON: the same document always gives the same characters."""
        return json.dumps(self.to_dict(), separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> SlotsDocument:
        """Parse and check a document; see :meth:`from_dict`.

        Duplicate keys, which ``json.loads`` would silently resolve to the last one, are
        rejected, as are ``NaN`` and ``Infinity``.

        Raises
        ------
        OffsetDocumentError
            When the text is not JSON or the document is not a valid slots document.
        """
        try:
            data = json.loads(text, object_pairs_hook=_JsonObject, parse_constant=_no_constant)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise OffsetDocumentError(f"not valid JSON ({error})") from error
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SlotsDocument:
        """Check a parsed document and build it; nothing is returned unless all of it is valid.

        Raises
        ------
        ForeignCheckpointError
            When the document has neither ``version`` nor ``slots``: it was written by another
            source, typically Spark's built-in Kafka source.
        OffsetDocumentError
            When the version is unknown, ``slots`` is missing, a value has the wrong type
            (``true`` is not an offset), a partition key is not a canonical non-negative
            integer, an offset is negative, or a partition is listed twice. The message starts
            with the path of the bad value.
        """
        if not isinstance(data, Mapping):
            msg = (
                f"the offset document must be a JSON object, got {_kind(data)}; it was not "
                "written by this connector"
            )
            raise OffsetDocumentError(msg)
        if _repeated(data):
            raise OffsetDocumentError(f"top-level key {_repeated(data)[0]!r} is listed twice")
        if "version" not in data:
            if "slots" in data:
                msg = f"'version' is missing; supported versions: {_versions()}"
                raise OffsetDocumentError(msg)
            raise _foreign(data)
        version = data["version"]
        if isinstance(version, bool) or not isinstance(version, int):
            msg = f"must be an integer, got {_kind(version)}"
            raise OffsetDocumentError(msg, "version")
        if version not in SUPPORTED_VERSIONS:
            msg = (
                f"unsupported version {version}; this connector reads {_versions()}. A newer "
                "connector may have written this checkpoint"
            )
            raise OffsetDocumentError(msg, "version")
        if "slots" not in data:
            msg = f"'slots' is missing: a version {version} document lists its slots"
            raise OffsetDocumentError(msg)
        state, in_entries = _read_layout(version, data)
        extras = {key: value for key, value in data.items() if key not in _RESERVED}
        for key, value in extras.items():
            _check_no_duplicates(value, key)
        topic_ids = _read_topic_ids(data.get(TOPIC_IDS_KEY, {})) if version >= 2 else {}
        for topic in sorted(in_entries.keys() & topic_ids.keys()):
            msg = (
                f"the id of topic {topic!r} is given twice, here and in "
                f"{TOPICS_KEY}[{topic!r}]['id']; in version {version}, {TOPIC_IDS_KEY!r} only "
                f"holds the ids of topics that have no entry in {TOPICS_KEY!r}"
            )
            raise OffsetDocumentError(msg, f"{TOPIC_IDS_KEY}[{topic!r}]")
        return cls(state, extras, {**topic_ids, **in_entries})


def _slot_layout(state: OffsetState) -> list[dict[str, dict[str, int]]]:
    """One object per slot, ``{"<topic>": {"<partition>": <offset>}}``: versions 1 and 2."""
    slots = []
    for slot in state.slots:
        topics: dict[str, dict[str, int]] = {}
        for sub in slot:  # sorted by (topic, partition) already
            topics.setdefault(sub.topic, {})[str(sub.partition)] = sub.offset
        slots.append(topics)
    return slots


def _all_ids(ids: Mapping[str, str]) -> dict[str, str]:
    return {topic: ids[topic] for topic in sorted(ids)}


def _surely_shorter(by_topic: dict[str, Any], state: OffsetState, ids: Mapping[str, str]) -> bool:
    """Whether ``by_topic`` is shorter than any slot layout of ``state`` and ``ids`` could be.

    Building and writing the slot layout costs as much as the topic layout, tens of
    milliseconds at 10,000 partitions, while the slot layout holds at least, per partition,
    ``"<partition>":<offset>`` and one comma or bracket, and in Spark's spacing one space
    after that colon and after all but one of those commas; and, after its slots, every id
    in ``topicIds``, which is small and written here in full. Counting those digits is cheap;
    when the topic layout is shorter than that bound, the slot layout need not be made.
    """
    subs = list(chain.from_iterable(state.slots))
    least = len("".join(map(str, map(_offset_of, subs)))) + len(
        "".join(map(str, map(_partition_of, subs)))
    )
    least += 4 * len(subs)  # two quotes, a colon, a comma or bracket
    spaced = least + 2 * len(subs) - 1
    if ids:
        # ', "topicIds": {...}' in Spark's spacing: the length of '{"topicIds": {...}}'.
        section = {TOPIC_IDS_KEY: _all_ids(ids)}
        spaced += len(json.dumps(section))
        least += len(json.dumps(section, separators=(",", ":"))) - 1
    compact = len(json.dumps(by_topic, separators=(",", ":")))
    return compact <= least and len(json.dumps(by_topic)) <= spaced


def _never_longer(by_topic: dict[str, Any], by_slot: dict[str, Any]) -> bool:
    """Whether ``by_topic`` is no longer than ``by_slot`` in either spacing.

    The rest of the document is the same in both layouts, so the sections alone decide: each
    section, ``topicIds`` included, costs the same in the document as in these dicts, plus
    one separator.
    """
    return len(json.dumps(by_topic)) <= len(json.dumps(by_slot)) and len(
        json.dumps(by_topic, separators=(",", ":"))
    ) <= len(json.dumps(by_slot, separators=(",", ":")))


def _read_layout(version: int, data: Mapping[str, Any]) -> tuple[OffsetState, dict[str, str]]:
    """Read the state in the document's layout, and the ids its topic entries carry.

    An array of slots (versions 1 and 2, and the slot layout of 3 and 4), or a count and
    topics; ids in the entries from version 4 on.
    """
    slots = data["slots"]
    if version < 3 or isinstance(slots, Sequence) and not isinstance(slots, str | bytes):
        if version >= 3 and TOPICS_KEY in data:
            msg = (
                f"{TOPICS_KEY!r} goes with a slot count in 'slots'; this document lists its "
                "slots as an array, which holds the offsets already"
            )
            raise OffsetDocumentError(msg)
        return _read_slots(slots), {}
    if isinstance(slots, bool) or not isinstance(slots, int):
        msg = (
            "must be the number of reader slots (with a 'topics' section) or an array with "
            f"one object per reader slot, got {_kind(slots)}"
        )
        raise OffsetDocumentError(msg, "slots")
    if TOPICS_KEY not in data:
        msg = f"{TOPICS_KEY!r} is missing: 'slots' is a count, so the offsets are listed by topic"
        raise OffsetDocumentError(msg)
    return read_topic_layout(slots, data[TOPICS_KEY], with_ids=version >= 4)


def _read_topic_ids(section: object) -> dict[str, str]:
    _check_object(section, TOPIC_IDS_KEY, "an object mapping topic name to Kafka topic id", "topic")
    for topic, topic_id in section.items():
        if not isinstance(topic_id, str) or not topic_id:
            msg = f"a topic id must be a non-empty string, got {_kind(topic_id)}"
            raise OffsetDocumentError(msg, f"{TOPIC_IDS_KEY}[{topic!r}]")
    return dict(section)


def _read_slots(slots: object) -> OffsetState:
    if not isinstance(slots, Sequence) or isinstance(slots, str | bytes):
        msg = f"must be an array with one object per reader slot, got {_kind(slots)}"
        raise OffsetDocumentError(msg, "slots")
    # Every partition read so far: its slot (to name where it was first seen) and offset,
    # which is also the index the OffsetState would otherwise build again.
    where: Places = {}
    result = []
    # Paths are only built for messages: a slot often holds one partition, and formatting
    # them would cost more than reading it.
    for index, slot in enumerate(slots):
        if type(slot) not in _JSON_OBJECTS or _repeated(slot):  # one test in the common case
            must_be = "an object mapping topic to partition offsets"
            _check_object(slot, _path(index), must_be, "topic", " in this slot")
        sub_states = []
        for topic, partitions in slot.items():
            if not isinstance(topic, str) or not topic:
                msg = f"topic names must be non-empty strings, got {topic!r}"
                raise OffsetDocumentError(msg, _path(index))
            if type(partitions) not in _JSON_OBJECTS or _repeated(partitions):
                must_be = "an object mapping partition to offset"
                _check_object(partitions, _path(index, topic), must_be, "partition")
            for key, offset in partitions.items():
                if (
                    type(key) is str
                    and _PARTITION_KEY.fullmatch(key)
                    and type(offset) is int
                    and 0 <= offset <= MAX_OFFSET
                    and (partition := int(key)) <= MAX_PARTITION
                ):
                    # Every field checked just here: no need to check them all again.
                    sub_state = trusted_partition_offset(topic, partition, offset)
                else:
                    sub_state = _read_sub_state(topic, key, offset, _path(index, topic, key))
                place = (topic, sub_state.partition)
                if place in where:
                    first = _path(where[place][0], topic, key)
                    msg = f"partition {sub_state.topic_partition} is listed twice, first at {first}"
                    raise OffsetDocumentError(msg, _path(index, topic, key))
                where[place] = (index, sub_state.offset)
                sub_states.append(sub_state)
        result.append(sorted_slot(sub_states))
    return trusted_state(tuple(result), where)


def _path(index: int, *keys: object) -> str:
    """Where a value is in the document, such as ``slots[2]['orders']['7']``."""
    return f"slots[{index}]" + "".join(f"[{key!r}]" for key in keys)


def _read_sub_state(topic: str, key: object, offset: object, path: str) -> PartitionOffset:
    if not isinstance(key, str) or not _PARTITION_KEY.fullmatch(key):
        msg = (
            "partition must be a non-negative integer string in canonical form, such as '0' or '12'"
        )
        raise OffsetDocumentError(msg, path)
    partition = int(key)
    if partition > MAX_PARTITION:
        msg = f"partition must be <= {MAX_PARTITION} (Kafka's limit), got {partition}"
        raise OffsetDocumentError(msg, path)
    if isinstance(offset, bool) or not isinstance(offset, int):
        msg = f"offset must be an integer (the next offset to read), got {_kind(offset)}"
        raise OffsetDocumentError(msg, path)
    if offset < 0:
        msg = (
            f"offset must be >= 0 (the next offset to read), got {offset}; symbolic offsets "
            "such as -2 (earliest) or -1 (latest) are never checkpointed"
        )
        raise OffsetDocumentError(msg, path)
    if offset > MAX_OFFSET:
        msg = f"offset must be <= {MAX_OFFSET} (Kafka's limit), got {offset}"
        raise OffsetDocumentError(msg, path)
    return PartitionOffset(topic, partition, offset)


def _foreign(data: Mapping[str, Any]) -> ForeignCheckpointError:
    """Explain a document this connector did not write, with the way forward."""
    offsets = _spark_kafka_offsets(data)
    if offsets is not None:
        starting = json.dumps(
            {
                topic: {str(p): o for p, o in partitions.items()}
                for topic, partitions in data.items()
            },
            separators=(",", ":"),
        )
        msg = (
            "this checkpoint offset was written by Spark's built-in Kafka source (or another "
            "source): it maps topics to partition offsets and has no 'version', while this "
            "connector checkpoints offsets per reader slot, so it cannot resume this "
            "checkpoint. Start the query with a new checkpoint directory; to continue where "
            "the other query stopped, with no record lost or read twice, set the option "
            "startingOffsets to what 'kafka-rescalable-inspect <checkpoint> --starting-offsets' "
            "prints: the end of its last committed batch (this offset may be the end of a batch "
            "that was never committed)"
        )
        return ForeignCheckpointError(msg, starting, offsets)
    keys = ", ".join(repr(key) for key in sorted(map(str, data))) or "none"
    msg = (
        "this checkpoint offset has no 'version' and no 'slots' (top-level keys: "
        f"{keys}): it was not written by this connector but by another source, such as "
        "Spark's built-in Kafka source, and cannot be resumed by this connector. Start the "
        "query with a new checkpoint directory"
    )
    return ForeignCheckpointError(msg)


def _spark_kafka_offsets(data: Mapping[str, Any]) -> dict[TopicPartition, int] | None:
    """Read Spark's built-in Kafka offsets, ``{"<topic>": {"<partition>": <next offset>}}``.

    ``None`` when ``data`` is anything else: a key that is no partition number, an offset
    Kafka cannot hold, a topic without partitions.
    """
    offsets = {}
    for topic, partitions in data.items():
        if not isinstance(topic, str) or not topic or not isinstance(partitions, Mapping):
            return None
        if not partitions:
            return None
        for key, offset in partitions.items():
            if not isinstance(key, str) or not _PARTITION_KEY.fullmatch(key):
                return None
            if isinstance(offset, bool) or not isinstance(offset, int):
                return None
            if int(key) > MAX_PARTITION or not 0 <= offset <= MAX_OFFSET:
                return None
            offsets[TopicPartition(topic, int(key))] = offset
    return offsets or None


def _check_no_duplicates(value: object, path: str) -> None:
    """Reject keys listed twice in ``value``, or in any object inside it."""
    if _repeated(value):
        msg = f"key {_repeated(value)[0]!r} is listed twice"
        raise OffsetDocumentError(msg, path)
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, Mapping | list):
                _check_no_duplicates(item, f"{path}[{key!r}]")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_no_duplicates(item, f"{path}[{index}]")


def _sorted_json(value: Any) -> Any:
    """Copy a JSON value with every object's keys sorted, so extras serialize stably."""
    if isinstance(value, Mapping):
        return {key: _sorted_json(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_json(item) for item in value]
    return value


def _versions() -> str:
    return "version " + ", ".join(str(v) for v in sorted(SUPPORTED_VERSIONS))
