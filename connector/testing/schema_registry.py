"""A real Confluent-compatible schema registry on loopback, for tests of typed records.

:class:`LocalSchemaRegistry` runs Apicurio Registry (version
:data:`kafka_rescalable.testing._registry.build.APICURIO_VERSION`) in a local JVM with its in-memory
storage, and gives the base URL of its Confluent-compatible API (``/apis/ccompat/v7``), the one
confluent-kafka's ``SchemaRegistryClient`` and its Avro, Protobuf and JSON Schema serializers
talk to. It is a registry server that production runs, not an imitation of one: subjects,
versions, ids and compatibility checks are its own.

>>> with LocalSchemaRegistry() as registry:  # doctest: +SKIP
...     client = SchemaRegistryClient({"url": registry.url})

The first start builds the application from Maven Central with ``mvn`` (see
:mod:`kafka_rescalable.testing._registry.build`): some 2 1/4 minutes on two cores with an empty
Maven
repository (210 MB of jars to download), some 10 s when they are already there. The result is
cached, so later starts need neither Maven nor the network; they take some 3 s, and under 2 s
once the first clean stop has recorded a class-data archive (AppCDS, as for the broker). The
JVM has a 256 MiB heap and some 180 to 200 MB of resident memory.

The registry logs to ``registry.log`` in its data folder, never to our stdout.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from kafka_rescalable.testing._broker.class_data import PendingArchive, archive_options
from kafka_rescalable.testing._broker.config import DEFAULT_JVM_OPTIONS, LOOPBACK
from kafka_rescalable.testing._broker.process import shown_command, terminate
from kafka_rescalable.testing._broker.readiness import PortTaken, check_port_free, free_ports
from kafka_rescalable.testing._broker.server import (
    PORT_ATTEMPTS,
    StartStopContext,
    start_with_port_retries,
    track,
    untrack,
)
from kafka_rescalable.testing._registry.build import APICURIO_VERSION, registry_app
from kafka_rescalable.testing.errors import (
    BrokerStartError,
    SchemaRegistryBuildError,
    SchemaRegistryStartError,
)
from kafka_rescalable.testing.jars import find_java

__all__ = [
    "APICURIO_VERSION",
    "COMPATIBLE_API_PATH",
    "DEFAULT_REGISTRY_JVM_OPTIONS",
    "LocalSchemaRegistry",
    "SchemaRegistryBuildError",
    "SchemaRegistryStartError",
]

COMPATIBLE_API_PATH = "/apis/ccompat/v7"

# The broker's lean flags (serial GC, C1 only, no perf file, exit on OOM), with a smaller heap:
# an in-memory registry of test schemas needs little, and shares the machine with Spark.
DEFAULT_REGISTRY_JVM_OPTIONS: tuple[str, ...] = (
    "-Xmx256m",
    *(flag for flag in DEFAULT_JVM_OPTIONS if not flag.startswith("-Xmx")),
)

_LOG_NAME = "registry.log"
_LOG_TAIL_LINES = 40
_POLL_INTERVAL_S = 0.1
_REQUEST_TIMEOUT_S = 2.0
# What Quarkus (through Vert.x) logs when the HTTP port is taken.
_BIND_FAILURE = re.compile(r"BindException|Address already in use|seems to be in use")
# "2026-01-01 12:00:00 ERROR <> [class] ...": the registry's log format.
_ERROR_LINE = re.compile(r"^\S+ \S+ (ERROR|FATAL) ")
# "[3.918s][warning][cds] Skipping ...": the JVM recording a class-data archive at exit.
_CDS_LINE = re.compile(r"^\[[0-9.]+s\]\[\w+\]\[cds")


class LocalSchemaRegistry(StartStopContext):
    """Apicurio Registry on ``127.0.0.1``, in memory, with a Confluent-compatible API.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. Each instance is a
    fresh JVM with empty storage, so registries never share schemas and may run side by side.

    Parameters
    ----------
    port
        HTTP port; a free port is picked when ``None``.
    start_timeout_s
        How long a start waits for the API to answer, not counting a first build.
    stop_timeout_s
        How long a stop waits after SIGTERM before it sends SIGKILL.
    jvm_options
        Replaces :data:`DEFAULT_REGISTRY_JVM_OPTIONS`.
    class_data_sharing
        Reuse (and, at the first clean stop, record) a class-data archive to start faster.
    keep_data
        Keep the data folder (``registry.log``) after :meth:`stop`.
    app_cache_dir
        Folder for the built application, passed to
        :func:`kafka_rescalable.testing._registry.build.registry_app`.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        start_timeout_s: float = 90.0,
        stop_timeout_s: float = 30.0,
        jvm_options: Sequence[str] | None = None,
        class_data_sharing: bool = True,
        keep_data: bool = False,
        app_cache_dir: Path | None = None,
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
        self._start_timeout_s = start_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._jvm_options = tuple(
            DEFAULT_REGISTRY_JVM_OPTIONS if jvm_options is None else jvm_options
        )
        self._class_data_sharing = class_data_sharing
        self._keep_data = keep_data
        self._app_cache_dir = app_cache_dir
        self._process: subprocess.Popen[bytes] | None = None
        self._pending_archive: PendingArchive | None = None
        self._port: int | None = None
        self._data_dir: Path | None = None
        self.command: tuple[str, ...] = ()

    # -- public surface ----------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Base URL of the Confluent-compatible API, for ``SchemaRegistryClient({"url": ...})``."""
        if self._process is None or self._port is None:
            msg = (
                "the schema registry is not running: call start() or use "
                "'with LocalSchemaRegistry() as registry'"
            )
            raise RuntimeError(msg)
        return f"http://{LOOPBACK}:{self._port}{COMPATIBLE_API_PATH}"

    @property
    def log_path(self) -> Path:
        """The registry's log file (``registry.log`` in its data folder)."""
        if self._data_dir is None:
            msg = "the schema registry has no data folder: it was never started, or was stopped"
            raise RuntimeError(msg)
        return self._data_dir / _LOG_NAME

    @property
    def is_running(self) -> bool:
        """Whether the registry process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> str:
        """Build the application if needed, start the registry and wait until its API answers.

        Ready means the JVM logged that it listens on our port and the Confluent-compatible
        API answers ``GET /subjects`` with a JSON list, so a client can register at once.

        Returns
        -------
        str
            The base URL, as :attr:`url`.

        Raises
        ------
        RuntimeError
            If this instance is already running.
        SchemaRegistryBuildError
            If the application cannot be built (no ``mvn``, no network, a failed build).
        SchemaRegistryStartError
            If there is no ``java``, the registry exits during startup, or its API does not
            answer within ``start_timeout_s``; the message holds the command and the log's
            last lines.
        """
        if self._process is not None:
            msg = f"the schema registry is already running at {self.url}"
            raise RuntimeError(msg)
        run_jar = registry_app(self._app_cache_dir)
        try:
            java = find_java()
        except FileNotFoundError as error:
            raise SchemaRegistryStartError(str(error)) from error
        attempts = 1 if self._requested_port is not None else PORT_ATTEMPTS
        start_with_port_retries(lambda: self._start_once(java, run_jar), self._discard, attempts)
        track(self)
        return self.url

    def stop(self) -> None:
        """Stop the registry (SIGTERM, then SIGKILL after ``stop_timeout_s``) and clean up.

        Calling it again, or on a registry that never started, does nothing.
        """
        if self._process is not None:
            graceful = terminate(self._process, self._stop_timeout_s)
            # Only a clean exit has written the whole archive; a killed JVM left a torn one.
            if graceful and self._pending_archive is not None:
                self._pending_archive.adopt()
        self._discard()

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        """Return the registry's ERROR lines above the tail, then its last ``lines`` lines.

        A failed start logs one ERROR line and then a long stack trace that would push it out
        of a plain tail; the JVM's class-data archive warnings at exit are left out.
        """
        if self._data_dir is None:
            return ""
        kept = [
            line
            for line in self._log_text().splitlines()
            if line.strip() and not _CDS_LINE.match(line)
        ]
        tail = kept[-lines:]
        errors = [line for line in kept[: len(kept) - len(tail)] if _ERROR_LINE.match(line)]
        if errors:
            return "\n".join(["... (ERROR lines before the tail)", *errors[:10], "...", *tail])
        return "\n".join(tail)

    def __repr__(self) -> str:
        """Show where the registry listens and where its log is, for test failure output."""
        where = f"{LOOPBACK}:{self._port}" if self.is_running else "stopped"
        return f"LocalSchemaRegistry({where}, data_dir={self._data_dir})"

    # -- internals ---------------------------------------------------------------------------

    def _start_once(self, java: str, run_jar: Path) -> None:
        data_dir = Path(tempfile.mkdtemp(prefix="local-schema-registry-"))
        self._data_dir = data_dir
        if self._requested_port is not None:
            try:
                check_port_free(self._requested_port)
            except BrokerStartError as error:
                raise SchemaRegistryStartError(str(error)) from error
            port = self._requested_port
        else:
            port = free_ports(1)[0]
        self._port = port
        cds: list[str] = []
        if self._class_data_sharing:
            cds, self._pending_archive = archive_options(
                java=java,
                jvm_options=self._jvm_options,
                classpath=str(run_jar),
                data_dir=data_dir,
                tool="schema-registry",
                record=True,
            )
        self.command = (
            java,
            *self._jvm_options,
            *cds,
            # System properties outrank the registry's own application.properties.
            f"-Dquarkus.http.host={LOOPBACK}",
            f"-Dquarkus.http.port={port}",
            "-jar",
            str(run_jar),
        )
        with open(data_dir / _LOG_NAME, "ab") as log:
            # Same process group as ours, on purpose, as for the broker: Ctrl-C in a terminal,
            # or a CI runner killing the job's group, reaches the JVM too.
            self._process = subprocess.Popen(
                self.command,
                cwd=data_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._wait_ready(self._process, port, time.monotonic() + self._start_timeout_s)

    def _wait_ready(self, process: subprocess.Popen[bytes], port: int, deadline: float) -> None:
        """Poll until our JVM listens on ``port`` and the API answers, or fail with its log.

        Only our JVM's own "Listening on" line counts: until it fails to bind, another server
        on the port could answer the HTTP request too.
        """
        listening = f"Listening on: http://{LOOPBACK}:{port}"
        url = f"http://{LOOPBACK}:{port}{COMPATIBLE_API_PATH}/subjects"
        bound = False
        while True:
            code = process.poll()
            if code is not None:
                error = self._failure(f"the registry exited with code {code} during startup")
                if self._requested_port is None and _BIND_FAILURE.search(error.log_tail):
                    raise PortTaken(error)
                raise error
            bound = bound or listening in self._log_text()
            if bound and _lists_subjects(url):
                return
            if time.monotonic() > deadline:
                what = (
                    f"its API did not answer GET {url} within {self._start_timeout_s:.0f} s"
                    if bound
                    else f"it did not listen on port {port} within {self._start_timeout_s:.0f} s"
                )
                raise self._failure(what)
            time.sleep(_POLL_INTERVAL_S)

    def _log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _failure(self, what: str) -> SchemaRegistryStartError:
        tail = self.log_tail()
        where = (
            f"data folder kept at {self._data_dir}"
            if self._keep_data
            else "data folder deleted (pass keep_data=True to keep it)"
        )
        message = (
            f"Local schema registry (Apicurio Registry {APICURIO_VERSION}): {what}; {where}\n"
            f"command: {shown_command(self.command)}\n"
            f"last lines of its log:\n{tail or '(empty)'}"
        )
        return SchemaRegistryStartError(message, tail, self.command)

    def _discard(self) -> None:
        """Kill a process that may still run, forget it, and delete the data unless kept."""
        if self._process is not None and self._process.poll() is None:
            terminate(self._process, self._stop_timeout_s)
        self._process = None
        self._pending_archive = None
        self._port = None
        untrack(self)
        if self._data_dir is not None and not self._keep_data:
            shutil.rmtree(self._data_dir, ignore_errors=True)
        self._data_dir = None


def _lists_subjects(url: str) -> bool:
    """Whether ``GET url`` answers 200 with a JSON list, as the subjects endpoint does."""
    try:
        with urllib.request.urlopen(url, timeout=_REQUEST_TIMEOUT_S) as response:
            return response.status == 200 and isinstance(json.loads(response.read()), list)
    except (OSError, ValueError, urllib.error.HTTPError):
        return False
