"""A Spark standalone cluster on loopback, started with pyspark's own ``bin/spark-class``.

For tests that need executors to come and go: each worker is its own process group, so a
test can kill a worker with its executors the way a lost machine would.

A worker may take another loopback address as its host (every ``127.x.y.z`` is loopback on
Linux): Spark then counts it as another machine, which speculation needs, since Spark never
runs a speculative copy of a task on a host where an attempt of that task already runs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pyspark

from integration_tests.spark_helpers import wait_until

SPARK_HOME = Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    """Return a loopback port free right now, so each daemon and web UI gets its own."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class StandaloneCluster:
    """A master and any number of workers; ``stop`` kills them all."""

    def __init__(self, work_dir: Path, env: dict[str, str] | None = None) -> None:
        """Prepare the cluster in ``work_dir``; ``env`` adds to (or replaces) its daemons' env."""
        self.work_dir = work_dir
        self.port = free_port()
        self.ui_port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self._processes: dict[str, subprocess.Popen] = {}
        self._workers: set[str] = set()
        self._env = {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_NO_DAEMONIZE": "1",
            # Notice a killed worker in seconds, not the default minute.
            "SPARK_MASTER_OPTS": "-Dspark.worker.timeout=10",
            # A worker sends a heartbeat every quarter of its own spark.worker.timeout (60 s by
            # default, so every 15 s): with the master's 10 s, it would be dropped as lost and
            # told to re-register, with its executors, every few seconds.
            "SPARK_WORKER_OPTS": "-Dspark.worker.timeout=10",
            **(env or {}),
        }

    def _spawn(self, name: str, *arguments: str, local_ip: str = "127.0.0.1") -> None:
        log = open(self.work_dir / f"{name}.log", "wb")  # noqa: SIM115 - lives with the process
        self._processes[name] = subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *arguments],
            env={**self._env, "SPARK_LOCAL_IP": local_ip},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def start_master(self) -> None:
        """Start the master and wait until its web UI answers, so workers can join."""
        self._spawn(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--webui-port",
            str(self.ui_port),
        )
        wait_until(lambda: self.alive_workers() is not None, "the Spark master", timeout_s=90)

    def start_worker(self, name: str, cores: int, host: str = "127.0.0.1") -> None:
        """Start a worker offering ``cores`` cores and wait until the master counts it alive.

        ``host`` is the worker's address, and its executors' (they inherit its
        ``SPARK_LOCAL_IP``): another loopback address, such as ``127.0.0.2``, makes it a
        host of its own in Spark's eyes.
        """
        before = self.alive_workers() or 0
        work = self.work_dir / name
        work.mkdir(exist_ok=True)
        self._workers.add(name)
        self._spawn(
            name,
            "org.apache.spark.deploy.worker.Worker",
            "--host",
            host,
            "--cores",
            str(cores),
            "--memory",
            "1g",
            "--webui-port",
            str(free_port()),
            "--work-dir",
            str(work),
            self.url,
            local_ip=host,
        )
        wait_until(lambda: (self.alive_workers() or 0) > before, f"worker {name}", timeout_s=90)

    def kill(self, name: str) -> None:
        """SIGKILL a worker and its executors, as if its machine went away."""
        process = self._processes.pop(name)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)
        self._kill_executors_of(name)

    def _kill_executors_of(self, name: str) -> None:
        # Executors share the worker's process group, so killpg reached them; this sweep
        # catches any that escaped, found by their working directory under the worker's.
        marker = str(self.work_dir / name)
        for pid_dir in Path("/proc").iterdir():
            if not pid_dir.name.isdigit():
                continue
            try:
                command = (pid_dir / "cmdline").read_bytes().decode(errors="replace")
                cwd = os.readlink(pid_dir / "cwd")
            except OSError:
                continue
            if "CoarseGrainedExecutorBackend" in command and cwd.startswith(marker):
                os.kill(int(pid_dir.name), signal.SIGKILL)

    def alive_workers(self) -> int | None:
        """Count the workers the master reports alive; ``None`` while the master is not up.

        While it starts, the master's web UI can answer ``/json/`` with an HTML page (seen once
        in CI): that is "not up yet" too, and the caller's wait goes on.
        """
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as r:
                state = json.load(r)
        except (OSError, json.JSONDecodeError):
            return None
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def stop(self) -> None:
        """Kill every process started here, then any executor that escaped its worker's group."""
        for name in list(self._processes):
            process = self._processes.pop(name)
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(30)
        for name in self._workers:
            self._kill_executors_of(name)
