"""What :class:`LocalKafka` and :class:`LocalKafkaCluster` share around their nodes.

Their launch options (:class:`LaunchOptions`, checked once into :class:`LaunchSettings`), the
start that retries when another process takes a port we picked, the data folder deleted
unless kept, ``with`` support, and the stop at interpreter exit of whatever is still running
(:class:`LocalServer` holds all of it). The two classes differ only in their nodes.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Protocol, Self, TypedDict

from kafka_rescalable.testing._broker.node import KafkaNode
from kafka_rescalable.testing._broker.readiness import PortTaken
from kafka_rescalable.testing.errors import BrokerStartError
from kafka_rescalable.testing.jars import KAFKA_BROKER_COORDINATES, find_java, resolve_jars

__all__ = [
    "PORT_ATTEMPTS",
    "LaunchOptions",
    "LaunchSettings",
    "LocalServer",
    "StartStopContext",
    "start_with_port_retries",
    "track",
    "untrack",
]

PORT_ATTEMPTS = 3


class LaunchOptions(TypedDict, total=False):
    """The keyword arguments :class:`LocalKafka` and :class:`LocalKafkaCluster` both take.

    Attributes
    ----------
    extra_properties
        ``server.properties`` entries that override or add to the defaults of every node.
    keep_data
        Keep the data folder (logs, ``server.properties``, topic data) after ``stop()``;
        default ``False``.
    start_timeout_s
        How long a start waits for the nodes to be ready, not counting a first download of
        the jars; each class has its own default.
    stop_timeout_s
        How long a stop waits after SIGTERM before it sends SIGKILL; default 30 s.
    jvm_options
        Replaces the class's default heap and JVM flags.
    class_data_sharing
        Reuse (and, the first time, record) a class-data archive to start the JVMs faster;
        default ``True``.
    jars_cache_dir
        Folder for the Kafka jars, passed to :func:`kafka_rescalable.testing.jars.resolve_jars`.
    """

    extra_properties: Mapping[str, str] | None
    keep_data: bool
    start_timeout_s: float
    stop_timeout_s: float
    jvm_options: Sequence[str] | None
    class_data_sharing: bool
    jars_cache_dir: Path | None


_LAUNCH_OPTION_NAMES = LaunchOptions.__optional_keys__ | LaunchOptions.__required_keys__


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


@dataclass(frozen=True)
class LaunchSettings:
    """How a local broker or cluster runs its JVMs: :class:`LaunchOptions`, checked, no ``None``.

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
        Folder for the Kafka jars, passed to :func:`kafka_rescalable.testing.jars.resolve_jars`.

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

    @classmethod
    def from_options(
        cls,
        owner: str,
        options: LaunchOptions,
        *,
        default_jvm_options: tuple[str, ...],
        default_start_timeout_s: float,
    ) -> LaunchSettings:
        """Return the settings of ``options`` as passed to ``owner``'s constructor.

        Raises
        ------
        TypeError
            If ``options`` holds a name :class:`LaunchOptions` does not know, as Python would
            for a constructor that listed its keyword arguments.
        ValueError
            If a timeout is not positive.
        """
        unknown = sorted(set(options) - _LAUNCH_OPTION_NAMES)
        if unknown:
            msg = (
                f"{owner}() got unexpected keyword arguments {unknown}; "
                f"it takes {sorted(_LAUNCH_OPTION_NAMES)}"
            )
            raise TypeError(msg)
        jvm_options = options.get("jvm_options")
        return cls(
            jvm_options=tuple(default_jvm_options if jvm_options is None else jvm_options),
            extra_properties=options.get("extra_properties") or {},
            keep_data=options.get("keep_data", False),
            start_timeout_s=options.get("start_timeout_s", default_start_timeout_s),
            stop_timeout_s=options.get("stop_timeout_s", 30.0),
            class_data_sharing=options.get("class_data_sharing", True),
            jars_cache_dir=options.get("jars_cache_dir"),
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


class LocalServer(StartStopContext):
    """A local broker or cluster: settings, a start that retries on port races, its data folder.

    Subclasses start their nodes in ``_start_once`` (pick ports, format, launch, wait; raise
    :class:`PortTaken` on a lost port race), kill and forget them in ``_discard`` (which calls
    :meth:`_drop_data_dir`), and give their address in ``bootstrap_servers``.

    Parameters
    ----------
    settings
        How the nodes run.
    """

    def __init__(self, settings: LaunchSettings) -> None:
        self._settings = settings
        self._data_dir: Path | None = None

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` list of the running server, for ``bootstrap.servers``."""
        raise NotImplementedError

    def _start_once(self, runtime: tuple[str, list[Path]]) -> None:
        raise NotImplementedError

    def _discard(self) -> None:
        raise NotImplementedError

    def _start_tracked(self, port_attempts: int) -> str:
        """Resolve the jars, start with retries, and stop at interpreter exit unless stopped."""
        runtime = self._settings.java_and_jars()
        start_with_port_retries(lambda: self._start_once(runtime), self._discard, port_attempts)
        track(self)
        return self.bootstrap_servers

    def _new_data_dir(self, prefix: str) -> Path:
        self._data_dir = Path(tempfile.mkdtemp(prefix=prefix))
        return self._data_dir

    def _drop_data_dir(self) -> None:
        """Forget this server at exit and delete its data folder unless it is kept."""
        untrack(self)
        if self._data_dir is not None and not self._settings.keep_data:
            shutil.rmtree(self._data_dir, ignore_errors=True)
        self._data_dir = None
