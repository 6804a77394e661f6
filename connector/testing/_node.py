"""One Kafka server JVM over a data folder: what the single broker and the cluster share.

:class:`KafkaNode` writes a node's ``server.properties`` and log configuration, formats its
KRaft storage, launches ``kafka.Kafka``, waits until it serves metadata, and stops or kills
it. It knows nothing about how many nodes there are:
:class:`connector.testing.local_kafka.LocalKafka` runs one,
:class:`connector.testing.local_cluster.LocalKafkaCluster` several, and both pick the ports
and build the properties (see :func:`server_properties`).

Class loading dominates every start of these JVMs, so the first clean exit of a tool records
an application class-data archive (AppCDS) beside the jars, which later starts map instead of
loading and verifying the classes again (see :meth:`KafkaNode._cds_options`).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import hashlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Protocol, Self

from connector.testing.errors import BrokerStartError
from connector.testing.jars import KAFKA_BROKER_COORDINATES, KAFKA_VERSION, find_java, resolve_jars
from state.errors import KafkaRescalableError

__all__ = [
    "CLUSTER_JVM_OPTIONS",
    "DEFAULT_JVM_OPTIONS",
    "LOOPBACK",
    "KafkaNode",
    "LaunchSettings",
    "PortTaken",
    "ServerLayout",
    "StartStopContext",
    "check_port_free",
    "free_ports",
    "random_cluster_id",
    "server_properties",
    "start_with_port_retries",
    "track",
    "untrack",
    "wait_for_coordinators",
    "wait_until_ready",
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
PORT_ATTEMPTS = 3
_LOG_TAIL_LINES = 40
_FORMAT_TIMEOUT_S = 120.0
_BIND_FAILURE = re.compile(r"BindException|Address already in use")
_ERROR_LINE = re.compile(r"\] (ERROR|FATAL) ")
# The "key = value" lines of the configuration dump Kafka logs at startup, three times over.
_CONFIG_DUMP_LINE = re.compile(r"^\t[\w.\-]+ = ")


class _Stoppable(Protocol):
    def stop(self) -> None: ...


# Brokers and clusters started by this process and not yet stopped; stopped at interpreter
# exit so that a test run interrupted between fixture setup and teardown leaves no JVM behind.
_RUNNING: set[_Stoppable] = set()
_RUNNING_LOCK = threading.Lock()


def track(server: _Stoppable) -> None:
    """Stop ``server`` at interpreter exit unless :func:`untrack` is called first."""
    with _RUNNING_LOCK:
        _RUNNING.add(server)


def untrack(server: _Stoppable) -> None:
    """Forget ``server``: it was stopped by its owner."""
    with _RUNNING_LOCK:
        _RUNNING.discard(server)


@atexit.register
def _stop_all() -> None:
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for server in running:
        server.stop()


class StartStopContext:
    """``with`` support for a server with ``start()`` and ``stop()``: start on entry, stop on exit.

    The stop runs whether or not the block raised, so a failing test leaves no JVM behind.
    """

    def start(self) -> str:
        """Start the server; return its bootstrap servers."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the server and clean up."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        """Start (see :meth:`start`) and return this instance."""
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop, whether or not the block raised."""
        self.stop()


class PortTaken(KafkaRescalableError):
    """A port we picked was taken by someone else between our check and the broker's bind.

    Internal: callers that picked the ports themselves retry with new ones, and raise
    :attr:`error` when they give up.
    """

    def __init__(self, error: BrokerStartError) -> None:
        self.error = error
        super().__init__(str(error))


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


@dataclass(frozen=True)
class LaunchSettings:
    """How a local broker or cluster runs its JVMs: the options both constructors take.

    Parameters
    ----------
    jvm_options
        Heap and other JVM flags.
    extra_properties
        ``server.properties`` entries that override or add to the defaults of every node.
    keep_data
        Keep the data folder after stopping.
    start_timeout_s
        How long a start waits for readiness, not counting a first download of the jars.
    stop_timeout_s
        How long a stop waits after SIGTERM before it sends SIGKILL.
    class_data_sharing
        Reuse (and, the first time, record) class-data archives to start JVMs faster.
    jars_cache_dir
        Folder for the Kafka jars, passed to :func:`connector.testing.jars.resolve_jars`.

    Raises
    ------
    ValueError
        If a timeout is not positive.
    """

    jvm_options: tuple[str, ...]
    extra_properties: Mapping[str, str]
    keep_data: bool
    start_timeout_s: float
    stop_timeout_s: float
    class_data_sharing: bool
    jars_cache_dir: Path | None

    def __post_init__(self) -> None:
        """Check the timeouts and take private copies of the sequences and mappings."""
        if self.start_timeout_s <= 0 or self.stop_timeout_s <= 0:
            msg = (
                "start_timeout_s and stop_timeout_s must be positive, got "
                f"{self.start_timeout_s} and {self.stop_timeout_s}"
            )
            raise ValueError(msg)
        object.__setattr__(self, "jvm_options", tuple(self.jvm_options))
        extra = {str(key): str(value) for key, value in self.extra_properties.items()}
        object.__setattr__(self, "extra_properties", MappingProxyType(extra))

    def __hash__(self) -> int:
        """Hash the settings, the extra properties as their sorted items."""
        return hash(
            (
                self.jvm_options,
                tuple(sorted(self.extra_properties.items())),
                self.keep_data,
                self.start_timeout_s,
                self.stop_timeout_s,
                self.class_data_sharing,
                self.jars_cache_dir,
            )
        )

    def java_and_jars(self) -> tuple[str, list[Path]]:
        """Return the ``java`` executable and the Kafka classpath, downloading it once.

        Raises
        ------
        JarResolutionError
            If the Kafka jars cannot be downloaded.
        BrokerStartError
            If there is no ``java``.
        """
        jars = resolve_jars(KAFKA_BROKER_COORDINATES, self.jars_cache_dir)
        try:
            java = find_java()
        except FileNotFoundError as error:
            raise BrokerStartError(str(error)) from error
        return java, jars

    def node(
        self,
        runtime: tuple[str, Sequence[Path]],
        node_id: int,
        port: int,
        data_dir: Path,
        properties: Mapping[str, str],
        *,
        record_archive: bool = True,
    ) -> KafkaNode:
        """Return a :class:`KafkaNode` run with these settings; ``extra_properties`` win."""
        java, jars = runtime
        return KafkaNode(
            node_id=node_id,
            port=port,
            data_dir=data_dir,
            properties={**properties, **self.extra_properties},
            java=java,
            jars=jars,
            jvm_options=self.jvm_options,
            class_data_sharing=self.class_data_sharing,
            record_archive=record_archive,
            keep_data=self.keep_data,
        )


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


class KafkaNode:
    """One ``kafka.Kafka`` process in KRaft mode over a data folder it does not own.

    The folder outlives the process, so a node can be killed and started again on the same
    data and ports; deleting the folder is the owner's job.

    Parameters
    ----------
    node_id
        The node's ``node.id``, used in messages.
    port
        The node's PLAINTEXT listener, which our own checks use.
    data_dir
        The node's folder: ``server.properties``, ``server.log``, ``console.out`` and
        ``kraft-logs`` go there. It must exist.
    properties
        The node's complete ``server.properties``.
    java
        The ``java`` executable.
    jars
        The Kafka classpath.
    jvm_options
        Heap and other JVM flags.
    class_data_sharing
        Use, and if ``record_archive`` record, the class-data archives (see
        :meth:`_cds_options`).
    record_archive
        Whether this node records a missing broker archive at its first clean exit. In a
        cluster one node is enough: every recording JVM spends some 3 s writing it.
    keep_data
        Only for messages: whether the owner keeps the folder after a failure.
    """

    def __init__(
        self,
        *,
        node_id: int,
        port: int,
        data_dir: Path,
        properties: Mapping[str, str],
        java: str,
        jars: Sequence[Path],
        jvm_options: Sequence[str],
        class_data_sharing: bool,
        record_archive: bool = True,
        keep_data: bool = False,
    ) -> None:
        self.node_id = node_id
        self.port = port
        self.data_dir = data_dir
        self.properties = dict(properties)
        self._java = java
        self._classpath = os.pathsep.join(str(jar) for jar in jars)
        self._jvm_options = tuple(jvm_options)
        self._class_data_sharing = class_data_sharing
        self._record_archive = record_archive
        self._keep_data = keep_data
        self._process: subprocess.Popen[bytes] | None = None
        self._pending_archive: tuple[Path, Path] | None = None
        self.command: tuple[str, ...] = ()

    @property
    def config_path(self) -> Path:
        """The node's ``server.properties``."""
        return self.data_dir / "server.properties"

    @property
    def log_path(self) -> Path:
        """The node's ``server.log``."""
        return self.data_dir / "server.log"

    @property
    def is_running(self) -> bool:
        """Whether the node's JVM is alive."""
        return self._process is not None and self._process.poll() is None

    def format(self, cluster_id: str, extra_arguments: Sequence[str] = ()) -> None:
        """Write the configuration files and format the KRaft storage with ``cluster_id``.

        Parameters
        ----------
        cluster_id
            The id every node of one cluster shares.
        extra_arguments
            More arguments for ``kafka.tools.StorageTool format``, such as ``--add-scram``.

        Raises
        ------
        BrokerStartError
            If the storage tool fails or hangs; the message holds its output.
        """
        self.config_path.write_text(_properties_text(self.properties), encoding="utf-8")
        log4j_path = self.data_dir / "log4j2.properties"
        log4j_path.write_text(_log4j2_config(self.log_path), encoding="utf-8")
        cds, archive = self._cds_options("storage-tool", record=True)
        command = [
            *self._base_command(),
            *cds,
            "-cp",
            self._classpath,
            "kafka.tools.StorageTool",
            "format",
            "--cluster-id",
            cluster_id,
            "--config",
            str(self.config_path),
            *extra_arguments,
        ]
        try:
            completed = subprocess.run(
                command,
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=_FORMAT_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            msg = f"formatting the KRaft storage took more than {_FORMAT_TIMEOUT_S:.0f} s"
            raise self.failure(msg, command, error.output or b"") from error
        except OSError as error:
            msg = f"could not run java to format the KRaft storage: {error}"
            raise BrokerStartError(msg, command=command) from error
        if completed.returncode != 0:
            msg = f"formatting the KRaft storage failed (exit code {completed.returncode})"
            raise self.failure(msg, command, completed.stdout)
        if archive is not None:
            _adopt_archive(*archive)

    def launch(self) -> None:
        """Start the JVM on the formatted storage; return without waiting for it to serve."""
        if self.is_running:
            msg = f"node {self.node_id} is already running"
            raise RuntimeError(msg)
        cds, self._pending_archive = self._cds_options("broker", record=self._record_archive)
        self.command = (
            *self._base_command(),
            *cds,
            "-cp",
            self._classpath,
            "kafka.Kafka",
            str(self.config_path),
        )
        with open(self.data_dir / "console.out", "ab") as console:
            # Same process group as ours, on purpose: Ctrl-C in a terminal, or a CI runner
            # killing the job's group, reaches the JVM too, so it cannot outlive a Python that
            # was killed before it could call stop(). (Kafka shuts down cleanly on SIGINT.)
            self._process = subprocess.Popen(
                self.command,
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
            )

    def check_alive(self, port_retry: bool) -> None:
        """Raise if the JVM has exited, as :class:`PortTaken` if it lost a port race.

        Parameters
        ----------
        port_retry
            Whether the caller picked the ports and would retry with new ones; otherwise a
            bind failure is a :class:`BrokerStartError` like any other.
        """
        assert self._process is not None
        code = self._process.poll()
        if code is None:
            return
        error = self.failure(f"the broker exited with code {code} during startup", self.command)
        if port_retry and _BIND_FAILURE.search(error.log_tail):
            raise PortTaken(error)
        raise error

    def wait_serving(
        self,
        cluster_id: str,
        deadline: float,
        *,
        brokers: frozenset[int] = frozenset(),
        port_retry: bool = False,
        timeout_s: float,
    ) -> None:
        """Poll until this node serves metadata of ``cluster_id`` listing ``brokers``.

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
            See :meth:`check_alive`.
        timeout_s
            Only for the message: the timeout ``deadline`` stands for.

        Raises
        ------
        BrokerStartError
            If the process dies or the deadline passes; with the log's last lines.
        """
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        wanted = brokers | {self.node_id}
        seen = "no answer"
        admin: AdminClient | None = None
        while True:
            self.check_alive(port_retry)
            if time.monotonic() > deadline:
                msg = f"the broker did not answer within {timeout_s:.0f} s ({seen})"
                raise self.failure(msg, self.command)
            if _accepts_connections(self.port):
                if admin is None:
                    # Silent: its connection errors while the broker boots are expected, and
                    # a failure is reported with the broker's own log instead.
                    admin = AdminClient(
                        {"bootstrap.servers": f"{LOOPBACK}:{self.port}", "log_level": 0}
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

    def stop(self, timeout_s: float, *, record: bool = True) -> bool:
        """SIGTERM (a controlled shutdown), then SIGKILL after ``timeout_s``.

        Parameters
        ----------
        timeout_s
            How long to wait after SIGTERM.
        record
            Whether a class-data archive written at a clean exit goes into the cache: not
            after a failed start, whose JVM loaded only part of the classes.

        Returns
        -------
        bool
            Whether the node ended without SIGKILL (or was not running).
        """
        graceful = True
        if self._process is not None:
            graceful = _terminate(self._process, timeout_s)
        if graceful and record and self._pending_archive is not None:
            _adopt_archive(*self._pending_archive)
        self._process = None
        self._pending_archive = None
        return graceful

    def kill(self) -> None:
        """SIGKILL the JVM, as a crash would, and wait until it is gone; the data stays."""
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            self._process.wait()
        self._process = None
        self._pending_archive = None

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Block until the JVM exits on its own; return its exit code, or ``None`` on timeout."""
        if self._process is None:
            msg = f"node {self.node_id} was never started"
            raise RuntimeError(msg)
        try:
            return self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        """Return the JVM's console output, the log's ERROR lines, then its last lines."""
        return _log_tail(self.data_dir, lines)

    def failure(self, what: str, command: Sequence[str], output: bytes = b"") -> BrokerStartError:
        """Return a :class:`BrokerStartError` naming ``what`` with the command and log tail."""
        tail = _log_tail(self.data_dir, _LOG_TAIL_LINES)
        if output:
            printed = output.decode("utf-8", errors="replace").splitlines()
            tail = "\n".join([*printed[-_LOG_TAIL_LINES:], tail]).strip()
        where = (
            f"data folder kept at {self.data_dir}"
            if self._keep_data
            else "data folder deleted (pass keep_data=True to keep it)"
        )
        message = (
            f"Local Kafka {KAFKA_VERSION}: {what}; {where}\n"
            f"command: {_shown_command(command)}\n"
            f"last lines of the broker log:\n{tail or '(empty)'}"
        )
        return BrokerStartError(message, tail, command)

    def _base_command(self) -> list[str]:
        log4j = self.data_dir / "log4j2.properties"
        return [self._java, *self._jvm_options, f"-Dlog4j2.configurationFile={log4j}"]

    def _cds_options(self, tool: str, record: bool) -> tuple[list[str], tuple[Path, Path] | None]:
        """Return JVM flags to use a class-data archive, or to record one at exit.

        The archive is only valid for the same JVM build, options and classpath, so its name
        carries a digest of them. A new archive is first written inside the data folder and
        moved into the cache only after a clean exit: a JVM killed while dumping, or two
        brokers dumping at once, can then never leave a torn file where others read it.
        """
        if not self._class_data_sharing:
            return [], None
        java_path = Path(self._java).resolve()
        stat = java_path.stat()
        key = "\n".join(
            [
                str(java_path),
                str(stat.st_size),
                str(stat.st_mtime_ns),
                *self._jvm_options,
                self._classpath,
            ]
        )
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        # Beside the jars: deleting a jar cache deletes its archives too.
        jars_dir = Path(self._classpath.split(os.pathsep)[0]).parent
        archive = jars_dir / "cds" / f"{tool}-{digest}.jsa"
        if archive.is_file():
            return [f"-XX:SharedArchiveFile={archive}"], None
        if not record:
            return [], None
        pending = self.data_dir / f"{tool}.jsa"
        return [f"-XX:ArchiveClassesAtExit={pending}"], (pending, archive)


def start_with_port_retries(
    start_once: Callable[[], None], discard: Callable[[], None], attempts: int
) -> None:
    """Run ``start_once`` until no port race spoils it, cleaning up after every failure.

    Parameters
    ----------
    start_once
        Picks ports, starts, waits; raises :class:`PortTaken` when another process won a port.
    discard
        Kills what ``start_once`` started and forgets its ports and data.
    attempts
        How many port picks to try; 1 when the caller chose the ports.
    """
    for attempt in range(attempts):
        try:
            start_once()
            return
        except PortTaken as taken:
            discard()
            if attempt == attempts - 1:
                raise taken.error from None
        except BaseException:
            # Also on KeyboardInterrupt: a half-started JVM must not outlive us.
            discard()
            raise


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
        node.wait_serving(
            cluster_id, deadline, brokers=brokers, port_retry=port_retry, timeout_s=timeout_s
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
    from confluent_kafka import KafkaError, KafkaException, Producer
    from confluent_kafka.admin import AdminClient

    quiet = {**client_config, "log_level": 0}
    probe = f"local-kafka-ready-{uuid.uuid4().hex}"
    last = "not asked yet"
    admin = AdminClient(quiet)
    group_answered = False
    while not group_answered:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return f"group coordinator: {last}"
        future = admin.describe_consumer_groups([probe], request_timeout=min(remaining, 5.0))[probe]
        try:
            future.result(timeout=remaining + 5.0)
            group_answered = True
        except TimeoutError:
            last = "no answer to a describe_consumer_groups request"
        except KafkaException as error:
            kafka_error = error.args[0]
            # An unknown group is a coordinator's answer too.
            group_answered = kafka_error.code() == KafkaError.GROUP_ID_NOT_FOUND
            last = str(kafka_error)
            if not group_answered:
                time.sleep(0.1)
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


def random_cluster_id() -> str:
    """Return a cluster id as Kafka writes one: 16 random bytes in URL-safe base64, no padding.

    Like Kafka's own ``Uuid.randomUuid``, it never starts with ``-``, which a command line
    would take for an option.
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


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


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=0.5):
            return True
    except OSError:
        return False


def _shown_command(command: Sequence[str]) -> str:
    """Return the command as text, its classpath of some 50 jars shortened to their folder."""
    shown = list(command)
    for index, argument in enumerate(shown[:-1]):
        if argument == "-cp":
            jars = shown[index + 1].split(os.pathsep)
            folder = Path(jars[0]).parent
            shown[index + 1] = f"<{len(jars)} jars in {folder}>"
    return " ".join(shown)


def _terminate(process: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """SIGTERM, wait, then SIGKILL; return whether the process ended without SIGKILL."""
    if process.poll() is not None:
        return True
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        process.wait(timeout_s)
        return True
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()
        return False


def _adopt_archive(pending: Path, archive: Path) -> None:
    if not pending.is_file() or pending.stat().st_size == 0:
        return
    archive.parent.mkdir(parents=True, exist_ok=True)
    # Copy beside the target, then rename: readers see the old file or the whole new one.
    fd, temp_name = tempfile.mkstemp(dir=archive.parent, prefix=f".{archive.name}.")
    os.close(fd)
    try:
        shutil.copyfile(pending, temp_name)
        os.replace(temp_name, archive)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
    with contextlib.suppress(OSError):
        pending.unlink()


def _properties_text(properties: Mapping[str, str]) -> str:
    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("\n", "\\n")

    lines = [f"{escape(key)}={escape(value)}" for key, value in properties.items()]
    return "# Written by connector.testing.local_kafka\n" + "\n".join(lines) + "\n"


def _log4j2_config(log_path: Path) -> str:
    file_name = str(log_path).replace("\\", "\\\\")
    return f"""# Written by connector.testing.local_kafka: all to one file, nothing to stdout.
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


def _log_tail(data_dir: Path, lines: int) -> str:
    """Return the JVM's console output, the log's ERROR lines, then its last ``lines`` lines.

    The ERROR lines come first because a fatal startup error is followed by dozens of
    shutdown lines that would push it out of a plain tail.
    """
    parts: list[str] = []
    console = _read_lines(data_dir / "console.out")
    if console:
        parts.extend(console[-lines:])
    log = [
        line for line in _read_lines(data_dir / "server.log") if not _CONFIG_DUMP_LINE.match(line)
    ]
    tail = log[-lines:]
    earlier = log[: len(log) - len(tail)]
    errors = [line for line in earlier if _ERROR_LINE.search(line)][:10]
    if errors:
        parts.append("... (ERROR lines before the tail)")
        parts.extend(errors)
        parts.append("... (last lines)")
    parts.extend(tail)
    return "\n".join(parts)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
