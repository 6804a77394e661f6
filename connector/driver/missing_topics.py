"""Subscribed topics that do not exist, on the driver: the warning, then the error.

The policy (since when each topic is missing, which ones are new or overdue) is pure, in
``state.missing_topics``; this module feeds it each lookup's answer and the clock, logs the
topics found missing, and fails the query with a :class:`MissingTopicError` that names the
option to change once one stays missing past ``missingTopicTimeout``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from connector._logging import logger
from connector.config.options import KafkaSourceOptions
from connector.driver.kafka_metadata import LiveTopics
from connector.errors import MissingTopicError
from state.missing_topics import MissingTopicWatch

__all__ = ["MissingTopicGuard"]


class MissingTopicGuard:
    """Watch one query's subscription for topics that do not exist, lookup after lookup.

    A typo in ``subscribe`` would otherwise leave the query idle for ever. A topic this
    query has read before and that has gone is data loss, reported by the batch boundary.
    """

    def __init__(self, options: KafkaSourceOptions) -> None:
        self._options = options
        self._watch = MissingTopicWatch()

    def check(self, found: LiveTopics, known_topics: Iterable[str] = ()) -> None:
        """Warn at once about a subscribed topic that does not exist; fail once it stays so.

        Parameters
        ----------
        found : LiveTopics
            This lookup's answer: the partitions that exist and the topics that do not.
        known_topics : iterable of str
            Topics the checkpoint knows: never typos, even when they are gone.

        Raises
        ------
        MissingTopicError
            When a topic has been missing for ``missingTopicTimeout`` or longer.
        """
        options = self._options
        timeout_ms = options.missing_topic_timeout_ms
        check = self._watch.check(
            found.missing,
            {tp.topic for tp in found.partitions} | set(known_topics),
            now_s=time.monotonic(),
            timeout_ms=timeout_ms,
        )
        self._watch = check.watch
        for topic in check.new:
            logger.warning(
                "subscribed topic %r does not exist on %s; the query reads nothing from it "
                "and fails if it still does not exist after 'missingTopicTimeout' (%d s). "
                "Check its name in %s",
                topic,
                options.bootstrap_servers,
                timeout_ms // 1000,
                options.subscription.describe(),
            )
        if check.overdue:
            msg = (
                f"subscribed topic {', '.join(check.overdue)} has not existed on "
                f"{options.bootstrap_servers} for {timeout_ms // 1000} s "
                "('missingTopicTimeout'). Check the name in "
                f"{options.subscription.describe()}, create the topic, or raise "
                "'missingTopicTimeout'"
            )
            raise MissingTopicError(msg, check.overdue)
