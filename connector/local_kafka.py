"""A real single-node Apache Kafka broker on loopback, for tests and examples.

:class:`LocalKafka` runs Apache Kafka (version :data:`connector._jars.KAFKA_VERSION`) in KRaft
mode, one process that is both broker and controller, from its Maven jars (see
:mod:`connector._jars`), so a developer needs only ``pip`` and Java 17+: no Kafka download, no
Docker. It is the broker code production runs, not an emulation, so transactions, compaction
and retention behave as they do there.

>>> with LocalKafka() as kafka:  # doctest: +SKIP
...     produce_to(kafka.bootstrap_servers)

Run as a program it starts a broker and keeps it until Ctrl-C or SIGTERM::

    python -m connector.local_kafka [--port 9092] [--keep-data]
    Kafka ready at 127.0.0.1:9092 (logs: /tmp/local-kafka-.../server.log)

The broker logs to ``server.log`` in its data folder, never to our stdout. Once the jars are
cached, a start takes about 2 to 3 s on two cores (0.6 s formatting the storage, the rest the
broker's own startup). Class loading dominates both JVMs, so the first clean exit of each
records an application class-data archive (AppCDS) beside the jars, which later starts map
instead of loading and verifying the classes again: that halves the time, and makes that one
first stop some 3 s slower.
"""

from __future__ import annotations

import argparse
import atexit
import base64
import contextlib
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType

from connector._jars import (
    KAFKA_BROKER_COORDINATES,
    KAFKA_VERSION,
    JarResolutionError,
    find_java,
    resolve_jars,
)
from connector.errors import BrokerStartError

__all__ = ["DEFAULT_JVM_OPTIONS", "BrokerStartError", "LocalKafka", "main"]

DEFAULT_JVM_OPTIONS: tuple[str, ...] = (
    "-Xmx512m",
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

_LOOPBACK = "127.0.0.1"
_LOG_TAIL_LINES = 40
_FORMAT_TIMEOUT_S = 120.0
_PORT_ATTEMPTS = 3
_BIND_FAILURE = re.compile(r"BindException|Address already in use")
_ERROR_LINE = re.compile(r"\] (ERROR|FATAL) ")
# The "key = value" lines of the configuration dump Kafka logs at startup, three times over.
_CONFIG_DUMP_LINE = re.compile(r"^\t[\w.\-]+ = ")

# Brokers started by this process and not yet stopped; stopped at interpreter exit so that a
# test run interrupted between fixture setup and teardown leaves no JVM behind.
_RUNNING: set[LocalKafka] = set()
_RUNNING_LOCK = threading.Lock()


class _PortTaken(Exception):
    """A port we picked was taken by someone else between our check and the broker's bind."""

    def __init__(self, error: BrokerStartError) -> None:
        self.error = error
        super().__init__(str(error))


class LocalKafka:
    """A single-node Kafka broker in KRaft mode, on ``127.0.0.1``.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. Each instance gets a
    fresh data folder, so brokers never share state and may run side by side.

    Parameters
    ----------
    port
        Broker port; a free port is picked when ``None``. The controller always gets a free port.
    extra_properties
        ``server.properties`` entries that override or add to the defaults below.
    keep_data
        Keep the data folder (logs, ``server.properties``, topic data) after :meth:`stop`.
    start_timeout_s
        How long :meth:`start` waits for the broker to answer, not counting a first download of
        the jars.
    stop_timeout_s
        How long :meth:`stop` waits after SIGTERM before it sends SIGKILL.
    jvm_options
        Replaces :data:`DEFAULT_JVM_OPTIONS`.
    class_data_sharing
        Reuse (and, the first time, record) a class-data archive to start the JVM faster.
    jars_cache_dir
        Folder for the Kafka jars, passed to :func:`connector._jars.resolve_jars`.

    Notes
    -----
    The defaults fit a single broker and fast tests:

    - Internal topics (consumer offsets, transaction state, share-group state) have replication
      factor 1 and min ISR 1, since a single broker cannot hold more replicas; transactions
      therefore work. They get 1 partition, which creates them in milliseconds on first use.
    - ``group.initial.rebalance.delay.ms=0``: a consumer group forms without the 3 s wait.
    - ``auto.create.topics.enable=false``: tests create their topics, so a typo fails instead
      of silently creating a topic with default settings.
    - ``log.retention.ms=-1``: no time-based deletion unless a topic sets ``retention.ms``.
      Otherwise a record produced with an old timestamp would vanish within a second under the
      fast retention check below.
    - Retention is checked every second from the first second on
      (``log.retention.check.interval.ms``, ``log.initial.task.delay.ms``), and the cleaner
      looks for dirty compacted logs every 500 ms (``log.cleaner.backoff.ms``) with a 16 MiB
      dedupe buffer instead of 128 MiB of the 512 MiB heap: a topic with a short
      ``segment.ms`` and a low ``min.cleanable.dirty.ratio`` is compacted within seconds.
    - Deleted segments and topics leave the disk after 1 s instead of 60 s.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        extra_properties: Mapping[str, str] | None = None,
        keep_data: bool = False,
        start_timeout_s: float = 60.0,
        stop_timeout_s: float = 30.0,
        jvm_options: Sequence[str] | None = None,
        class_data_sharing: bool = True,
        jars_cache_dir: Path | None = None,
    ) -> None:
        if port is not None and not 0 < port < 65536:
            msg = f"port must be between 1 and 65535, got {port}"
            raise ValueError(msg)
        if start_timeout_s <= 0 or stop_timeout_s <= 0:
            msg = (
                "start_timeout_s and stop_timeout_s must be positive, got "
                f"{start_timeout_s} and {stop_timeout_s}"
            )
            raise ValueError(msg)
        self._requested_port = port
        self._extra_properties = {
            str(key): str(value) for key, value in (extra_properties or {}).items()
        }
        self._keep_data = keep_data
        self._start_timeout_s = start_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._jvm_options = tuple(DEFAULT_JVM_OPTIONS if jvm_options is None else jvm_options)
        self._class_data_sharing = class_data_sharing
        self._jars_cache_dir = jars_cache_dir

        self._process: subprocess.Popen[bytes] | None = None
        self._data_dir: Path | None = None
        self._port: int | None = None
        self._cluster_id: str | None = None
        self._pending_archive: tuple[Path, Path] | None = None

    # -- public surface ----------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        """``"127.0.0.1:PORT"`` of the running broker, for ``bootstrap.servers``."""
        if self._process is None or self._port is None:
            msg = "the broker is not running: call start() or use 'with LocalKafka() as kafka'"
            raise RuntimeError(msg)
        return f"{_LOOPBACK}:{self._port}"

    @property
    def data_dir(self) -> Path:
        """The folder holding ``server.properties``, ``server.log`` and the topic data."""
        if self._data_dir is None:
            msg = "the broker has no data folder: it was never started, or was stopped"
            raise RuntimeError(msg)
        return self._data_dir

    @property
    def log_path(self) -> Path:
        """The broker's log file (``server.log`` in :attr:`data_dir`)."""
        return self.data_dir / "server.log"

    @property
    def cluster_id(self) -> str:
        """The id this broker's storage was formatted with, unique to each start."""
        if self._cluster_id is None:
            msg = "the broker has no cluster id: it was never started, or was stopped"
            raise RuntimeError(msg)
        return self._cluster_id

    @property
    def is_running(self) -> bool:
        """Whether the broker process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> str:
        """Download the jars if needed, start the broker and wait until it answers.

        Returns
        -------
        str
            The bootstrap servers string.

        Raises
        ------
        RuntimeError
            If this instance is already running.
        JarResolutionError
            If the Kafka jars cannot be downloaded.
        BrokerStartError
            If formatting the storage or starting the broker fails, or it does not answer
            within ``start_timeout_s``; the message holds the command and the log's last lines.
        """
        if self._process is not None:
            msg = f"the broker is already running at {self.bootstrap_servers}"
            raise RuntimeError(msg)
        jars = resolve_jars(KAFKA_BROKER_COORDINATES, self._jars_cache_dir)
        try:
            java = find_java()
        except FileNotFoundError as error:
            raise BrokerStartError(str(error)) from error
        attempts = 1 if self._requested_port is not None else _PORT_ATTEMPTS
        for attempt in range(attempts):
            try:
                self._start_once(java, jars)
            except _PortTaken as taken:
                self._discard()
                if attempt == attempts - 1:
                    raise taken.error from None
                continue
            except BaseException:
                # Also on KeyboardInterrupt: a half-started JVM must not outlive us.
                self._discard()
                raise
            with _RUNNING_LOCK:
                _RUNNING.add(self)
            return self.bootstrap_servers
        raise AssertionError("unreachable: the last attempt returns or raises")

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after ``stop_timeout_s``) and clean up.

        Calling it again, or on a broker that never started, does nothing.
        """
        process = self._process
        graceful = False
        if process is not None:
            graceful = _terminate(process, self._stop_timeout_s)
        if graceful and self._pending_archive is not None:
            _adopt_archive(*self._pending_archive)
        self._discard()

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Block until the broker process exits on its own; return its exit code.

        Returns ``None`` if it is still running after ``timeout_s`` seconds.
        """
        if self._process is None:
            msg = "the broker was never started"
            raise RuntimeError(msg)
        try:
            return self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        """Return the last ``lines`` lines of the broker's log and of the JVM's console."""
        if self._data_dir is None:
            return ""
        return _log_tail(self._data_dir, lines)

    def __enter__(self) -> LocalKafka:
        """Start the broker (see :meth:`start`) and return this instance."""
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop the broker, whether or not the block raised."""
        self.stop()

    def __repr__(self) -> str:
        """Show where the broker listens and where its data is, for test failure output."""
        where = f"{_LOOPBACK}:{self._port}" if self.is_running else "stopped"
        return f"LocalKafka({where}, data_dir={self._data_dir})"

    # -- internals ---------------------------------------------------------------------------

    def _start_once(self, java: str, jars: Sequence[Path]) -> None:
        data_dir = Path(tempfile.mkdtemp(prefix="local-kafka-"))
        self._data_dir = data_dir
        if self._requested_port is not None:
            _check_port_free(self._requested_port)
            broker_port, controller_port = self._requested_port, _free_ports(1)[0]
        else:
            broker_port, controller_port = _free_ports(2)
        self._port = broker_port

        config_path = data_dir / "server.properties"
        config_path.write_text(
            _properties_text(self._server_properties(data_dir, broker_port, controller_port)),
            encoding="utf-8",
        )
        log4j_path = data_dir / "log4j2.properties"
        log4j_path.write_text(_log4j2_config(data_dir / "server.log"), encoding="utf-8")
        classpath = os.pathsep.join(str(jar) for jar in jars)
        base = [java, *self._jvm_options, f"-Dlog4j2.configurationFile={log4j_path}"]

        self._cluster_id = _random_cluster_id()
        format_cds, format_archive = self._cds_options("storage-tool", java, classpath, data_dir)
        format_command = [
            *base,
            *format_cds,
            "-cp",
            classpath,
            "kafka.tools.StorageTool",
            "format",
            "--cluster-id",
            self._cluster_id,
            "--config",
            str(config_path),
        ]
        self._format(format_command, data_dir)
        if format_archive is not None:
            _adopt_archive(*format_archive)

        broker_cds, self._pending_archive = self._cds_options("broker", java, classpath, data_dir)
        command = [*base, *broker_cds, "-cp", classpath, "kafka.Kafka", str(config_path)]
        with open(data_dir / "console.out", "ab") as console:
            # Same process group as ours, on purpose: Ctrl-C in a terminal, or a CI runner
            # killing the job's group, reaches the JVM too, so it cannot outlive a Python that
            # was killed before it could call stop(). (Kafka shuts down cleanly on SIGINT.)
            self._process = subprocess.Popen(
                command,
                cwd=data_dir,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
            )
        self._wait_until_ready(command)

    def _server_properties(
        self, data_dir: Path, broker_port: int, controller_port: int
    ) -> dict[str, str]:
        properties = {
            "process.roles": "broker,controller",
            "node.id": "1",
            # A static single-voter quorum: the node elects itself at once, and formatting
            # needs no --standalone or --initial-controllers.
            "controller.quorum.voters": f"1@{_LOOPBACK}:{controller_port}",
            "listeners": (
                f"PLAINTEXT://{_LOOPBACK}:{broker_port},CONTROLLER://{_LOOPBACK}:{controller_port}"
            ),
            "advertised.listeners": f"PLAINTEXT://{_LOOPBACK}:{broker_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(data_dir / "kraft-logs"),
            "num.partitions": "1",
            "default.replication.factor": "1",
            "min.insync.replicas": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
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
        properties.update(self._extra_properties)
        return properties

    def _cds_options(
        self, tool: str, java: str, classpath: str, data_dir: Path
    ) -> tuple[list[str], tuple[Path, Path] | None]:
        """Return JVM flags to use a class-data archive, or to record one at exit.

        The archive is only valid for the same JVM build, options and classpath, so its name
        carries a digest of them. A new archive is first written inside the data folder and
        moved into the cache only after a clean exit: a JVM killed while dumping, or two
        brokers dumping at once, can then never leave a torn file where others read it.
        """
        if not self._class_data_sharing:
            return [], None
        java_path = Path(java).resolve()
        stat = java_path.stat()
        key = "\n".join(
            [
                str(java_path),
                str(stat.st_size),
                str(stat.st_mtime_ns),
                *self._jvm_options,
                classpath,
            ]
        )
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        # Beside the jars: deleting a jar cache deletes its archives too.
        jars_dir = Path(classpath.split(os.pathsep)[0]).parent
        archive = jars_dir / "cds" / f"{tool}-{digest}.jsa"
        if archive.is_file():
            return [f"-XX:SharedArchiveFile={archive}"], None
        pending = data_dir / f"{tool}.jsa"
        return [f"-XX:ArchiveClassesAtExit={pending}"], (pending, archive)

    def _format(self, command: list[str], data_dir: Path) -> None:
        try:
            completed = subprocess.run(
                command,
                cwd=data_dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=_FORMAT_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            msg = f"formatting the KRaft storage took more than {_FORMAT_TIMEOUT_S:.0f} s"
            raise self._failure(msg, command, error.output or b"") from error
        except OSError as error:
            msg = f"could not run java to format the KRaft storage: {error}"
            raise BrokerStartError(msg, command=command) from error
        if completed.returncode != 0:
            msg = f"formatting the KRaft storage failed (exit code {completed.returncode})"
            raise self._failure(msg, command, completed.stdout)

    def _wait_until_ready(self, command: list[str]) -> None:
        """Poll until the broker serves metadata, the process dies, or the deadline passes.

        A TCP connect comes first so that the admin client, which logs every refused
        connection to stderr, is only created once something listens. Only our cluster id
        counts as an answer: until the JVM fails to bind, another broker on the port would
        answer too.
        """
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        assert self._process is not None and self._port is not None
        deadline = time.monotonic() + self._start_timeout_s
        admin: AdminClient | None = None
        while True:
            code = self._process.poll()
            if code is not None:
                error = self._failure(f"the broker exited with code {code} during startup", command)
                if self._requested_port is None and _BIND_FAILURE.search(error.log_tail):
                    raise _PortTaken(error)
                raise error
            if time.monotonic() > deadline:
                msg = f"the broker did not answer within {self._start_timeout_s:.0f} s"
                raise self._failure(msg, command)
            if _accepts_connections(self._port):
                if admin is None:
                    # Silent: its connection errors while the broker boots are expected, and
                    # a failure is reported with the broker's own log instead.
                    admin = AdminClient(
                        {"bootstrap.servers": f"{_LOOPBACK}:{self._port}", "log_level": 0}
                    )
                try:
                    metadata = admin.list_topics(timeout=1.0)
                except KafkaException:
                    metadata = None
                if metadata is not None and metadata.cluster_id == self._cluster_id:
                    return
            time.sleep(0.05)

    def _failure(self, what: str, command: Sequence[str], output: bytes = b"") -> BrokerStartError:
        assert self._data_dir is not None
        tail = _log_tail(self._data_dir, _LOG_TAIL_LINES)
        if output:
            printed = output.decode("utf-8", errors="replace").splitlines()
            tail = "\n".join([*printed[-_LOG_TAIL_LINES:], tail]).strip()
        where = (
            f"data folder kept at {self._data_dir}"
            if self._keep_data
            else "data folder deleted (pass keep_data=True to keep it)"
        )
        message = (
            f"Local Kafka {KAFKA_VERSION}: {what}; {where}\n"
            f"command: {_shown_command(command)}\n"
            f"last lines of the broker log:\n{tail or '(empty)'}"
        )
        return BrokerStartError(message, tail, command)

    def _discard(self) -> None:
        """Kill a process that may still run, forget it, and delete the data unless kept."""
        if self._process is not None and self._process.poll() is None:
            _terminate(self._process, self._stop_timeout_s)
        self._process = None
        self._pending_archive = None
        with _RUNNING_LOCK:
            _RUNNING.discard(self)
        if self._data_dir is not None and not self._keep_data:
            shutil.rmtree(self._data_dir, ignore_errors=True)
        self._data_dir = None
        self._port = None
        self._cluster_id = None


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


def _free_ports(count: int) -> list[int]:
    """Return ``count`` distinct ports that were free on loopback a moment ago.

    All sockets are held open together so the kernel cannot hand out the same port twice. The
    broker binds them a second later, so another process can still win the race: the caller
    retries on a bind failure.
    """
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((_LOOPBACK, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _check_port_free(port: int) -> None:
    """Fail at once, and clearly, if a port the caller chose is taken on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As Java server sockets do on Unix: a port whose old connections are in TIME_WAIT
        # counts as free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((_LOOPBACK, port))
        except OSError as error:
            msg = f"port {port} on {_LOOPBACK} is already in use ({error.strerror})"
            raise BrokerStartError(msg) from error


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection((_LOOPBACK, port), timeout=0.5):
            return True
    except OSError:
        return False


def _random_cluster_id() -> str:
    """Return a cluster id as Kafka writes one: 16 random bytes in URL-safe base64, no padding.

    Like Kafka's own ``Uuid.randomUuid``, it never starts with ``-``, which a command line
    would take for an option.
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _properties_text(properties: Mapping[str, str]) -> str:
    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("\n", "\\n")

    lines = [f"{escape(key)}={escape(value)}" for key, value in properties.items()]
    return "# Written by connector.local_kafka.LocalKafka\n" + "\n".join(lines) + "\n"


def _log4j2_config(log_path: Path) -> str:
    file_name = str(log_path).replace("\\", "\\\\")
    return f"""# Written by connector.local_kafka.LocalKafka: all to one file, nothing to stdout.
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


@atexit.register
def _stop_all() -> None:
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for kafka in running:
        kafka.stop()


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Run a broker until Ctrl-C or SIGTERM; return the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m connector.local_kafka",
        description=f"Run a single-node Apache Kafka {KAFKA_VERSION} broker on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=None, help="broker port (default: a free one)")
    parser.add_argument(
        "--keep-data", action="store_true", help="keep the data folder and logs after stopping"
    )
    args = parser.parse_args(argv)

    # SIGTERM takes the same path as Ctrl-C, so both stop the broker before we exit. SIGINT is
    # set too because a shell starting us in the background (`... &`) makes Python ignore it.
    signal.signal(signal.SIGINT, _raise_interrupt)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    kafka = LocalKafka(port=args.port, keep_data=args.keep_data)
    try:
        kafka.start()
        print(f"Kafka ready at {kafka.bootstrap_servers} (logs: {kafka.log_path})", flush=True)
        code = kafka.wait()
        print(
            f"Kafka exited on its own with code {code}; last lines of its log:\n{kafka.log_tail()}",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        return 0
    except (BrokerStartError, JarResolutionError) as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        # A second Ctrl-C must not cut the shutdown short and orphan the JVM.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        kafka.stop()


if __name__ == "__main__":
    sys.exit(main())
