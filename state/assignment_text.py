"""The two texts about an assignment of partitions to reader slots: a summary and the list.

The driver logs an assignment when a query starts and whenever the slots change. At 1,000
partitions the full list is tens of thousands of characters, too long for a log line read by a
person, so the summary goes to INFO and the list to DEBUG; both come from here, so every log
line and message about an assignment reads the same.
"""

from __future__ import annotations

from kafka_rescalable.state.offset_state import OffsetState
from kafka_rescalable.state.partitions import describe_partitions

__all__ = ["describe_assignment", "summarize_assignment"]


def summarize_assignment(state: OffsetState) -> str:
    """``1000 partitions of 2 topics over 20 slots, 50 each``: one short line at any size.

    Per-slot counts differ by at most one after a rebalance, so their range says all there is
    to say about the balance; an empty slot shows as ``0-1 each``.
    """
    counts = [len(slot) for slot in state.slots]
    topics = {sub.topic for slot in state.slots for sub in slot}
    partitions = sum(counts)
    what = f"{partitions} partition{'s' if partitions != 1 else ''}"
    if len(topics) > 1:
        what += f" of {len(topics)} topics"
    slots = f"{state.num_slots} slot{'s' if state.num_slots != 1 else ''}"
    if not counts:
        return f"{what} over {slots}"
    low, high = min(counts), max(counts)
    each = str(low) if low == high else f"{low}-{high}"
    return f"{what} over {slots}, {each} each"


def describe_assignment(state: OffsetState) -> str:
    """``slot 0: orders-0..4; slot 1: orders-5..9``: every slot's partitions, for DEBUG."""
    return "; ".join(
        f"slot {index}: {describe_partitions([s.topic_partition for s in slot]) or '(none)'}"
        for index, slot in enumerate(state.slots)
    )
