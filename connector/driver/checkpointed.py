"""Offsets Spark reads back from the checkpoint: parsed once each, refusals explained.

Spark hands every offset to the reader as a fresh dict read back from JSON: the ``start`` of
``latestOffset`` is the end it returned the batch before, and ``partitions`` and ``commit``
get both ends again. At thousands of partitions, parsing (and checking) a document costs more
than a batch's offset lookup, so a dict identical to one seen recently reuses that document.
"""

from __future__ import annotations

from typing import Any

from kafka_rescalable.errors import CheckpointOffsetError
from kafka_rescalable.state import (
    TOPICS_KEY,
    ForeignCheckpointError,
    OffsetDocumentError,
    SlotsDocument,
)

__all__ = ["CheckpointedDocuments"]


class CheckpointedDocuments:
    """The last few slots documents a reader parsed or wrote, to parse each only once.

    "Identical" is exact, type for type at every level, not ``==``: ``True`` and ``5.0``
    equal ``1`` and ``5`` but are no offsets, and such a document must still be refused by
    :meth:`SlotsDocument.from_dict`. The cache keeps its own copies of the dicts, so a caller
    changing a dict afterwards changes nothing here; a new reader (after a restart) starts
    empty, so a checkpointed document is always parsed once.
    """

    def __init__(self, size: int = 3) -> None:
        # A batch touches three documents: its start, its end, and the previous batch's end
        # when the start is re-planned; most recent first.
        self._size = size
        self._entries: list[tuple[dict[str, Any], SlotsDocument]] = []

    def parse(self, data: Any) -> SlotsDocument:
        """:meth:`SlotsDocument.from_dict`, or the document last made from an identical dict."""
        for index, (seen, document) in enumerate(self._entries):
            if type(data) is dict and data == seen and _same_json(data, seen):
                if index:
                    self._entries.insert(0, self._entries.pop(index))
                return document
        document = SlotsDocument.from_dict(data)
        self._keep(document)
        return document

    def checkpointed(self, data: Any, role: str) -> SlotsDocument:
        """Parse an offset Spark read back from the checkpoint; explain a refusal.

        Spark does not tell a source which batch an offset belongs to, so the message points
        to the tool that does.
        """
        try:
            return self.parse(data)
        except ForeignCheckpointError:
            raise
        except OffsetDocumentError as error:
            msg = (
                f"the checkpoint's offset for {role} is not a valid slots document: {error}. "
                "It is the last line of a file in <checkpoint>/offsets/; "
                "'python -m kafka_rescalable.inspect <checkpoint>' names the batch. Restore that "
                "file from a backup, or start the query with a new checkpoint directory"
            )
            raise CheckpointOffsetError(msg, error) from error

    def to_dict(self, document: SlotsDocument) -> dict[str, Any]:
        """``document.to_dict()``, remembered so that the dict Spark hands back is not parsed."""
        return _copy(self._keep(document))

    def _keep(self, document: SlotsDocument) -> dict[str, Any]:
        made = document.to_dict()
        self._entries.insert(0, (made, document))
        del self._entries[self._size :]
        return made


_LEAVES = frozenset({int, str, float, bool, type(None)})


def _copy(value: Any) -> Any:
    """Copy a JSON value into fresh dicts and lists, sharing only the immutable leaves.

    Cheaper than ``to_dict`` again: the topic layout is a few containers around long arrays
    of ints, each copied in one C-level call.
    """
    if type(value) is dict:
        return {key: _copy(item) for key, item in value.items()}
    if type(value) is list:
        if set(map(type, value)) <= _LEAVES:
            return list(value)
        return [_copy(item) for item in value]
    return value


def _same_json(data: dict[str, Any], seen: dict[str, Any]) -> bool:
    """Whether ``data``, equal to the document dict ``seen``, has its types at every level.

    ``seen`` comes from ``SlotsDocument.to_dict``. The offsets, thousands of them, have a
    known shape checked with one pass per level: in the topic layout, arrays of ``int`` per
    topic; in the slot layout, a list of dicts of dicts of ``int`` under ``str`` keys. The
    other sections, small, are compared value by value.
    """
    if type(data["version"]) is not int:
        return False
    if TOPICS_KEY in seen:
        same = type(data["slots"]) is int and _same_topics(data[TOPICS_KEY], seen[TOPICS_KEY])
        offsets = {"version", "slots", TOPICS_KEY}
    else:
        same = _same_slots(data["slots"])
        offsets = {"version", "slots"}
    return same and all(_same_value(data[key], seen[key]) for key in seen.keys() - offsets)


def _same_topics(topics: Any, seen: dict[str, Any]) -> bool:
    """Check the topic layout's ``topics``: per topic, its id, arrays of ``int``, runs."""
    if type(topics) is not dict or not set(map(type, topics.values())) <= {dict}:
        return False
    for topic, entry in topics.items():
        for key, value in entry.items():
            if key == "id":  # the topic's Kafka id, a string (version 4)
                if type(value) is not str:
                    return False
            elif key == "partitions":  # short: runs of partitions, at most one item per gap
                if not _same_value(value, seen[topic][key]):
                    return False
            elif type(value) is not list or not set(map(type, value)) <= {int}:
                return False
    return True


def _same_slots(slots: Any) -> bool:
    """Check the slot layout's ``slots``: a list of dicts of dicts of ``int`` by ``str``."""
    if type(slots) is not list or not set(map(type, slots)) <= {dict}:
        return False
    topics = [partitions for slot in slots for partitions in slot.values()]
    if not set(map(type, topics)) <= {dict}:
        return False
    keys = {type(key) for slot in slots for key in slot}
    keys.update(type(key) for partitions in topics for key in partitions)
    offsets = {type(offset) for partitions in topics for offset in partitions.values()}
    return keys <= {str} and offsets <= {int}


def _same_value(data: Any, seen: Any) -> bool:
    """Whether ``data``, equal to the JSON value ``seen``, has the same type at every level."""
    kind = type(seen)
    if type(data) is not kind:
        return False
    if kind is dict:
        return all(
            type(key) is str and _same_value(value, seen[key]) for key, value in data.items()
        )
    if kind is list:
        return all(_same_value(value, item) for value, item in zip(data, seen, strict=True))
    if kind is float:
        return repr(data) == repr(seen)  # -0.0 == 0.0, yet they are different JSON
    return True
