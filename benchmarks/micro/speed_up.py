"""The command line the codec micro-benchmarks share: a fast path timed against a slow one.

Each benchmark (Avro decoding, Avro encoding, Protobuf decoding) measures both paths on the
same batches and gives runs with a ``case``, a ``path`` and ``micros_per_record``; this prints
them as one Markdown table, so the three read alike in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["print_speed_up", "speed_up_main"]


def speed_up_main(
    description: str,
    measure: Callable[[int, int], Sequence[Any]],
    records: int,
    what: str,
    batch: int,
    paths: tuple[str, str],
) -> None:
    """Parse ``--records`` (default ``records``) and ``--runs``, measure, print the table.

    ``what`` names the records in the heading (``"order records"``); ``paths`` is the fast
    path's name, then the slow one's, as the runs call them.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--records", type=int, default=records)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results = measure(args.records, args.runs)
    print(f"{args.records:,} {what}, batches of {batch:,}, best of {args.runs} runs")
    print_speed_up(results, *paths)


def print_speed_up(results: Sequence[Any], fast: str, slow: str) -> None:
    """Print a Markdown table: per case, µs per record on paths ``fast`` and ``slow``."""
    print(f"| case | {fast} µs/record | {slow} µs/record | {fast} speed-up |")
    print("|---|--:|--:|--:|")
    by_case: dict[str, dict[str, float]] = {}
    for run in results:
        by_case.setdefault(run.case, {})[run.path] = run.micros_per_record
    for case, paths in by_case.items():
        quick, slower = paths[fast], paths[slow]
        print(f"| {case} | {quick:.2f} | {slower:.2f} | {slower / quick:.0f}x |")
