"""Subscribed topics that do not exist: a typo is told at once and fails the query in time.

A topic the query has seen exist (in Kafka or in its checkpoint) is never counted here: its
absence is a deletion, which the batch boundary reports as data loss.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["MissingTopicCheck", "MissingTopicWatch"]


@dataclass(frozen=True)
class MissingTopicWatch:
    """Since when (monotonic seconds) each missing topic has been missing, and the topics seen.

    A new query starts with an empty watch; the driver keeps the one each check returns.
    """

    since: Mapping[str, float] = field(default_factory=dict)
    seen: frozenset[str] = frozenset()

    def check(
        self,
        missing: Iterable[str],
        existing: Iterable[str],
        *,
        now_s: float,
        timeout_ms: int,
    ) -> MissingTopicCheck:
        """Account for one lookup: ``missing`` subscribed topics, ``existing`` ones seen.

        Parameters
        ----------
        missing : iterable of str
            Subscribed topics (or topics of assigned partitions) the brokers do not know.
        existing : iterable of str
            Topics that exist, or that the checkpoint knows: never typos from now on.
        now_s : float
            The monotonic clock now, in seconds.
        timeout_ms : int
            ``missingTopicTimeout``: how long a topic may be missing before the query fails.
        """
        seen = self.seen | frozenset(existing)
        still = [topic for topic in missing if topic not in seen]
        since = {topic: self.since.get(topic, now_s) for topic in still}
        new = tuple(sorted(topic for topic in still if topic not in self.since))
        overdue = tuple(sorted(t for t in still if (now_s - since[t]) * 1000 >= timeout_ms))
        return MissingTopicCheck(MissingTopicWatch(since, seen), new, overdue)


@dataclass(frozen=True)
class MissingTopicCheck:
    """The watch to keep, the topics missing since this check, and those missing too long."""

    watch: MissingTopicWatch
    new: tuple[str, ...]
    overdue: tuple[str, ...]
