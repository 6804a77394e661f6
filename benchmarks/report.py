"""The machine, the versions and the result tables, as Markdown."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from benchmarks.micro.planning_cost import PlanningCost
from benchmarks.micro.rebalancer_bench import RebalanceResult
from benchmarks.micro.size_probe import ProbeResult
from benchmarks.workloads import Workload

__all__ = [
    "Targets",
    "ThroughputRow",
    "environment",
    "markdown_table",
    "planning_table",
    "rebalancer_table",
    "split_table",
    "targets",
    "throughput_table",
]

RATIO_VS_BUILTIN = 1.0
RATIO_VS_CLIENT = 0.8
PLANNING_MS = 100.0
REBALANCE_MS = 200.0


def markdown_table(header: str, align: str, rows: Iterable[str]) -> str:
    """Return a Markdown table from cells separated by ``" | "``: the header's, then each row's.

    ``align`` has one letter per column: ``l`` for text (left), ``r`` for numbers (right).
    """
    if len(align) != header.count(" | ") + 1:
        msg = f"align has {len(align)} letters for {header.count(' | ') + 1} columns: {header!r}"
        raise ValueError(msg)
    rule = "".join({"l": "---|", "r": "--:|"}[letter] for letter in align)
    return "\n".join([f"| {header} |", f"|{rule}", *(f"| {row} |" for row in rows)])


@dataclass(frozen=True)
class ThroughputRow:
    """Rows per second of every contender for one workload and query.

    ``*_first`` is the first (warm-up) run, the others the best timed run after it; ``*_in_batches``
    and ``*_outside_s`` split that best run into the rows per second inside its micro-batches and
    the seconds spent outside them (query start and stop). ``ceiling`` is the Python-source ceiling
    (:mod:`benchmarks.whole_queries.ceiling_source`): no Python data source can be faster in this
    Spark on this machine.
    """

    workload: Workload
    query: str
    ours: float
    builtin: float
    ceiling: float
    client: float
    ours_first: float
    builtin_first: float
    ours_in_batches: float
    builtin_in_batches: float
    ceiling_in_batches: float
    ours_outside_s: float
    builtin_outside_s: float
    ceiling_outside_s: float

    @property
    def vs_builtin(self) -> float:
        """Ours over Spark's built-in source."""
        return self.ours / self.builtin

    @property
    def vs_client(self) -> float:
        """Ours over the raw client limit."""
        return self.ours / self.client

    @property
    def python_source_bound(self) -> float:
        """Rows per second no Python source built on this client can beat, whole query.

        Such a source pays Spark's start-up for a Python source (the ceiling's seconds outside
        micro-batches: its new Python process, before any task runs) and then reads the topic,
        which takes at least the client limit's time on the same cores.
        """
        records = self.workload.records
        return records / (records / self.client + self.ceiling_outside_s)

    @property
    def vs_ceiling(self) -> float:
        """Ours over the Python-source ceiling: the share of what Spark lets any reach."""
        return self.ours / self.ceiling


def environment(command: str) -> str:
    """Date, machine and versions, for the head of the results."""
    import confluent_kafka
    import pyarrow
    import pyspark

    from integration_tests.reference_source import BUILTIN_KAFKA_SOURCE
    from kafka_rescalable.pyspark_zip import bytecode_state, pyspark_zip_path
    from kafka_rescalable.testing.jars import KAFKA_VERSION

    # version() is a string in recent releases and a (string, int) pair in older ones.
    client = confluent_kafka.version()
    client = client if isinstance(client, str) else client[0]
    librdkafka = confluent_kafka.libversion()[0]
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    archive = pyspark_zip_path()
    lines = [
        f"- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- Command: `{command}`",
        f"- Machine: {os.cpu_count()} cores (nproc), {_memory()} memory, CPU `{_cpu_model()}`",
        f"- Load average at start (1/5/15 min): {_load()}",
        f"- Python {platform.python_version()}, PySpark {pyspark.__version__}, "
        f"pyarrow {pyarrow.__version__}, confluent-kafka {client} (librdkafka {librdkafka})",
        f"- Java: {java.splitlines()[0] if java else 'unknown'}",
        f"- PySpark's archive, first on the path of the Python processes Spark starts: "
        f"`{archive}` ({bytecode_state(archive)})",
        f"- Broker: embedded Apache Kafka {KAFKA_VERSION} (KRaft, one node, plaintext, loopback)",
        f"- Spark's built-in source: {', '.join(BUILTIN_KAFKA_SOURCE)}",
    ]
    return "\n".join(lines)


def load_average() -> str:
    """``1.02 / 0.80 / 0.55``."""
    return _load()


def throughput_table(rows: Sequence[ThroughputRow]) -> str:
    """Rows per second per workload and query, and the two ratios."""
    header = (
        "workload | query | ours rows/s | built-in rows/s | client limit rows/s | ours / built-in "
        "| ours / client limit | Python-source ceiling rows/s | ours / ceiling "
        "| first run: ours / built-in rows/s"
    )
    body = (
        f"{row.workload.description} | {row.query} | {row.ours:,.0f} | {row.builtin:,.0f} | "
        f"{row.client:,.0f} | {row.vs_builtin:.2f} | {row.vs_client:.2f} | "
        f"{row.ceiling:,.0f} | {row.vs_ceiling:.2f} | "
        f"{row.ours_first:,.0f} / {row.builtin_first:,.0f}"
        for row in rows
    )
    return markdown_table(header, "llrrrrrrrr", body)


def split_table(rows: Sequence[ThroughputRow]) -> str:
    """Split the best runs into micro-batch throughput and time outside micro-batches.

    The bound is :attr:`ThroughputRow.python_source_bound`: the client limit's reading time
    plus the ceiling's start-up; where it is below the built-in's rows per second, no Python
    data source on this client can match the built-in on that workload's whole query.
    """
    header = (
        "workload | query | ours rows/s in batches | built-in rows/s in batches "
        "| ceiling rows/s in batches | in batches: ours / built-in "
        "| s outside batches: ours / built-in / ceiling | bound for any Python source rows/s "
        "| bound / built-in"
    )

    def cells(row: ThroughputRow) -> str:
        rates = (row.ours_in_batches, row.builtin_in_batches, row.ceiling_in_batches)
        outside = (row.ours_outside_s, row.builtin_outside_s, row.ceiling_outside_s)
        return " | ".join(
            [
                row.workload.key,
                row.query,
                *(f"{rate:,.0f}" for rate in rates),
                f"{row.ours_in_batches / row.builtin_in_batches:.2f}",
                " / ".join(f"{seconds:.1f}" for seconds in outside),
                f"{row.python_source_bound:,.0f}",
                f"{row.python_source_bound / row.builtin:.2f}",
            ]
        )

    return markdown_table(header, "llrrrrrrr", map(cells, rows))


def planning_table(costs: Sequence[PlanningCost]) -> str:
    """Median milliseconds of one micro-batch's planning per topic size."""
    header = "partitions | tasks | latestOffset ms | partitions ms | total ms (median of calls)"
    body = (
        f"{c.partitions:,} | {c.tasks:,} | {c.latest_offset_ms:.1f} | {c.partitions_ms:.1f} | "
        f"{c.total_ms:.1f} ({c.calls})"
        for c in costs
    )
    return markdown_table(header, "rrrrr", body)


def size_probe_table(results: Sequence[ProbeResult]) -> str:
    """Seconds per batch of the size probe, what it read against the backlog, the bound."""
    header = (
        "backlog | batches | probe s per batch, median / max | probe bytes / backlog bytes | "
        "largest batch / cap"
    )
    body = (
        f"{r.description} | {r.batches} | {r.median_s:.3f} / {r.max_s:.3f} | "
        f"{r.probed_bytes / r.backlog_bytes:.2f} | {r.largest_batch_bytes / r.cap_bytes:.2f}"
        for r in results
    )
    return markdown_table(header, "lrrrr", body)


def rebalancer_table(results: Sequence[RebalanceResult]) -> str:
    """Median milliseconds and partitions moved per rebalance case."""
    return markdown_table(
        "case | median ms (runs) | partitions moved | fewest possible for count balance",
        "lrrr",
        (
            f"{r.case.description} | {r.median_ms:.0f} ({r.runs}) | {r.moved:,} | "
            f"{r.minimum_moved:,}"
            for r in results
        ),
    )


@dataclass(frozen=True)
class Targets:
    """Each target of the issue, and whether this run met it."""

    lines: tuple[tuple[str, bool | None], ...]

    def markdown(self) -> str:
        """List the targets, each met, MISSED or not measured."""
        marks = {True: "met", False: "MISSED", None: "not measured"}
        return "\n".join(f"- {text}: **{marks[met]}**" for text, met in self.lines)


def targets(
    throughput: Sequence[ThroughputRow],
    planning: Sequence[PlanningCost],
    rebalances: Sequence[RebalanceResult],
) -> Targets:
    """Check the issue's four targets against this run's numbers."""
    lines: list[tuple[str, bool | None]] = []
    if throughput:
        worst = min(throughput, key=lambda row: row.vs_builtin)
        lines.append(
            (
                f"ours / built-in >= {RATIO_VS_BUILTIN} on every workload and query "
                f"(lowest {worst.vs_builtin:.2f}: {worst.workload.key}, {worst.query}; "
                f"there the bound for any Python source / built-in is "
                f"{worst.python_source_bound / worst.builtin:.2f})",
                worst.vs_builtin >= RATIO_VS_BUILTIN,
            )
        )
        small = [r for r in throughput if r.workload.key == "100B" and r.query == "noop"]
        if small:
            lines.append(
                (
                    f"ours / client limit >= {RATIO_VS_CLIENT} on the 100-byte workload "
                    f"({small[0].vs_client:.2f}; the bound for any Python source / client "
                    f"limit is {small[0].python_source_bound / small[0].client:.2f})",
                    small[0].vs_client >= RATIO_VS_CLIENT,
                )
            )
    else:
        lines.append((f"ours / built-in >= {RATIO_VS_BUILTIN}", None))
        lines.append((f"ours / client limit >= {RATIO_VS_CLIENT}", None))
    largest = max(planning, key=lambda c: c.partitions, default=None)
    if largest is None:
        lines.append((f"planning < {PLANNING_MS:.0f} ms per micro-batch", None))
    else:
        lines.append(
            (
                f"planning < {PLANNING_MS:.0f} ms per micro-batch at {largest.partitions:,} "
                f"partitions ({largest.total_ms:.0f} ms)",
                largest.total_ms < PLANNING_MS,
            )
        )
    big = [r for r in rebalances if r.case.partitions == 100_000 and r.case.to_slots == 1_000]
    if big:
        slowest = max(r.median_ms for r in big)
        lines.append(
            (
                f"rebalancer < {REBALANCE_MS:.0f} ms for 100,000 partitions over 1,000 slots "
                f"(slowest case {slowest:.0f} ms)",
                slowest < REBALANCE_MS,
            )
        )
    else:
        lines.append((f"rebalancer < {REBALANCE_MS:.0f} ms", None))
    return Targets(tuple(lines))


def _memory() -> str:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _load() -> str:
    try:
        return " / ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"
