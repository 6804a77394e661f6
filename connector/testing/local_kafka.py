"""A real single-node Apache Kafka broker on loopback, for tests and examples.

:class:`LocalKafka` runs Apache Kafka (version :data:`kafka_rescalable.testing.jars.KAFKA_VERSION`)
in KRaft mode, one process that is both broker and controller, from its Maven jars (see
:mod:`kafka_rescalable.testing.jars`), so a developer needs only ``pip`` and Java 17+: no Kafka
download, no Docker. It is the broker code production runs, not an emulation, so
transactions, compaction and retention behave as they do there.

>>> with LocalKafka() as kafka:  # doctest: +SKIP
...     produce_to(kafka.bootstrap_servers)

Run as a program it starts a broker (or, with ``--brokers N``, a cluster of N nodes, see
:class:`kafka_rescalable.testing.local_cluster.LocalKafkaCluster`) and keeps it until Ctrl-C or
SIGTERM (``python -m kafka_rescalable.testing.local_kafka`` is the same program, and so is the
older ``python -m kafka_rescalable.local_kafka``)::

    kafka-rescalable-local-kafka [--port 9092] [--brokers N] [--keep-data]
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
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Unpack

from kafka_rescalable.testing._broker.config import (
    DEFAULT_JVM_OPTIONS,
    LOOPBACK,
    ServerLayout,
    random_cluster_id,
    server_properties,
)
from kafka_rescalable.testing._broker.node import KafkaNode
from kafka_rescalable.testing._broker.readiness import check_port_free, free_ports, wait_until_ready
from kafka_rescalable.testing._broker.server import (
    PORT_ATTEMPTS,
    LaunchOptions,
    LaunchSettings,
    LocalServer,
)
from kafka_rescalable.testing.errors import BrokerStartError
from kafka_rescalable.testing.jars import KAFKA_VERSION, JarResolutionError
from kafka_rescalable.testing.local_cluster import LocalKafkaCluster

__all__ = ["DEFAULT_JVM_OPTIONS", "BrokerStartError", "LocalKafka", "main"]


class LocalKafka(LocalServer):
    """A single-node Kafka broker in KRaft mode, on ``127.0.0.1``.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. Each instance gets a
    fresh data folder, so brokers never share state and may run side by side.

    Parameters
    ----------
    port
        Broker port; a free port is picked when ``None``. The controller always gets a free port.

    Other Parameters
    ----------------
    **options
        The :class:`kafka_rescalable.testing._broker.server.LaunchOptions`: ``extra_properties``,
        ``keep_data``, ``start_timeout_s`` (default 60 s), ``stop_timeout_s``, ``jvm_options``
        (default :data:`DEFAULT_JVM_OPTIONS`), ``class_data_sharing`` and ``jars_cache_dir``.

    Notes
    -----
    The defaults fit a single broker and fast tests; they are listed in
    :func:`kafka_rescalable.testing._broker.config.server_properties`. Internal topics (consumer
    offsets,
    transaction state, share-group state) have replication factor 1 and min ISR 1, since a
    single broker cannot hold more replicas; transactions therefore work. Auto topic creation
    is off, retention is checked every second but off by default, the cleaner compacts within
    seconds, and a consumer group forms without the initial rebalance delay.
    """

    def __init__(self, *, port: int | None = None, **options: Unpack[LaunchOptions]) -> None:
        if port is not None and not 0 < port < 65536:
            msg = f"port must be between 1 and 65535, got {port}"
            raise ValueError(msg)
        super().__init__(
            LaunchSettings.from_options(
                "LocalKafka",
                options,
                default_jvm_options=DEFAULT_JVM_OPTIONS,
                default_start_timeout_s=60.0,
            )
        )
        self._requested_port = port
        self._node: KafkaNode | None = None
        self._port: int | None = None
        self._cluster_id: str | None = None

    # -- public surface ----------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        """``"127.0.0.1:PORT"`` of the running broker, for ``bootstrap.servers``."""
        if self._node is None or self._port is None:
            msg = "the broker is not running: call start() or use 'with LocalKafka() as kafka'"
            raise RuntimeError(msg)
        return f"{LOOPBACK}:{self._port}"

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
        return self._node is not None and self._node.is_running

    def start(self) -> str:
        """Download the jars if needed, start the broker and wait until it is ready.

        Ready means it serves metadata with its own cluster id and its group and transaction
        coordinators answer, so a consumer group or a transactional producer can start at
        once (see :func:`kafka_rescalable.testing._broker.readiness.wait_for_coordinators`).

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
            If formatting the storage or starting the broker fails, or it is not ready
            within ``start_timeout_s``; the message holds the command and the log's last lines.
        """
        if self._node is not None:
            msg = f"the broker is already running at {self.bootstrap_servers}"
            raise RuntimeError(msg)
        return self._start_tracked(1 if self._requested_port is not None else PORT_ATTEMPTS)

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after ``stop_timeout_s``) and clean up.

        Calling it again, or on a broker that never started, does nothing.
        """
        if self._node is not None:
            self._node.stop(self._settings.stop_timeout_s)
        self._discard()

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Block until the broker process exits on its own; return its exit code.

        Returns ``None`` if it is still running after ``timeout_s`` seconds.
        """
        if self._node is None:
            msg = "the broker was never started"
            raise RuntimeError(msg)
        return self._node.wait(timeout_s)

    def log_tail(self, lines: int = 40) -> str:
        """Return the last ``lines`` lines of the broker's log and of the JVM's console."""
        if self._node is None:
            return ""
        return self._node.log_tail(lines)

    def __repr__(self) -> str:
        """Show where the broker listens and where its data is, for test failure output."""
        where = f"{LOOPBACK}:{self._port}" if self.is_running else "stopped"
        return f"LocalKafka({where}, data_dir={self._data_dir})"

    # -- internals ---------------------------------------------------------------------------

    def _start_once(self, runtime: tuple[str, list[Path]]) -> None:
        data_dir = self._new_data_dir("local-kafka-")
        if self._requested_port is not None:
            check_port_free(self._requested_port)
            broker_port, controller_port = self._requested_port, free_ports(1)[0]
        else:
            broker_port, controller_port = free_ports(2)
        self._port = broker_port
        # A static single-voter quorum: the node elects itself at once.
        layout = ServerLayout(node_id=1, voters={1: controller_port}, replication=1, min_isr=1)
        node = self._settings.node(
            runtime, 1, broker_port, data_dir, server_properties(layout, data_dir, broker_port)
        )
        self._node = node
        self._cluster_id = random_cluster_id()
        node.format(self._cluster_id)
        node.launch()
        wait_until_ready(
            [node],
            self._cluster_id,
            self._settings.start_timeout_s,
            port_retry=self._requested_port is None,
        )

    def _discard(self) -> None:
        """Kill a process that may still run, forget it, and delete the data unless kept."""
        if self._node is not None:
            self._node.stop(self._settings.stop_timeout_s, record=False)
        self._node = None
        self._drop_data_dir()
        self._port = None
        self._cluster_id = None


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Run a broker, or a cluster, until Ctrl-C or SIGTERM; return the process exit code."""
    parser = argparse.ArgumentParser(
        prog="kafka-rescalable-local-kafka",
        description=f"Run Apache Kafka {KAFKA_VERSION} on 127.0.0.1: one broker, or a cluster.",
    )
    parser.add_argument("--port", type=int, default=None, help="broker port (default: a free one)")
    parser.add_argument(
        "--brokers",
        type=int,
        default=1,
        help="number of KRaft nodes (default: 1); more than 1 starts a cluster on free ports",
    )
    parser.add_argument(
        "--keep-data", action="store_true", help="keep the data folder and logs after stopping"
    )
    args = parser.parse_args(argv)
    if args.brokers < 1:
        parser.error(f"--brokers must be at least 1, got {args.brokers}")
    if args.brokers > 1 and args.port is not None:
        parser.error("--port applies to a single broker; a cluster picks free ports")

    # SIGTERM takes the same path as Ctrl-C, so both stop the broker before we exit. SIGINT is
    # set too because a shell starting us in the background (`... &`) makes Python ignore it.
    signal.signal(signal.SIGINT, _raise_interrupt)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    kafka: LocalKafka | LocalKafkaCluster
    if args.brokers == 1:
        kafka = LocalKafka(port=args.port, keep_data=args.keep_data)
    else:
        kafka = LocalKafkaCluster(brokers=args.brokers, keep_data=args.keep_data)
    try:
        kafka.start()
        logs = (
            kafka.log_path
            if isinstance(kafka, LocalKafka)
            else kafka.data_dir / "node-*" / "server.log"
        )
        print(f"Kafka ready at {kafka.bootstrap_servers} (logs: {logs})", flush=True)
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
