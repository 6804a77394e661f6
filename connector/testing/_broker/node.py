"""One Kafka server JVM over a data folder: what the single broker and the cluster share.

:class:`KafkaNode` writes a node's ``server.properties`` and log configuration, formats its
KRaft storage, launches ``kafka.Kafka``, and stops or kills it. It knows nothing about how many
nodes there are: :class:`kafka_rescalable.testing.local_kafka.LocalKafka` runs one,
:class:`kafka_rescalable.testing.local_cluster.LocalKafkaCluster` several; both pick the ports and
build the properties (:mod:`kafka_rescalable.testing._broker.config`), and wait until the nodes
serve
(:mod:`kafka_rescalable.testing._broker.readiness`).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from kafka_rescalable.testing._broker.class_data import PendingArchive, archive_options
from kafka_rescalable.testing._broker.config import log4j2_config, properties_text
from kafka_rescalable.testing._broker.process import (
    last_lines,
    run_captured,
    shown_command,
    terminate,
)
from kafka_rescalable.testing._broker.readiness import PortTaken
from kafka_rescalable.testing.errors import BrokerStartError
from kafka_rescalable.testing.jars import KAFKA_VERSION

__all__ = ["KafkaNode"]

_LOG_TAIL_LINES = 40
_FORMAT_TIMEOUT_S = 120.0
_BIND_FAILURE = re.compile(r"BindException|Address already in use")
_ERROR_LINE = re.compile(r"\] (ERROR|FATAL) ")
# The "key = value" lines of the configuration dump Kafka logs at startup, three times over.
_CONFIG_DUMP_LINE = re.compile(r"^\t[\w.\-]+ = ")


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
        :func:`kafka_rescalable.testing._broker.class_data.archive_options`).
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
        self._pending_archive: PendingArchive | None = None
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
        self.config_path.write_text(properties_text(self.properties), encoding="utf-8")
        log4j_path = self.data_dir / "log4j2.properties"
        log4j_path.write_text(log4j2_config(self.log_path), encoding="utf-8")
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
            finished = run_captured(command, cwd=self.data_dir, timeout_s=_FORMAT_TIMEOUT_S)
        except OSError as error:
            msg = f"could not run java to format the KRaft storage: {error}"
            raise BrokerStartError(msg, command=command) from error
        if finished.timed_out:
            msg = f"formatting the KRaft storage took more than {_FORMAT_TIMEOUT_S:.0f} s"
            raise self.failure(msg, command, finished.output)
        if finished.returncode != 0:
            msg = f"formatting the KRaft storage failed (exit code {finished.returncode})"
            raise self.failure(msg, command, finished.output)
        if archive is not None:
            archive.adopt()

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
            graceful = terminate(self._process, timeout_s)
        if graceful and record and self._pending_archive is not None:
            self._pending_archive.adopt()
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
            tail = "\n".join([*last_lines(output, _LOG_TAIL_LINES), tail]).strip()
        where = (
            f"data folder kept at {self.data_dir}"
            if self._keep_data
            else "data folder deleted (pass keep_data=True to keep it)"
        )
        message = (
            f"Local Kafka {KAFKA_VERSION}: {what}; {where}\n"
            f"command: {shown_command(command)}\n"
            f"last lines of the broker log:\n{tail or '(empty)'}"
        )
        return BrokerStartError(message, tail, command)

    def _base_command(self) -> list[str]:
        log4j = self.data_dir / "log4j2.properties"
        return [self._java, *self._jvm_options, f"-Dlog4j2.configurationFile={log4j}"]

    def _cds_options(self, tool: str, record: bool) -> tuple[list[str], PendingArchive | None]:
        """Return JVM flags for ``tool``'s class-data archive, and the one to adopt at exit."""
        if not self._class_data_sharing:
            return [], None
        return archive_options(
            java=self._java,
            jvm_options=self._jvm_options,
            classpath=self._classpath,
            data_dir=self.data_dir,
            tool=tool,
            record=record,
        )


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
