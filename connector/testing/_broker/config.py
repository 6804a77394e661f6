"""What a local Kafka node runs with: JVM flags, ``server.properties`` and logging files.

Pure values and text: nothing here starts a process, so the settings that make a test broker
fast and predictable can be read (and changed) in one place, apart from how it is launched
(:mod:`kafka_rescalable.testing._broker.node`) and how its readiness is checked
(:mod:`kafka_rescalable.testing._broker.readiness`).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CLUSTER_JVM_OPTIONS",
    "DEFAULT_JVM_OPTIONS",
    "LOOPBACK",
    "ServerLayout",
    "log4j2_config",
    "properties_text",
    "random_cluster_id",
    "server_properties",
]

# Flags for every test JVM; only the heap differs between one broker and a cluster.
_LEAN_JVM_FLAGS: tuple[str, ...] = (
    # One GC thread and no concurrent phases: a test broker's heap is small, and on a 2-core
    # machine that also runs Spark, G1's background threads cost more than its short pauses.
    "-XX:+UseSerialGC",
    # C1 only: the broker is ready ~0.3 s sooner and no C2 compiler threads compete with Spark
    # for the CPU. Pass jvm_options without it to benchmark peak broker throughput.
    "-XX:TieredStopAtLevel=1",
    # No hsperfdata file in /tmp per JVM.
    "-XX:-UsePerfData",
    # A broker out of memory should die (and fail the test loudly), not limp on.
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.awt.headless=true",
)

DEFAULT_JVM_OPTIONS: tuple[str, ...] = ("-Xmx512m", *_LEAN_JVM_FLAGS)
# Three of these share two cores and the memory with Spark: a smaller heap each.
CLUSTER_JVM_OPTIONS: tuple[str, ...] = ("-Xmx384m", *_LEAN_JVM_FLAGS)

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class ServerLayout:
    """The shape of the cluster a node belongs to, which its properties depend on.

    Parameters
    ----------
    node_id
        This node's ``node.id``.
    voters
        ``node id -> controller port`` of every node: the static controller quorum.
    replication
        Replication factor of internal topics and the default one of new topics.
    min_isr
        Min ISR of the transaction log (and share-group state), at most ``replication``.
    """

    node_id: int
    voters: Mapping[int, int]
    replication: int
    min_isr: int

    def __post_init__(self) -> None:
        """Reject a layout Kafka would only reject later, with a less direct message."""
        if self.node_id not in self.voters:
            msg = f"node {self.node_id} is not among the voters {sorted(self.voters)}"
            raise ValueError(msg)
        if not 1 <= self.min_isr <= self.replication <= len(self.voters):
            msg = (
                "need 1 <= min_isr <= replication <= nodes, got "
                f"{self.min_isr}, {self.replication}, {len(self.voters)}"
            )
            raise ValueError(msg)


def server_properties(
    layout: ServerLayout,
    data_dir: Path,
    broker_port: int,
    extra_listeners: Mapping[str, int] | None = None,
) -> dict[str, str]:
    """Return the test-friendly ``server.properties`` of one broker+controller node.

    Parameters
    ----------
    layout
        Node id, quorum and replication of the cluster.
    data_dir
        The node's own folder; its topic data goes to ``kraft-logs`` in it.
    broker_port
        The PLAINTEXT listener, used by clients, by the other brokers, and by our own checks.
    extra_listeners
        More client listeners, ``name -> port``; each name is also its security protocol
        (``SASL_SSL``). Their security settings come from the caller.

    Notes
    -----
    - Internal topics (consumer offsets, transaction state, share-group state) have
      ``layout.replication`` replicas and 1 partition, which creates them in milliseconds on
      first use; the transaction log's min ISR is ``layout.min_isr``.
    - ``group.initial.rebalance.delay.ms=0``: a consumer group forms without the 3 s wait.
    - ``auto.create.topics.enable=false``: tests create their topics, so a typo fails instead
      of silently creating a topic with default settings.
    - ``log.retention.ms=-1``: no time-based deletion unless a topic sets ``retention.ms``.
      Otherwise a record produced with an old timestamp would vanish within a second under the
      fast retention check below.
    - Retention is checked every second from the first second on, and the cleaner looks for
      dirty compacted logs every 500 ms with a 16 MiB dedupe buffer: a topic with a short
      ``segment.ms`` and a low ``min.cleanable.dirty.ratio`` is compacted within seconds.
    - Deleted segments and topics leave the disk after 1 s instead of 60 s.
    - With more than one node: a broker that stops heartbeating is fenced after 4 s instead
      of 9 s, so a killed leader is replaced within seconds; and leadership does not move back
      to a restarted node on its own (``auto.leader.rebalance.enable=false``), so a test sees
      only the leader changes it caused.
    """
    voters = ",".join(f"{node}@{LOOPBACK}:{port}" for node, port in sorted(layout.voters.items()))
    own_controller_port = layout.voters[layout.node_id]
    client_listeners = {"PLAINTEXT": broker_port, **(extra_listeners or {})}
    advertised = ",".join(f"{name}://{LOOPBACK}:{port}" for name, port in client_listeners.items())
    protocols = ",".join(f"{name}:{name}" for name in client_listeners)
    replication = str(layout.replication)
    properties = {
        "process.roles": "broker,controller",
        "node.id": str(layout.node_id),
        # A static quorum of every node: formatting needs no --standalone or
        # --initial-controllers, and a restarted node finds the others where they were.
        "controller.quorum.voters": voters,
        "listeners": f"{advertised},CONTROLLER://{LOOPBACK}:{own_controller_port}",
        "advertised.listeners": advertised,
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": f"{protocols},CONTROLLER:PLAINTEXT",
        "log.dirs": str(data_dir / "kraft-logs"),
        "num.partitions": "1",
        "default.replication.factor": replication,
        "min.insync.replicas": "1",
        "offsets.topic.replication.factor": replication,
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": replication,
        "transaction.state.log.min.isr": str(layout.min_isr),
        "transaction.state.log.num.partitions": "1",
        "share.coordinator.state.topic.replication.factor": replication,
        "share.coordinator.state.topic.min.isr": str(layout.min_isr),
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "false",
        "log.retention.ms": "-1",
        "log.retention.check.interval.ms": "1000",
        "log.initial.task.delay.ms": "0",
        "log.cleaner.enable": "true",
        "log.cleaner.backoff.ms": "500",
        "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
        "log.segment.delete.delay.ms": "1000",
        "file.delete.delay.ms": "1000",
        "num.network.threads": "2",
        "num.io.threads": "4",
    }
    if len(layout.voters) > 1:
        properties.update(
            {
                "broker.heartbeat.interval.ms": "500",
                "broker.session.timeout.ms": "4000",
                "auto.leader.rebalance.enable": "false",
            }
        )
    return properties


def random_cluster_id() -> str:
    """Return a cluster id as Kafka writes one: 16 random bytes in URL-safe base64, no padding.

    Like Kafka's own ``Uuid.randomUuid``, it never starts with ``-``, which a command line
    would take for an option.
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def properties_text(properties: Mapping[str, str]) -> str:
    """Return ``properties`` as a Java properties file, backslashes and newlines escaped."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("\n", "\\n")

    lines = [f"{escape(key)}={escape(value)}" for key, value in properties.items()]
    return "# Written by kafka_rescalable.testing.local_kafka\n" + "\n".join(lines) + "\n"


def log4j2_config(log_path: Path) -> str:
    """Return a log4j2 configuration that logs everything to ``log_path`` and none to stdout."""
    file_name = str(log_path).replace("\\", "\\\\")
    return f"""# Written by kafka_rescalable.testing.local_kafka: all to one file, nothing to
    stdout.
status = error
name = local-kafka
appender.file.type = File
appender.file.name = file
appender.file.fileName = {file_name}
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
"""
