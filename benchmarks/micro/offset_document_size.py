"""Bytes per offset-log entry: our slots document (versions 2 and 3) against Spark's source.

No Kafka, no Spark: the states are what :func:`state.rebalance` makes, the sizes are those of
the JSON each source puts on the last line of ``<checkpoint>/offsets/<batch id>``. PySpark
writes ours with ``json.dumps`` defaults (a space after ``,`` and ``:``); Spark's built-in
source writes ``{"<topic>":{"<partition>":<offset>,...}}`` without spaces. Spark keeps 100
such files, so a checkpoint holds about 100 times these numbers.

Offsets are drawn around 10^8 (a topic that has taken some hundred million records per
partition); the topic name is ``shop-events`` with a Kafka topic id, as every real document
of ours carries. Two assignments per slot count: *dealt*, as the first batch deals the
partitions round-robin (and as they stay while nothing moves), and *rescaled*, after the slot
count went from half as many again (plus one) down to this one, which moves partitions off
round-robin, so version 3 lists the slot of every partition.

Usage::

    python -m benchmarks.micro.offset_document_size            # the table, Markdown
    python -m benchmarks.micro.offset_document_size --quick    # 100 and 1,000 partitions only
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from dataclasses import dataclass

from benchmarks.report import markdown_table
from state import OffsetState, PartitionOffset, SlotsDocument, rebalance

__all__ = ["SizeCase", "SizeResult", "measure", "main"]

TOPIC = "shop-events"
TOPIC_ID = "b1XqV8AbT0mP3xk2Zc9yWw"


@dataclass(frozen=True)
class SizeCase:
    """``partitions`` partitions of one topic in ``slots`` slots, ``dealt`` or rescaled."""

    partitions: int
    slots: int
    dealt: bool


@dataclass(frozen=True)
class SizeResult:
    """Bytes of each document, and the median milliseconds to write and read version 3."""

    case: SizeCase
    builtin: int
    v2: int
    v3: int
    layout: str
    write_ms: float
    read_ms: float


def _state(case: SizeCase, rng: random.Random) -> OffsetState:
    live = [
        PartitionOffset(TOPIC, p, rng.randrange(10**8, 2 * 10**8)) for p in range(case.partitions)
    ]
    if case.dealt:
        return rebalance(OffsetState.empty(), case.slots, live).state
    # From half as many again plus one: 2N -> N would land on round-robin by chance.
    wider = rebalance(OffsetState.empty(), case.slots + case.slots // 2 + 1, live).state
    return rebalance(wider, case.slots, live).state


def _v2(document: SlotsDocument) -> str:
    """Write the version 2 document of the same state, as the previous release did."""
    slots = [
        {TOPIC: {str(sub.partition): sub.offset for sub in slot}} if slot else {}
        for slot in document.state.slots
    ]
    return json.dumps({"version": 2, "slots": slots, "topicIds": dict(document.topic_ids)})


def _builtin(state: OffsetState) -> str:
    offsets = {str(tp.partition): offset for tp, offset in state.offsets().items()}
    return json.dumps({TOPIC: offsets}, separators=(",", ":"))


def _median_ms(call, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(case: SizeCase, seed: int = 7) -> SizeResult:
    """Size the three documents of one case; time version 3's write and read."""
    state = _state(case, random.Random(seed))
    document = SlotsDocument(state, topic_ids={TOPIC: TOPIC_ID})
    text = json.dumps(document.to_dict())
    assert SlotsDocument.from_dict(json.loads(text)) == document
    # A fresh document each time: the first write decides the layout, which is the cost.
    write_ms = _median_ms(
        lambda: json.dumps(SlotsDocument(state, topic_ids={TOPIC: TOPIC_ID}).to_dict())
    )
    read_ms = _median_ms(lambda: SlotsDocument.from_dict(json.loads(text)))
    written = json.loads(text)
    if isinstance(written["slots"], int):
        listed = any("slots" in entry for entry in written["topics"].values())
        layout = "topic, slots listed" if listed else "topic"
    else:
        layout = "slot"
    return SizeResult(
        case, len(_builtin(state)), len(_v2(document)), len(text), layout, write_ms, read_ms
    )


def cases(quick: bool = False) -> list[SizeCase]:
    """100, 1,000 and 10,000 partitions over 1, 20, 200 slots and one slot per partition."""
    sizes = (100, 1000) if quick else (100, 1000, 10000)
    return [
        SizeCase(partitions, slots, dealt)
        for partitions in sizes
        for slots in (1, 20, 200, partitions)
        for dealt in (True, False)
        if slots <= partitions
    ]


def table(results: list[SizeResult]) -> str:
    """Format the results as a Markdown table, with the ratios to built-in and v2."""
    header = (
        "partitions | slots | assignment | built-in | v2 | v3 (layout) | v3 / built-in | v3 / v2 "
        "| v3 write ms | v3 read ms"
    )
    return markdown_table(header, "rrlrrrrrrr", map(_row, results))


def _row(r: SizeResult) -> str:
    c = r.case
    slots = f"{c.slots:,}" + (" (one per partition)" if c.slots == c.partitions else "")
    return (
        f"{c.partitions:,} | {slots} | {'dealt' if c.dealt else 'rescaled'} | {r.builtin:,} | "
        f"{r.v2:,} | {r.v3:,} ({r.layout}) | {r.v3 / r.builtin:.2f} | {r.v3 / r.v2:.2f} | "
        f"{r.write_ms:.1f} | {r.read_ms:.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 partitions only")
    args = parser.parse_args(argv)
    print(table([measure(case) for case in cases(args.quick)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
