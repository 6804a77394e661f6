"""Resident memory of a Spark query's processes by kind, read from ``/proc`` (Linux only).

Shared by the soak run (:mod:`integration_tests.soak`) and the memory benchmark
(:mod:`benchmarks.diagnostics.memory`). A query's processes are found by parentage from the process
that runs the query, not by process group: PySpark's worker daemon puts itself and the workers it
forks into a group of their own, so a group would miss exactly the processes most likely to keep
what they read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from benchmarks.diagnostics.trends import MemoryTrend, memory_trend

__all__ = [
    "DRIVER_JVM",
    "DRIVER_PYTHON",
    "KINDS",
    "PLANNERS",
    "PLANNER_DAEMONS",
    "MemorySampler",
    "ProcessKind",
    "SOURCE_RUNNER",
    "WORKERS",
    "WORKER_DAEMON",
    "command_line",
    "kind_of",
    "memory_by_kind",
    "process_tree",
]

DRIVER_PYTHON = "driver (Python)"
DRIVER_JVM = "driver JVM"
SOURCE_RUNNER = "driver source runner (Python)"
PLANNER_DAEMONS = "driver planner daemons (Python)"
PLANNERS = "driver planners (Python)"
WORKER_DAEMON = "Python worker daemon"
WORKERS = "Python workers"
KINDS = (
    DRIVER_PYTHON,
    DRIVER_JVM,
    SOURCE_RUNNER,
    PLANNER_DAEMONS,
    PLANNERS,
    WORKER_DAEMON,
    WORKERS,
)
"""Every kind but ``other``, in the order tables show them."""
_PROC = Path("/proc")


@dataclass(frozen=True)
class ProcessKind:
    """The resident memory (MiB) of all processes of one kind, and how many there were."""

    mib: float
    processes: int


def kind_of(pid: int, root: int, command: str, parent_command: str) -> str:
    """Name the kind of a process in the tree of ``root`` from its and its parent's command.

    Spark 4 starts one ``pyspark.daemon`` per worker module: ``pyspark.worker`` runs the
    tasks, the others (``pyspark.sql.worker.create_data_source``, ``plan_data_source_read``,
    ...) plan on the driver's side. A daemon's forked workers keep its command line, so they
    are told from it by their parent: a daemon whose parent is the same daemon is a worker.
    """
    if pid == root:
        return DRIVER_PYTHON
    if "java" in command.split(" ", 1)[0]:
        return DRIVER_JVM
    if "python_streaming_source_runner" in command:
        return SOURCE_RUNNER
    words = command.split()
    if "pyspark.daemon" in words:
        after = words[words.index("pyspark.daemon") + 1 :]
        tasks = not after or after[0] == "pyspark.worker"
        forked = parent_command.split() == words
        if tasks:
            return WORKERS if forked else WORKER_DAEMON
        return PLANNERS if forked else PLANNER_DAEMONS
    if "pyspark.worker" in words:
        return WORKERS
    return "other"


def process_tree(root: int) -> dict[int, int]:
    """Map process ``root`` and each of its live descendants to its parent's pid."""
    parents: dict[int, int] = {}
    for proc in _PROC.iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
                parents[int(proc.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    family = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in family and pid not in family:
                family.add(pid)
                grew = True
    return {pid: parents.get(pid, 0) for pid in family}


def memory_by_kind(root: int) -> dict[str, ProcessKind]:
    """Sum VmRSS in MiB per kind over process ``root`` and all its descendants."""
    parents = process_tree(root)
    commands = {pid: command_line(pid) for pid in parents}
    totals: dict[str, ProcessKind] = {}
    for pid, parent in parents.items():
        rss = _rss_mib(pid)
        command = commands.get(pid)
        if rss is None or command is None:
            continue  # the process ended while we looked
        kind = kind_of(pid, root, command, commands.get(parent) or "")
        before = totals.get(kind, ProcessKind(0.0, 0))
        totals[kind] = ProcessKind(before.mib + rss, before.processes + 1)
    return totals


def command_line(pid: int) -> str | None:
    """Return a process's command line, its arguments joined by spaces; None once it ended."""
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return raw.replace(b"\0", b" ").decode(errors="replace")


def _rss_mib(pid: int) -> float | None:
    try:
        status = (_PROC / str(pid) / "status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


class MemorySampler:
    """Samples the resident memory of a query's processes by kind, every few seconds.

    The first sample is taken ``every_s`` after entering; times are seconds since entering.
    """

    def __init__(self, root: int, every_s: float = 5.0) -> None:
        self._root = root
        self._every_s = every_s
        self._samples: list[tuple[float, Mapping[str, ProcessKind]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._started = 0.0

    def __enter__(self) -> MemorySampler:
        """Start sampling."""
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop sampling."""
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.wait(self._every_s):
            sample = memory_by_kind(self._root)
            self._samples.append((time.monotonic() - self._started, sample))

    @property
    def samples(self) -> list[tuple[float, Mapping[str, ProcessKind]]]:
        """Every sample so far: seconds since the start, and memory per kind."""
        return list(self._samples)

    def trends(self, warmup_s: float | None = None) -> dict[str, MemoryTrend]:
        """Per kind, its memory after ``warmup_s`` (default: the first sixth of the samples).

        A sample without a kind counts as 0 MiB of it: Spark ends Python workers idle for a
        minute, and the memory they held is then gone. With fewer than two samples after the
        warm-up there are no trends.
        """
        samples = self.samples
        if warmup_s is None:
            warmup_s = samples[-1][0] / 6 if samples else 0.0
        kinds = sorted({kind for _, sample in samples for kind in sample})
        result = {}
        for kind in kinds:
            points = [(at, sample[kind].mib if kind in sample else 0.0) for at, sample in samples]
            trend = memory_trend(points, warmup_s)
            if trend is not None:
                result[kind] = trend
        return result
