"""How many reader slots the next batch has: the ``parallelism`` rule, from plain values.

The driver asks the cluster for its cores only when the rule needs them (``auto``) and logs
what this module decided; the rule itself never waits on the network, so every branch is a
unit test. A fixed count wins; unset means one slot per partition, as Spark's built-in source
has one task per partition; ``auto`` follows the application's cores, and keeps the current
slots (one per partition for a new query) when the cores cannot be read, since changing the
assignment on no information would move partitions for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "BY_CORES",
    "CORES_UNKNOWN",
    "FIXED",
    "ONE_PER_PARTITION",
    "SlotCount",
    "choose_slot_count",
]

FIXED: Final = "fixed"
"""``parallelism`` gave a number: it is used as given."""
ONE_PER_PARTITION: Final = "one per partition"
"""``parallelism`` unset: one slot per partition (one for no partition at all)."""
BY_CORES: Final = "the application's cores"
"""``parallelism=auto`` and the cores were read: one slot per core."""
CORES_UNKNOWN: Final = "cores unknown"
"""``parallelism=auto`` but the cores could not be read: the slots stay as they are."""

Reason = Literal["fixed", "one per partition", "the application's cores", "cores unknown"]


@dataclass(frozen=True, slots=True)
class SlotCount:
    """The slot count of the next batch and the branch of the rule that gave it.

    Parameters
    ----------
    count : int
        Reader slots, ``>= 1``.
    reason : str
        :data:`FIXED`, :data:`ONE_PER_PARTITION`, :data:`BY_CORES` or :data:`CORES_UNKNOWN`;
        the driver logs a warning for the last one, since ``auto`` then does not follow the
        cluster.
    """

    count: int
    reason: Reason


def choose_slot_count(
    kind: Literal["unset", "auto", "fixed"],
    fixed: int | None,
    *,
    partition_count: int,
    current_slots: int,
    cores: int | None,
) -> SlotCount:
    """Apply the ``parallelism`` rule.

    Parameters
    ----------
    kind : {"unset", "auto", "fixed"}
        The kind of the ``parallelism`` setting.
    fixed : int or None
        The count given with ``kind="fixed"``; ignored otherwise.
    partition_count : int
        Live partitions of the subscription, ``>= 0``.
    current_slots : int
        The slot count in force, ``0`` before the first batch.
    cores : int or None
        The application's executor cores, ``None`` when they could not be read (or were not
        asked for, as only ``auto`` needs them).

    Returns
    -------
    SlotCount
        At least one slot, whatever the inputs: a query with no partition yet still has a
        slot for the partitions that join later.

    Raises
    ------
    ValueError
        When ``kind`` is none of the three, or ``kind="fixed"`` comes without a count >= 1.
    """
    if kind == "fixed":
        if isinstance(fixed, bool) or not isinstance(fixed, int) or fixed < 1:
            msg = f"fixed: parallelism 'fixed' needs a slot count >= 1, got {fixed!r}"
            raise ValueError(msg)
        return SlotCount(fixed, FIXED)
    if kind == "unset":
        return SlotCount(max(1, partition_count), ONE_PER_PARTITION)
    if kind != "auto":
        msg = f"kind: must be 'unset', 'auto' or 'fixed', got {kind!r}"
        raise ValueError(msg)
    if cores is None or cores < 1:
        return SlotCount(current_slots or max(1, partition_count), CORES_UNKNOWN)
    return SlotCount(cores, BY_CORES)
