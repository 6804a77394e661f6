"""The admin-client side of :class:`kafka_rescalable.testing.local_cluster.LocalKafkaCluster`.

Questions to a running cluster (who leads a partition, is a restarted node back in sync) and
changes to it (ACLs, a topic's min ISR), each a plain function of the admin settings that
reach the live nodes. The cluster class keeps the processes and passes those settings in, so
that this code, which only talks to Kafka, is read apart from the code that runs it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_rescalable.errors import KafkaMetadataError

__all__ = [
    "PartitionState",
    "grant",
    "lagging_partitions",
    "partition_state",
    "set_topic_min_isr",
]

AdminConfig = Mapping[str, str | int]


@dataclass(frozen=True)
class PartitionState:
    """Who leads and who replicates one partition, as the cluster's metadata says.

    Attributes
    ----------
    leader
        The leader's node id, or ``-1`` while the partition has none.
    replicas
        The assigned replicas, preferred leader first.
    isr
        The in-sync replicas.
    """

    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


def partition_state(admin_config: AdminConfig, topic: str, partition: int) -> PartitionState:
    """Return the leader, replicas and ISR of one partition from a live node's metadata.

    Raises
    ------
    KafkaMetadataError
        If no live node answers, or the topic or partition does not exist.
    """
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(dict(admin_config))
    try:
        described = admin.list_topics(topic=topic, timeout=10).topics.get(topic)
    except KafkaException as error:
        msg = f"no live node answered a metadata request for {topic!r}: {error}"
        raise KafkaMetadataError(msg, error.args[0]) from error
    if described is None or described.error is not None:
        error = None if described is None else described.error
        msg = f"topic {topic!r} is not in the cluster's metadata: {error}"
        raise KafkaMetadataError(msg, error)
    found = described.partitions.get(partition)
    if found is None:
        count = len(described.partitions)
        msg = f"topic {topic!r} has no partition {partition} (it has {count})"
        raise KafkaMetadataError(msg)
    return PartitionState(found.leader, tuple(found.replicas), tuple(found.isrs))


def grant(
    admin_config: AdminConfig,
    user: str,
    *,
    topic: str | None,
    group: str | None,
    operations: tuple[str, ...],
    timeout_s: float,
) -> None:
    """Grant ``user`` ``operations`` on ``topic`` and on group ``group``; wait until listed.

    Raises
    ------
    ValueError
        If neither ``topic`` nor ``group`` is given.
    TimeoutError
        If the ACLs are not listed within ``timeout_s``.
    """
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    resources = [
        (kind, name)
        for kind, name in ((ResourceType.TOPIC, topic), (ResourceType.GROUP, group))
        if name is not None
    ]
    if not resources:
        msg = "allow_read needs a topic, a group, or both"
        raise ValueError(msg)
    principal = f"User:{user}"
    bindings = [
        AclBinding(
            kind,
            name,
            ResourcePatternType.LITERAL,
            principal,
            "*",
            operation,
            AclPermissionType.ALLOW,
        )
        for kind, name in resources
        for operation in (AclOperation[name] for name in operations)
    ]
    # PLAINTEXT is a super user's listener here (see kafka_rescalable.testing.security).
    admin = AdminClient(dict(admin_config))
    for future in admin.create_acls(bindings, request_timeout=timeout_s).values():
        future.result(timeout=timeout_s)
    principal_filter = AclBindingFilter(
        ResourceType.ANY,
        None,
        ResourcePatternType.ANY,
        principal,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    deadline = time.monotonic() + timeout_s
    while True:
        described = admin.describe_acls(principal_filter, request_timeout=timeout_s)
        listed = set(described.result(timeout=timeout_s))
        if set(bindings) <= listed:
            return
        if time.monotonic() > deadline:
            msg = f"ACLs for {principal} were not listed within {timeout_s} s"
            raise TimeoutError(msg)
        time.sleep(0.05)


def set_topic_min_isr(
    admin_config: AdminConfig, topic: str, min_isr: int, timeout_s: float
) -> None:
    """Set ``min.insync.replicas`` of ``topic``; nothing to do when it is Kafka's default, 1."""
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    if min_isr == 1:
        return
    resource = ConfigResource(
        ResourceType.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry(
                "min.insync.replicas",
                str(min_isr),
                incremental_operation=AlterConfigOpType.SET,
            )
        ],
    )
    admin = AdminClient(dict(admin_config))
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=timeout_s)


def lagging_partitions(admin_config: AdminConfig, node_id: int, deadline: float) -> list[str]:
    """Wait until ``node_id`` is in the ISR of its led partitions; return those it is not."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(dict(admin_config))
    lagging: list[str] = []
    while True:
        try:
            topics = admin.list_topics(timeout=5).topics
        except KafkaException as error:
            lagging = [f"(no metadata: {error})"]
        else:
            lagging = [
                f"{name}-{number}"
                for name, topic in topics.items()
                for number, partition in topic.partitions.items()
                if node_id in partition.replicas
                and partition.leader >= 0
                and node_id not in partition.isrs
            ]
        if not lagging or time.monotonic() > deadline:
            return lagging
        time.sleep(0.1)
