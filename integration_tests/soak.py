"""Soak run: broker faults, query restarts and rescaling under a live producer, for minutes.

Usage::

    python -m integration_tests.soak [--minutes 12] [--seed 1] [--rate 300] [--standalone]
                                     [--markdown FILE]

Outside CI on purpose (it runs for minutes, not seconds): it sits beside the reliability
tests it builds on, but without a ``test_`` prefix, so pytest does not collect it. It starts a
3-node KRaft cluster (``kafka_rescalable.testing.local_cluster``) and runs, each on a topic of its
own with replication factor 3 and ``min.insync.replicas=2``, fed by an idempotent ``acks=all``
producer:

1. **running query, brokers killed**: one query process (``local[2]``, parallelism 4) for half
   of ``--minutes``; a broker chosen by the seeded schedule is SIGKILLed every
   ``--kill-every`` seconds and restarted 15 s later. The query must ride through on its own.
   The resident memory of the query's processes (driver JVM, the driver's Python source
   runner, Python workers) is sampled every 5 s: it must stay flat.
2. **restarts at another parallelism, broker bounced**: the query is stopped (SIGTERM and
   SIGKILL in turn) and restarted with another ``parallelism`` every ``--phase-seconds``,
   with a broker killed and restarted in each phase.
3. with ``--standalone``: **auto following workers**: a Spark standalone master started with
   pyspark's own ``bin/spark-class``, ``parallelism=auto``, 1-core workers joining and one
   killed while a broker is bounced.

Each scenario ends by stopping the producer and draining the topic; then every acknowledged
``(partition, offset)`` must be in the Parquet sink exactly once. The table printed (and
written with ``--markdown``) is the one in RELIABILITY.md.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.dataset as ds

from benchmarks.diagnostics.process_memory import MemorySampler
from benchmarks.diagnostics.trends import MemoryTrend
from integration_tests.fault_helpers import SafeProducer, exactly_once_report
from integration_tests.kafka_helpers import create_replicated_topic
from integration_tests.query_process import start_query_process, stop_query_process
from kafka_rescalable.state import SlotsDocument
from kafka_rescalable.testing.local_cluster import LocalKafkaCluster

PARTITIONS = 8
_RESTART_AFTER_S = 15.0


@dataclass
class Scenario:
    """What one scenario did and found."""

    name: str
    runs: int = 0
    faults: int = 0
    records: int = 0
    lost: int = 0
    duplicated: int = 0
    recoveries_s: list[float] = field(default_factory=list)
    memory: dict[str, MemoryTrend] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def row(self) -> str:
        """One Markdown table row."""
        recover = f"{max(self.recoveries_s):.0f} s" if self.recoveries_s else "n/a"
        median = sorted(self.recoveries_s)[len(self.recoveries_s) // 2] if self.recoveries_s else 0
        recover = f"median {median:.0f} s, max {recover}" if self.recoveries_s else recover
        return (
            f"| {self.name} | {self.runs} | {self.faults} | {self.records:,} | {self.lost} | "
            f"{self.duplicated} | {recover} |"
        )


def _written(output: Path) -> list[tuple[int, int]]:
    """Every ``(partition, offset)`` in the sink's committed files, duplicates kept.

    Only files the sink's own log (``_spark_metadata``) lists count, as for Spark's reader: a
    query killed mid-batch leaves files of that batch behind, to be written again on restart.
    """
    log = output / "_spark_metadata"
    if not log.exists():
        return []
    files: set[str] = set()
    entries = [p for p in log.iterdir() if p.name.split(".")[0].isdigit()]  # no .crc files
    for entry in sorted(entries, key=lambda p: int(p.name.split(".")[0])):
        for line in entry.read_text().splitlines()[1:]:
            record = json.loads(line)
            path = record["path"].removeprefix("file://")
            if record.get("action", "add") == "add":
                files.add(path)
            else:
                files.discard(path)
    if not files:
        return []
    table = ds.dataset(sorted(files), format="parquet").to_table(columns=["partition", "offset"])
    return list(zip(table["partition"].to_pylist(), table["offset"].to_pylist(), strict=True))


def _commits_after(checkpoint: Path, since: float) -> bool:
    commits = checkpoint / "commits"
    if not commits.exists():
        return False
    return any(p.name.isdigit() and p.stat().st_mtime > since for p in commits.iterdir())


def _wait(condition: Callable[[], bool], what: str, timeout_s: float) -> float:
    """Poll until ``condition``; return the seconds waited, or fail naming ``what``."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout_s:
            msg = f"timed out after {timeout_s:.0f} s waiting for {what}"
            raise TimeoutError(msg)
        time.sleep(0.5)
    return time.monotonic() - started


class Soak:
    """One cluster, one producer per scenario, query processes started and killed on schedule."""

    def __init__(self, args: argparse.Namespace, cluster: LocalKafkaCluster, work: Path) -> None:
        self.args = args
        self.cluster = cluster
        self.work = work
        self.rng = random.Random(args.seed)
        self.log_files: list[Path] = []

    def _query(self, name: str, topic: str, parallelism: str, master: str = "local[2]"):
        out = self.work / name
        log = out.with_suffix(".log").open("ab")
        self.log_files.append(out.with_suffix(".log"))
        process = start_query_process(
            "integration_tests.auto_query",
            [
                master,
                self.cluster.bootstrap_servers,
                topic,
                str(out / "data"),
                str(out / "checkpoint"),
                parallelism,
            ],
            output=log,
        )
        return process, out / "data", out / "checkpoint"

    def _drain_and_check(
        self, scenario: Scenario, producer: SafeProducer, name: str, topic: str, parallelism: str
    ) -> None:
        produced = producer.stop()
        process, output, _ = self._query(name, topic, parallelism)
        try:
            _wait(lambda: len(_written(output)) >= len(produced), "the drain", 600)
            time.sleep(3)  # a duplicate would come in the batches right after the last record
        finally:
            stop_query_process(process, grace_s=60)
        missing, twice = exactly_once_report(produced, _written(output))
        scenario.records = len(produced)
        scenario.lost = len(missing)
        scenario.duplicated = len(twice)
        scenario.runs += 1

    def running_query_with_broker_kills(self) -> Scenario:
        """Scenario 1 (see the module doc)."""
        scenario = Scenario("running query, a broker SIGKILLed every few minutes")
        topic = f"soak-running-{self.args.seed}"
        create_replicated_topic(self.cluster.bootstrap_servers, topic, PARTITIONS)
        seconds = self.args.minutes * 60 / 2
        with SafeProducer(self.cluster.bootstrap_servers, topic, PARTITIONS, self.args.rate) as p:
            process, _, checkpoint = self._query("running", topic, "4")
            with MemorySampler(process.pid) as memory:
                started = time.monotonic()
                _wait(lambda: _commits_after(checkpoint, 0), "the first batch", 180)
                while time.monotonic() - started < seconds:
                    time.sleep(max(0.0, self.args.kill_every - _RESTART_AFTER_S))
                    self._bounce_in_place(scenario, checkpoint)
                    if process.poll() is not None:
                        scenario.notes.append("the query process died")
                        break
            scenario.memory = memory.trends()
            if process.poll() is not None:
                scenario.notes.append(f"query exited with {process.returncode}")
            stop_query_process(process, grace_s=60)
            scenario.runs += 1
            self._drain_and_check(scenario, p, "running", topic, "4")
        return scenario

    def restarts_with_rescaling(self) -> Scenario:
        """Scenario 2 (see the module doc)."""
        scenario = Scenario("query restarted at another parallelism, a broker bounced each run")
        topic = f"soak-rescale-{self.args.seed}"
        create_replicated_topic(self.cluster.bootstrap_servers, topic, PARTITIONS)
        phases = max(2, int(self.args.minutes * 60 / 2 / self.args.phase_seconds))
        history = []
        with SafeProducer(self.cluster.bootstrap_servers, topic, PARTITIONS, self.args.rate) as p:
            for phase in range(phases):
                parallelism = self.rng.choice(["1", "2", "3", "5", "8"])
                history.append(parallelism)
                process, _, checkpoint = self._query("rescale", topic, parallelism)
                started = time.time()
                _wait(lambda c=checkpoint, s=started: _commits_after(c, s), "a batch", 240)
                time.sleep(self.rng.uniform(3, 10))
                self._bounce_in_place(scenario, checkpoint)
                time.sleep(max(0.0, self.args.phase_seconds - (time.time() - started)))
                crash = phase % 2 == 1
                stop_query_process(process, grace_s=None if crash else 60)
                scenario.runs += 1
            self._drain_and_check(scenario, p, "rescale", topic, "4")
        scenario.notes.append("parallelism " + " -> ".join(history) + " -> 4 (drain)")
        return scenario

    def auto_on_standalone(self) -> Scenario:
        """Scenario 3 (see the module doc)."""
        from integration_tests.cluster import StandaloneCluster

        scenario = Scenario("parallelism=auto on a standalone cluster, workers join and leave")
        topic = f"soak-auto-{self.args.seed}"
        create_replicated_topic(self.cluster.bootstrap_servers, topic, PARTITIONS)
        spark = StandaloneCluster(self.work / "standalone")
        (self.work / "standalone").mkdir(exist_ok=True)
        try:
            spark.start_master()
            spark.start_worker("w1", cores=1)
            with SafeProducer(
                self.cluster.bootstrap_servers, topic, PARTITIONS, self.args.rate
            ) as producer:
                process, _, checkpoint = self._query("auto", topic, "auto", master=spark.url)
                _wait(lambda: _commits_after(checkpoint, 0), "the first batch", 240)
                spark.start_worker("w2", cores=1)
                time.sleep(30)
                self._bounce_in_place(scenario, checkpoint)
                spark.kill("w2")
                time.sleep(30)
                stop_query_process(process, grace_s=60)
                scenario.runs += 1
                self._drain_and_check(scenario, producer, "auto", topic, "4")
        finally:
            spark.stop()
        slots = _slot_history(self.work / "auto" / "checkpoint")
        scenario.notes.append("slots per batch: " + " -> ".join(str(n) for n in slots))
        return scenario

    def _bounce_in_place(self, scenario: Scenario, checkpoint: Path) -> None:
        """SIGKILL a broker of the seeded schedule, restart it, time the query's recovery."""
        fault_at = time.time()
        node = self.rng.choice(self.cluster.live_node_ids)
        self.cluster.kill(node)
        scenario.faults += 1
        time.sleep(_RESTART_AFTER_S)
        self.cluster.restart(node)
        _wait(lambda: _commits_after(checkpoint, fault_at), "a batch", 300)
        scenario.recoveries_s.append(_first_commit_after(checkpoint, fault_at))


def _first_commit_after(checkpoint: Path, since: float) -> float:
    """Seconds from ``since`` to the first batch committed after it."""
    times = [
        p.stat().st_mtime
        for p in (checkpoint / "commits").iterdir()
        if p.name.isdigit() and p.stat().st_mtime > since
    ]
    return min(times) - since


def _slot_history(checkpoint: Path) -> list[int]:
    """Return the reader slots of each batch, with runs of equal counts collapsed."""
    counts: list[int] = []
    for path in sorted((checkpoint / "offsets").iterdir(), key=lambda p: int(p.name)):
        if not path.name.isdigit():
            continue
        slots = SlotsDocument.from_json(path.read_text().splitlines()[-1]).state.num_slots
        if not counts or counts[-1] != slots:
            counts.append(slots)
    return counts


def render(scenarios: Sequence[Scenario], args: argparse.Namespace, elapsed_s: float) -> str:
    """Render the results as Markdown: the reliability table, memory, notes."""
    lines = [
        f"### Soak run of {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        f"`python -m integration_tests.soak --minutes {args.minutes} --seed {args.seed} "
        f"--rate {args.rate}{' --standalone' if args.standalone else ''}`: "
        f"{elapsed_s / 60:.1f} minutes, 3 KRaft brokers, {PARTITIONS} partitions, replication "
        "factor 3, min.insync.replicas 2, idempotent acks=all producer.",
        "",
        "| scenario | query runs | broker faults | records | lost | duplicated | time to "
        "recover (fault to next committed batch) |",
        "|---|--:|--:|--:|--:|--:|---|",
        *(scenario.row() for scenario in scenarios),
        "",
    ]
    for scenario in scenarios:
        for role, trend in sorted(scenario.memory.items()):
            lines.append(
                f"- {scenario.name}: {role} resident memory {trend.warm_mib:.0f} MiB after "
                f"warm-up, {trend.last_mib:.0f} MiB at the end, {trend.peak_mib:.0f} MiB at most"
                + (" (grew)" if trend.grew else "")
            )
        lines.extend(f"- {scenario.name}: {note}" for note in scenario.notes)
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the scenarios; exit 1 if any record was lost or duplicated."""
    parser = argparse.ArgumentParser(prog="python -m integration_tests.soak", description=__doc__)
    parser.add_argument("--minutes", type=float, default=12.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=int, default=300, help="records per second produced")
    parser.add_argument("--kill-every", type=float, default=90.0)
    parser.add_argument("--phase-seconds", type=float, default=60.0)
    parser.add_argument("--standalone", action="store_true")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="soak-") as folder, LocalKafkaCluster(3) as cluster:
        soak = Soak(args, cluster, Path(folder))
        scenarios = [soak.running_query_with_broker_kills(), soak.restarts_with_rescaling()]
        if args.standalone:
            scenarios.append(soak.auto_on_standalone())
        text = render(scenarios, args, time.monotonic() - started)
        failed = [log for log in soak.log_files if "Traceback" in log.read_text(errors="replace")]
        for log in failed[:1]:
            print(f"--- a query log with a traceback: {log}\n{log.read_text()[-3000:]}")
    print(text)
    if args.markdown:
        with args.markdown.open("a", encoding="utf-8") as out:
            out.write("\n" + text)
    bad = any(s.lost or s.duplicated for s in scenarios)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
