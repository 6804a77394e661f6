"""A real multi-node Apache Kafka cluster on loopback, for fault and security tests.

:class:`LocalKafkaCluster` runs N KRaft nodes from Kafka's Maven jars, as
:class:`kafka_rescalable.testing.local_kafka.LocalKafka` runs one: each node is broker and
controller, the
quorum is static (every node votes), all share one cluster id, and each keeps its data folder
and its ports for the life of the cluster. A node can therefore be killed (SIGKILL, as a crash),
stopped (SIGTERM, a controlled shutdown) and restarted on its data, and clients configured
with :attr:`LocalKafkaCluster.bootstrap_servers` find it again where it was.

>>> with LocalKafkaCluster(brokers=3) as cluster:  # doctest: +SKIP
...     leader = cluster.leader_of("orders", 0)
...     cluster.kill(leader)
...     cluster.wait_for_leader("orders", 0, other_than=leader)
...     cluster.restart(leader)

Optional secured listeners (``SASL_PLAINTEXT``, ``SASL_SSL``), users and an authorizer come
from :class:`kafka_rescalable.testing.security.SecurityConfig`.

Like a production cluster, internal topics get ``min(3, N)`` replicas and a min ISR of
``min(2, N)``, and new topics ``min(3, N)`` replicas by default; a topic's own min ISR stays
Kafka's default of 1 unless it sets ``min.insync.replicas``, so that helpers creating
single-replica topics keep working with ``acks=all``.

This module is long because it is the one public class of the cluster, and most of its
length is the documented contract of each method (lifecycle, addresses, faults, ACLs). The work
behind them lives in :mod:`kafka_rescalable.testing._broker`: the processes in ``node``, readiness
in
``readiness``, the admin-client calls in ``cluster_admin``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Unpack

from kafka_rescalable.errors import KafkaMetadataError
from kafka_rescalable.testing._broker.cluster_admin import (
    PartitionState,
    grant,
    lagging_partitions,
    partition_state,
    set_topic_min_isr,
)
from kafka_rescalable.testing._broker.config import (
    CLUSTER_JVM_OPTIONS,
    LOOPBACK,
    ServerLayout,
    random_cluster_id,
    server_properties,
)
from kafka_rescalable.testing._broker.node import KafkaNode
from kafka_rescalable.testing._broker.readiness import free_ports, wait_serving, wait_until_ready
from kafka_rescalable.testing._broker.server import (
    PORT_ATTEMPTS,
    LaunchOptions,
    LaunchSettings,
    LocalServer,
)
from kafka_rescalable.testing.security import SecurityConfig, TlsFiles, write_tls_files

__all__ = ["LocalKafkaCluster", "PartitionState"]

_OFFSETS_TOPIC = "__consumer_offsets"


class LocalKafkaCluster(LocalServer):
    """N KRaft nodes (broker and controller each) on ``127.0.0.1``.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. Node ids are
    ``1..brokers``.

    Parameters
    ----------
    brokers
        Number of nodes; 3 gives the replication of a production cluster.
    security
        Secured listeners, users and the authorizer; ``None`` for PLAINTEXT only.

    Other Parameters
    ----------------
    **options
        The :class:`kafka_rescalable.testing._broker.server.LaunchOptions`: ``extra_properties``,
        ``keep_data``, ``start_timeout_s`` (default 120 s; :meth:`restart` and
        :meth:`wait_until_ready` wait as long), ``stop_timeout_s``, ``jvm_options`` (default
        :data:`kafka_rescalable.testing._broker.config.CLUSTER_JVM_OPTIONS`, a 384 MiB heap each),
        ``class_data_sharing`` and ``jars_cache_dir``.
    """

    def __init__(
        self,
        brokers: int = 3,
        *,
        security: SecurityConfig | None = None,
        **options: Unpack[LaunchOptions],
    ) -> None:
        if isinstance(brokers, bool) or not isinstance(brokers, int):
            msg = f"brokers must be an int, got {type(brokers).__name__}"
            raise TypeError(msg)
        if brokers < 1:
            msg = f"brokers must be at least 1, got {brokers}"
            raise ValueError(msg)
        super().__init__(
            LaunchSettings.from_options(
                "LocalKafkaCluster",
                options,
                default_jvm_options=CLUSTER_JVM_OPTIONS,
                default_start_timeout_s=120.0,
            )
        )
        self._brokers = brokers
        self._security = security
        self._cluster_id: str | None = None
        self._tls: TlsFiles | None = None
        self._nodes: dict[int, KafkaNode] = {}
        # node id -> listener name -> port, fixed from start() to stop().
        self._ports: dict[int, dict[str, int]] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> str:
        """Download the jars if needed, start every node and wait until the cluster is ready.

        Returns
        -------
        str
            The PLAINTEXT bootstrap servers of all nodes.

        Raises
        ------
        RuntimeError
            If this cluster is already running.
        JarResolutionError
            If the Kafka jars cannot be downloaded.
        BrokerStartError
            If a node cannot be formatted or started, or the cluster is not ready (see
            :meth:`wait_until_ready`) within ``start_timeout_s``.
        """
        if self._nodes:
            msg = f"the cluster is already running at {self.bootstrap_servers}"
            raise RuntimeError(msg)
        return self._start_tracked(PORT_ATTEMPTS)

    def stop(self) -> None:
        """Stop every node and clean up; calling it again, or before a start, does nothing.

        A broker's controlled shutdown (SIGTERM) needs the controller quorum to approve it,
        so nodes stop one by one, node 1 first (it records the class-data archive), while
        the nodes still running form a quorum; the rest are killed. Stopped all at once, or
        to the last, the last nodes would wait for a quorum already gone until
        ``stop_timeout_s`` runs out.
        """
        quorum = self._brokers // 2 + 1
        for node_id in self.live_node_ids:
            node = self._nodes[node_id]
            if len(self.live_node_ids) >= quorum:
                node.stop(self._settings.stop_timeout_s)
            else:
                node.kill()
        self._discard()

    def __repr__(self) -> str:
        """Show the nodes that run and where the data is, for test failure output."""
        if not self._nodes:
            return "LocalKafkaCluster(stopped)"
        live = ",".join(str(node) for node in self.live_node_ids)
        return (
            f"LocalKafkaCluster({self.bootstrap_servers}, live nodes {live or 'none'}, "
            f"data_dir={self._data_dir})"
        )

    # -- where and what ----------------------------------------------------------------------

    @property
    def node_ids(self) -> tuple[int, ...]:
        """Every node's id, running or not: ``1..brokers``."""
        return tuple(range(1, self._brokers + 1))

    @property
    def live_node_ids(self) -> tuple[int, ...]:
        """The ids of the nodes whose JVM is alive."""
        return tuple(node_id for node_id, node in self._nodes.items() if node.is_running)

    @property
    def bootstrap_servers(self) -> str:
        """PLAINTEXT ``host:port`` of every node, live or not, for ``bootstrap.servers``."""
        return self.bootstrap_for("PLAINTEXT")

    def bootstrap_for(self, listener: str) -> str:
        """Return ``host:port`` of every node on ``listener`` (``PLAINTEXT``, ``SASL_SSL``...).

        Raises
        ------
        ValueError
            If the cluster has no such listener.
        """
        self._require_started()
        available = self._ports[1]
        if listener not in available or listener == "CONTROLLER":
            offered = [name for name in available if name != "CONTROLLER"]
            msg = f"no listener {listener!r}; this cluster has {', '.join(offered)}"
            raise ValueError(msg)
        return ",".join(f"{LOOPBACK}:{self._ports[node][listener]}" for node in self.node_ids)

    def client_config(
        self,
        listener: str = "PLAINTEXT",
        *,
        user: str | None = None,
        mechanism: str | None = None,
        password: str | None = None,
    ) -> dict[str, str]:
        """Return librdkafka settings, ``bootstrap.servers`` included, to reach ``listener``.

        Parameters
        ----------
        listener
            ``PLAINTEXT`` or a listener of the :class:`SecurityConfig`.
        user
            The SASL user; defaults to the admin user.
        mechanism
            The SASL mechanism; defaults to the first configured one.
        password
            Overrides the user's password, to test a failed login.
        """
        bootstrap = {"bootstrap.servers": self.bootstrap_for(listener)}
        if self._security is None:
            return {**bootstrap, "security.protocol": "PLAINTEXT"}
        return {
            **bootstrap,
            **self._security.client_config(
                listener, user=user, mechanism=mechanism, password=password, tls=self._tls
            ),
        }

    @property
    def ca_path(self) -> Path:
        """The PEM file of the CA that signed the brokers' certificate (``ssl.ca.location``)."""
        if self._tls is None:
            msg = "the cluster has no SASL_SSL listener, so no certificates (see SecurityConfig)"
            raise RuntimeError(msg)
        return self._tls.ca_path

    @property
    def cluster_id(self) -> str:
        """The id every node's storage was formatted with, unique to each start."""
        self._require_started()
        assert self._cluster_id is not None
        return self._cluster_id

    @property
    def data_dir(self) -> Path:
        """The folder holding ``node-<id>`` folders (and ``tls`` when secured)."""
        self._require_started()
        assert self._data_dir is not None
        return self._data_dir

    def log_path(self, node_id: int) -> Path:
        """Return the ``server.log`` of node ``node_id``."""
        return self._node(node_id).log_path

    def log_tail(self, node_id: int | None = None, lines: int = 40) -> str:
        """Return the last log lines of one node, or of every node under a heading each."""
        if not self._nodes:
            return ""
        if node_id is not None:
            return self._node(node_id).log_tail(lines)
        return "\n".join(
            f"--- node {node} ---\n{self._nodes[node].log_tail(lines)}" for node in self.node_ids
        )

    def partition_state(self, topic: str, partition: int) -> PartitionState:
        """Return the leader, replicas and ISR of one partition from a live node's metadata.

        Raises
        ------
        KafkaMetadataError
            If no live node answers, or the topic or partition does not exist.
        """
        return partition_state(self._live_admin_config(), topic, partition)

    def leader_of(self, topic: str, partition: int) -> int:
        """Return the node id that leads ``topic``-``partition`` now.

        Raises
        ------
        KafkaMetadataError
            If the partition has no leader (see :meth:`wait_for_leader`) or does not exist.
        """
        leader = self.partition_state(topic, partition).leader
        if leader < 0:
            msg = f"{topic}-{partition} has no leader at the moment"
            raise KafkaMetadataError(msg)
        return leader

    def wait_for_leader(
        self,
        topic: str,
        partition: int,
        *,
        other_than: int | None = None,
        timeout_s: float = 60.0,
    ) -> int:
        """Wait until ``topic``-``partition`` has a leader (not ``other_than``); return it.

        After :meth:`kill`, the controller elects a new leader once the dead node misses its
        heartbeats for ``broker.session.timeout.ms`` (4 s here).

        Raises
        ------
        TimeoutError
            If no such leader is elected within ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        state: PartitionState | KafkaMetadataError | None = None
        while time.monotonic() < deadline:
            try:
                state = self.partition_state(topic, partition)
            except KafkaMetadataError as error:
                state = error
            else:
                if state.leader >= 0 and state.leader != other_than:
                    return state.leader
            time.sleep(0.1)
        msg = f"{topic}-{partition} had no leader other than {other_than} within {timeout_s} s"
        raise TimeoutError(f"{msg}; last seen: {state}")

    # -- faults ------------------------------------------------------------------------------

    def kill(self, node_id: int) -> None:
        """SIGKILL node ``node_id``, as a crash or power loss would; its data stays.

        Returns once the process is gone, not once the cluster noticed: see
        :meth:`wait_for_leader` and :meth:`wait_until_ready`.
        """
        self._node(node_id).kill()

    def stop_node(self, node_id: int) -> None:
        """Stop node ``node_id`` with SIGTERM: a controlled shutdown that moves its leaders.

        SIGKILL follows after ``stop_timeout_s``: the controllers must approve a controlled
        shutdown, so stopping a node whose loss leaves no quorum waits that long. Its data
        stays, for :meth:`restart`.
        """
        self._node(node_id).stop(self._settings.stop_timeout_s)

    def restart(self, node_id: int) -> None:
        """Start a killed or stopped node again on its data and ports; wait until it rejoined.

        Rejoined means: it serves metadata of this cluster in which every live node is
        registered, and it is back in the ISR of every partition it replicates that has a
        leader (a partition without one cannot take it back yet).

        Raises
        ------
        RuntimeError
            If the node is still running.
        BrokerStartError
            If it exits, or has not rejoined within ``start_timeout_s``.
        """
        node = self._node(node_id)
        if node.is_running:
            msg = f"node {node_id} is running: kill() or stop_node() it first"
            raise RuntimeError(msg)
        node.launch()
        deadline = time.monotonic() + self._settings.start_timeout_s
        assert self._cluster_id is not None
        wait_serving(
            node,
            self._cluster_id,
            deadline,
            brokers=frozenset(self.live_node_ids),
            timeout_s=self._settings.start_timeout_s,
        )
        lagging = lagging_partitions(self._live_admin_config(), node_id, deadline)
        if lagging:
            msg = (
                f"node {node_id} did not rejoin the ISR of {', '.join(lagging)} "
                f"within {self._settings.start_timeout_s:.0f} s"
            )
            raise node.failure(msg, node.command)

    def heal(self) -> None:
        """Restart every node that is not running, then wait until the cluster is ready.

        For a cluster shared between tests: whatever a test killed, the next one starts
        with every node up. Does nothing, quickly, when every node runs.
        """
        stopped = [node for node in self.node_ids if not self._node(node).is_running]
        for node_id in stopped:
            self.restart(node_id)
        if stopped:
            self.wait_until_ready()

    def wait_until_ready(self, timeout_s: float | None = None) -> None:
        """Wait until every live node serves and the coordinators answer.

        Ready means: every live node serves metadata of this cluster id listing every live
        node as a broker; the group coordinator answers (describing a consumer group); and
        the transaction coordinator answers (a transactional producer's
        ``init_transactions()`` succeeds). After a :meth:`kill`, it waits for the cluster to
        have moved the coordinators away from the dead node.

        Raises
        ------
        BrokerStartError
            If not ready within ``timeout_s`` (default ``start_timeout_s``).
        """
        self._wait_ready(self._settings.start_timeout_s if timeout_s is None else timeout_s)

    def allow_read(
        self,
        user: str,
        *,
        topic: str | None = None,
        group: str | None = None,
        operations: tuple[str, ...] = ("READ", "DESCRIBE"),
        timeout_s: float = 30.0,
    ) -> None:
        """Grant ``user`` READ and DESCRIBE on ``topic`` and on consumer group ``group``.

        A consumer in a group needs both; granting one alone lets a test see the error of
        the other. ``operations`` grants others, or fewer (``("DESCRIBE",)`` lets a principal
        see a topic it may not read). Returns once the authorizer lists the new ACLs, so a
        client started next is allowed.

        Raises
        ------
        ValueError
            If neither ``topic`` nor ``group`` is given.
        RuntimeError
            If the cluster runs no authorizer.
        TimeoutError
            If the ACLs are not listed within ``timeout_s``.
        """
        if self._security is None or not self._security.authorizer:
            msg = "the cluster runs no authorizer: pass SecurityConfig(authorizer=True)"
            raise RuntimeError(msg)
        # PLAINTEXT is a super user's listener here (see kafka_rescalable.testing.security).
        grant(
            self._live_admin_config(),
            user,
            topic=topic,
            group=group,
            operations=operations,
            timeout_s=timeout_s,
        )

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Block until a node exits on its own; return its exit code (``None`` on timeout)."""
        self._require_started()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while deadline is None or time.monotonic() < deadline:
            for node in self._nodes.values():
                code = node.wait(0.2)
                if code is not None:
                    return code
        return None

    # -- internals ---------------------------------------------------------------------------

    def _start_once(self, runtime: tuple[str, list[Path]]) -> None:
        data_dir = self._new_data_dir("local-kafka-cluster-")
        security = self._security
        if security is not None and security.uses_tls:
            tls_dir = data_dir / "tls"
            tls_dir.mkdir()
            self._tls = write_tls_files(tls_dir)
        listeners = ["PLAINTEXT", "CONTROLLER", *(security.listeners if security else ())]
        ports = iter(free_ports(len(listeners) * self._brokers))
        self._ports = {
            node_id: {listener: next(ports) for listener in listeners} for node_id in self.node_ids
        }
        self._cluster_id = random_cluster_id()
        for node_id in self.node_ids:
            self._nodes[node_id] = self._new_node(node_id, runtime)
        self._format_all()
        for node in self._nodes.values():
            node.launch()
        self._wait_ready(self._settings.start_timeout_s, port_retry=True)
        self._raise_offsets_min_isr()

    def _new_node(self, node_id: int, runtime: tuple[str, list[Path]]) -> KafkaNode:
        assert self._data_dir is not None
        node_dir = self._data_dir / f"node-{node_id}"
        node_dir.mkdir()
        ports = self._ports[node_id]
        replication = min(3, self._brokers)
        layout = ServerLayout(
            node_id=node_id,
            voters={node: self._ports[node]["CONTROLLER"] for node in self.node_ids},
            replication=replication,
            min_isr=min(2, replication),
        )
        extra_listeners = {
            name: port for name, port in ports.items() if name not in ("PLAINTEXT", "CONTROLLER")
        }
        properties = server_properties(layout, node_dir, ports["PLAINTEXT"], extra_listeners)
        if self._security is not None:
            properties.update(self._security.broker_properties(self._tls))
        return self._settings.node(
            runtime,
            node_id,
            ports["PLAINTEXT"],
            node_dir,
            properties,
            # One recording JVM is enough; every one spends seconds writing at exit.
            record_archive=node_id == 1,
        )

    def _format_all(self) -> None:
        """Format every node's storage at once: each is a JVM that mostly loads classes."""
        assert self._cluster_id is not None
        arguments = self._security.format_arguments() if self._security is not None else []
        errors: list[BaseException] = []

        def format_node(node: KafkaNode) -> None:
            try:
                node.format(self._cluster_id or "", arguments)
            except BaseException as error:  # re-raised below, in the caller's thread
                errors.append(error)

        threads = [
            threading.Thread(target=format_node, args=(node,), name=f"format-{node.node_id}")
            for node in self._nodes.values()
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]

    def _wait_ready(self, timeout_s: float, port_retry: bool = False) -> None:
        assert self._cluster_id is not None
        live = [self._nodes[node_id] for node_id in self.live_node_ids]
        wait_until_ready(live, self._cluster_id, timeout_s, port_retry=port_retry)

    def _raise_offsets_min_isr(self) -> None:
        """Give the consumer offsets topic the min ISR of the transaction log.

        Kafka has no broker setting for it other than the default of every topic, which
        would also break the single-replica topics test helpers create.
        """
        set_topic_min_isr(
            self._live_admin_config(),
            _OFFSETS_TOPIC,
            min(2, self._brokers),
            self._settings.start_timeout_s,
        )

    def _live_admin_config(self) -> dict[str, str | int]:
        """Admin settings over PLAINTEXT to the live nodes, quiet about dead ones."""
        live = self.live_node_ids or self.node_ids
        bootstrap = ",".join(f"{LOOPBACK}:{self._ports[node]['PLAINTEXT']}" for node in live)
        return {"bootstrap.servers": bootstrap, "log_level": 0}

    def _node(self, node_id: int) -> KafkaNode:
        self._require_started()
        if node_id not in self._nodes:
            msg = f"no node {node_id}; the nodes are {list(self.node_ids)}"
            raise ValueError(msg)
        return self._nodes[node_id]

    def _require_started(self) -> None:
        if not self._ports:
            msg = "the cluster is not running: call start() or use 'with LocalKafkaCluster()'"
            raise RuntimeError(msg)

    def _discard(self) -> None:
        """Kill what may still run, forget the nodes, and delete the data unless kept."""
        for node in self._nodes.values():
            node.kill()
        self._nodes = {}
        self._ports = {}
        self._tls = None
        self._cluster_id = None
        self._drop_data_dir()
