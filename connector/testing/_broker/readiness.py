"""Whether local Kafka nodes are ready: ports, metadata, and the coordinators answering.

A JVM that runs is not yet a broker a test can use: it must bind its ports (which another
process may have taken since we picked them), serve metadata of its own cluster, and load
the internal topics its group and transaction coordinators need. The polling for each of
these lives here, apart from the process handling in :mod:`kafka_rescalable.testing._broker.node`.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kafka_rescalable.state.errors import KafkaRescalableError
from kafka_rescalable.testing._broker.config import LOOPBACK
from kafka_rescalable.testing.errors import BrokerStartError, ToolRunError

if TYPE_CHECKING:
    from kafka_rescalable.testing._broker.node import KafkaNode

__all__ = [
    "PortTaken",
    "accepts_connections",
    "check_port_free",
    "free_ports",
    "wait_for_coordinators",
    "wait_serving",
    "wait_until_ready",
]


class PortTaken(KafkaRescalableError):
    """A port we picked was taken by someone else between our check and the server's bind.

    Internal: callers that picked the ports themselves retry with new ones, and raise
    :attr:`error` when they give up.
    """

    def __init__(self, error: ToolRunError) -> None:
        self.error = error
        super().__init__(str(error))


def wait_serving(
    node: KafkaNode,
    cluster_id: str,
    deadline: float,
    *,
    brokers: frozenset[int] = frozenset(),
    port_retry: bool = False,
    timeout_s: float,
) -> None:
    """Poll until ``node`` serves metadata of ``cluster_id`` listing ``brokers``.

    A TCP connect comes first so that the admin client, which logs every refused
    connection to stderr, is only created once something listens. Only our cluster id
    counts as an answer: until the JVM fails to bind, another broker on the port would
    answer too. The admin client is bootstrapped with this node alone and is asked before
    it could learn of others, so the answer comes from this node.

    Parameters
    ----------
    cluster_id
        The id the storage was formatted with.
    deadline
        ``time.monotonic()`` value after which to give up.
    brokers
        Node ids the metadata must list as live brokers (this node is always required).
    port_retry
        See :meth:`KafkaNode.check_alive`.
    timeout_s
        Only for the message: the timeout ``deadline`` stands for.

    Raises
    ------
    BrokerStartError
        If the process dies or the deadline passes; with the log's last lines.
    """
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    wanted = brokers | {node.node_id}
    seen = "no answer"
    admin: AdminClient | None = None
    while True:
        node.check_alive(port_retry)
        if time.monotonic() > deadline:
            msg = f"the broker did not answer within {timeout_s:.0f} s ({seen})"
            raise node.failure(msg, node.command)
        if accepts_connections(node.port):
            if admin is None:
                # Silent: its connection errors while the broker boots are expected, and
                # a failure is reported with the broker's own log instead.
                admin = AdminClient(
                    {"bootstrap.servers": f"{LOOPBACK}:{node.port}", "log_level": 0}
                )
            try:
                metadata = admin.list_topics(timeout=1.0)
            except KafkaException:
                metadata = None
            if metadata is not None and metadata.cluster_id == cluster_id:
                listed = set(metadata.brokers)
                if wanted <= listed:
                    return
                seen = f"brokers {sorted(listed)} of {sorted(wanted)} registered"
        time.sleep(0.05)


def wait_until_ready(
    nodes: Sequence[KafkaNode],
    cluster_id: str,
    timeout_s: float,
    *,
    port_retry: bool = False,
) -> None:
    """Wait until every node of ``nodes`` serves and the coordinators answer.

    Each node must serve metadata of ``cluster_id`` listing all ``nodes`` as brokers; then the
    group and transaction coordinators must answer (see :func:`wait_for_coordinators`).

    Parameters
    ----------
    nodes
        The live nodes; the first one's log goes into a coordinator failure.
    cluster_id
        The id their storage was formatted with.
    timeout_s
        How long to wait for all of it.
    port_retry
        See :meth:`KafkaNode.check_alive`.

    Raises
    ------
    BrokerStartError
        If a node dies or something is not ready in time.
    """
    deadline = time.monotonic() + timeout_s
    brokers = frozenset(node.node_id for node in nodes)
    for node in nodes:
        wait_serving(
            node, cluster_id, deadline, brokers=brokers, port_retry=port_retry, timeout_s=timeout_s
        )
    bootstrap = ",".join(f"{LOOPBACK}:{node.port}" for node in nodes)
    problem = wait_for_coordinators({"bootstrap.servers": bootstrap}, deadline)
    if problem is not None:
        msg = f"the coordinators did not answer within {timeout_s:.0f} s: {problem}"
        raise nodes[0].failure(msg, nodes[0].command)


def wait_for_coordinators(client_config: Mapping[str, str | int], deadline: float) -> str | None:
    """Wait until the group and the transaction coordinators answer; ``None`` when they do.

    A broker serves metadata before its coordinators work: the internal topics are created
    on first use and their leaders must load them. A consumer group or a transactional
    producer started in that moment fails, or worse, fails once in a few runs. Asking both
    coordinators here creates and loads those topics before any test runs.

    Parameters
    ----------
    client_config
        librdkafka settings that reach the cluster as a privileged client.
    deadline
        ``time.monotonic()`` value after which to give up.

    Returns
    -------
    str | None
        ``None`` when both answered, else the last error seen, for the caller's message.
    """
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

    quiet = {**client_config, "log_level": 0}
    probe = f"local-kafka-ready-{uuid.uuid4().hex}"
    last = "not asked yet"
    # The group coordinator is asked through a consumer's committed offsets, not the admin
    # client's describe_consumer_groups: when that request timed out while a cluster was
    # starting, librdkafka aborted the whole process (an assertion on a reference count,
    # librdkafka issue 4605), taking a test worker with it twice in CI runs here.
    consumer = Consumer({**quiet, "group.id": probe, "enable.auto.commit": False})
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return f"group coordinator: {last}"
            try:
                # Any answer is the coordinator's, an offset of a partition it never saw too.
                consumer.committed([TopicPartition(probe, 0)], timeout=min(remaining, 5.0))
                break
            except KafkaException as error:
                last = str(error.args[0])
                time.sleep(0.1)
    finally:
        consumer.close()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return f"transaction coordinator: {last}"
        producer = Producer({**quiet, "transactional.id": probe})
        try:
            producer.init_transactions(min(remaining, 10.0))
            return None
        except KafkaException as error:
            last = str(error.args[0])
            time.sleep(0.1)


def free_ports(count: int) -> list[int]:
    """Return ``count`` distinct ports that were free on loopback a moment ago.

    All sockets are held open together so the kernel cannot hand out the same port twice. The
    broker binds them a second later, so another process can still win the race: the caller
    retries on a bind failure.
    """
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def check_port_free(port: int) -> None:
    """Fail at once, and clearly, if a port the caller chose is taken on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As Java server sockets do on Unix: a port whose old connections are in TIME_WAIT
        # counts as free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((LOOPBACK, port))
        except OSError as error:
            msg = f"port {port} on {LOOPBACK} is already in use ({error.strerror})"
            raise BrokerStartError(msg) from error


def accepts_connections(port: int) -> bool:
    """Whether something accepts TCP connections on ``port`` of loopback right now."""
    try:
        with socket.create_connection((LOOPBACK, port), timeout=0.5):
            return True
    except OSError:
        return False
