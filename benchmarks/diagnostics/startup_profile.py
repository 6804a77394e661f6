"""Where a Python data source's per-query start-up goes: importing pyspark in a new process.

For every streaming query Spark starts a new Python process (not a fork of its worker
daemon) to host the source's driver side: ``python -m
pyspark.sql.streaming.python_streaming_source_runner``. Its ``PYTHONPATH`` starts with
``$SPARK_HOME/python/lib/pyspark.zip``, so pyspark is imported from the zip archive, where
Python neither finds nor writes cached bytecode and compiles every module from source.

:func:`runner_import_profile` reproduces that import with Python's ``-X importtime``, once with
the path Spark gives and once from the installed package, and lists the costliest modules.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ImportTimes", "runner_import_profile", "spark_python_path"]

RUNNER_MODULE = "pyspark.sql.streaming.python_streaming_source_runner"
_DEPTH = 4
"""Nesting levels listed: deep enough to reach pyspark's big modules, not every leaf."""
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


@dataclass(frozen=True)
class ImportTimes:
    """Seconds to import the runner and our connector, as Spark's process does and from site."""

    from_zip_s: float
    from_site_s: float
    costliest: tuple[tuple[str, float], ...]
    """Imports of the zip run (up to a few levels deep) with cumulative seconds, largest first."""

    @property
    def connector_s(self) -> float:
        """Our own share: the ``kafka_rescalable`` package, imported after pyspark."""
        ours = (seconds for name, seconds in self.costliest if name == "kafka_rescalable")
        return next(ours, 0.0)

    def markdown(self) -> str:
        """Render the two totals and the costliest imports as Markdown."""
        lines = [
            f"Importing `{RUNNER_MODULE}` and `connector` in a new process: "
            f"**{self.from_zip_s:.2f} s** with Spark's `PYTHONPATH` (pyspark.zip first), "
            f"{self.from_site_s:.2f} s from the installed package; `connector` itself, after "
            f"pyspark, {self.connector_s:.2f} s. Costliest imports (cumulative, pyspark.zip run):",
            "",
            "| module | s |",
            "|---|--:|",
        ]
        lines += [f"| `{name}` | {seconds:.2f} |" for name, seconds in self.costliest]
        return "\n".join(lines)


def spark_python_path() -> str:
    """Return the ``PYTHONPATH`` head Spark gives its Python processes (its two zips)."""
    import pyspark

    lib = Path(pyspark.__file__).parent / "python" / "lib"
    zips = [lib / "pyspark.zip", *sorted(lib.glob("py4j-*.zip"))]
    return os.pathsep.join(str(path) for path in zips)


def runner_import_profile(repeats: int = 3, top: int = 8) -> ImportTimes:
    """Time the runner's imports ``repeats`` times each way; keep the fastest of each."""
    zip_runs = [_import_times(spark_python_path()) for _ in range(repeats)]
    site_runs = [_import_times(None) for _ in range(repeats)]
    best_zip = min(zip_runs, key=lambda run: run[0])
    total_site = min(run[0] for run in site_runs)
    ours = tuple(m for m in best_zip[1] if m[0] == "kafka_rescalable")[:1]
    costliest = best_zip[1][:top] + tuple(m for m in ours if m not in best_zip[1][:top])
    return ImportTimes(best_zip[0], total_site, costliest)


def _import_times(python_path: str | None) -> tuple[float, tuple[tuple[str, float], ...]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if python_path:
        env["PYTHONPATH"] = python_path
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {RUNNER_MODULE}, connector"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    total = 0.0
    modules: list[tuple[str, float]] = []
    for line in result.stderr.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        depth = (len(match.group(3)) - 1) // 2  # 0: imported by the -c line itself
        seconds = int(match.group(2)) / 1e6
        total += seconds if depth == 0 else 0.0
        if depth <= _DEPTH:
            modules.append((match.group(4), seconds))
    # A module shows up once per importer that reached it first; keep its largest figure.
    largest: dict[str, float] = {}
    for name, seconds in modules:
        largest[name] = max(seconds, largest.get(name, 0.0))
    return total, tuple(sorted(largest.items(), key=lambda m: m[1], reverse=True))
