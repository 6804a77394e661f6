"""Bytes per offset-log entry: our slots document (versions 2, 3 and 4) against Spark's source.

No Kafka, no Spark: the states are what :func:`state.rebalance` makes, the sizes are those of
the JSON each source puts on the last line of ``<checkpoint>/offsets/<batch id>``. PySpark
writes ours with ``json.dumps`` defaults (a space after ``,`` and ``:``); Spark's built-in
source writes ``{"<topic>":{"<partition>":<offset>,...}}`` without spaces. Spark keeps 100
such files, so a checkpoint holds about 100 times these numbers.

Two kinds of case. *One topic*: offsets drawn around 10^8 (a topic that has taken some
hundred million records per partition), the topic ``shop-events`` with a Kafka topic id, as
every real document of ours carries. *Many topics*: 100 topics of 10 partitions, named as the
many-partitions benchmark names them (``many-t100x10-<run>-<index>``, 23-24 characters), each
with its 22-character id, and 3-digit offsets, as in that benchmark's topics; there each
topic's name and id cost as much as its offsets. Two assignments per slot count: *dealt*, as
the first batch deals the partitions round-robin (and as they stay while nothing moves), and
*rescaled*, after the slot count went from half as many again (plus one) down to this one,
which moves partitions off round-robin, so the topic layout lists the slot of every
partition.

Version 4 is what the connector writes; versions 2 and 3 are written here by hand, from their
definitions, for the comparison: version 2 in its one layout, version 3 in the shorter of its
two (every topic id in ``topicIds``, where version 4's topic layout puts it in the topic's
entry).

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
from typing import Any

from benchmarks.report import markdown_table
from kafka_rescalable.state import OffsetState, PartitionOffset, SlotsDocument, rebalance
from kafka_rescalable.state.topic_layout import topic_layout

__all__ = ["SizeCase", "SizeResult", "measure", "main"]

TOPIC = "shop-events"
TOPIC_ID = "b1XqV8AbT0mP3xk2Zc9yWw"
_COMPACT = {"separators": (",", ":")}


@dataclass(frozen=True)
class SizeCase:
    """``partitions`` partitions of each of ``topics`` topics in ``slots`` slots.

    ``dealt`` or rescaled; one topic is ``shop-events`` with 9-digit offsets, more topics
    are named as the many-partitions benchmark names them, with 3-digit offsets.
    """

    partitions: int
    slots: int
    dealt: bool
    topics: int = 1


@dataclass(frozen=True)
class SizeResult:
    """Bytes of each document, and the median milliseconds to write and read version 4."""

    case: SizeCase
    builtin: int
    v2: int
    v3: int
    v4: int
    layout: str
    write_ms: float
    read_ms: float


def _names(case: SizeCase) -> list[str]:
    if case.topics == 1:
        return [TOPIC]
    run = "3f9c2a1e"  # the benchmark's run id: 8 hex digits
    return [f"many-t{case.topics}x{case.partitions}-{run}-{i}" for i in range(case.topics)]


def _ids(names: list[str], rng: random.Random) -> dict[str, str]:
    """Return a 22-character id per topic (base64 of 16 bytes, unpadded, as Kafka prints)."""
    if names == [TOPIC]:
        return {TOPIC: TOPIC_ID}
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return {name: "".join(rng.choice(alphabet) for _ in range(22)) for name in names}


def _state(case: SizeCase, names: list[str], rng: random.Random) -> OffsetState:
    low, high = (10**8, 2 * 10**8) if case.topics == 1 else (100, 1000)
    live = [
        PartitionOffset(name, p, rng.randrange(low, high))
        for name in names
        for p in range(case.partitions)
    ]
    if case.dealt:
        return rebalance(OffsetState.empty(), case.slots, live).state
    # From half as many again plus one: 2N -> N would land on round-robin by chance.
    wider = rebalance(OffsetState.empty(), case.slots + case.slots // 2 + 1, live).state
    return rebalance(wider, case.slots, live).state


def _slot_layout(state: OffsetState) -> list[dict[str, dict[str, int]]]:
    slots = []
    for slot in state.slots:
        topics: dict[str, dict[str, int]] = {}
        for sub in slot:
            topics.setdefault(sub.topic, {})[str(sub.partition)] = sub.offset
        slots.append(topics)
    return slots


def _v2(document: SlotsDocument) -> str:
    """Write the version 2 document of the same state, as that release did."""
    slots = _slot_layout(document.state)
    return json.dumps({"version": 2, "slots": slots, "topicIds": dict(document.topic_ids)})


def _v3(document: SlotsDocument) -> str:
    """Write the version 3 document: the topic layout unless the slot layout is shorter."""
    ids = {topic: document.topic_ids[topic] for topic in sorted(document.topic_ids)}
    state = document.state
    by_topic = {"version": 3, "slots": state.num_slots, "topics": topic_layout(state)}
    by_slot: dict[str, Any] = {"version": 3, "slots": _slot_layout(state)}
    by_topic["topicIds"] = by_slot["topicIds"] = ids
    shorter = all(
        len(json.dumps(by_topic, **spacing)) <= len(json.dumps(by_slot, **spacing))
        for spacing in ({}, _COMPACT)
    )
    return json.dumps(by_topic if shorter else by_slot)


def _builtin(state: OffsetState) -> str:
    offsets: dict[str, dict[str, int]] = {}
    for tp, offset in sorted(state.offsets().items()):
        offsets.setdefault(tp.topic, {})[str(tp.partition)] = offset
    return json.dumps(offsets, **_COMPACT)


def _median_ms(call, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(case: SizeCase, seed: int = 7) -> SizeResult:
    """Size the four documents of one case; time version 4's write and read."""
    rng = random.Random(seed)
    names = _names(case)
    ids = _ids(names, rng)
    state = _state(case, names, rng)
    document = SlotsDocument(state, topic_ids=ids)
    text = json.dumps(document.to_dict())
    assert SlotsDocument.from_dict(json.loads(text)) == document
    # A fresh document each time: the first write decides the layout, which is the cost.
    write_ms = _median_ms(lambda: json.dumps(SlotsDocument(state, topic_ids=ids).to_dict()))
    read_ms = _median_ms(lambda: SlotsDocument.from_dict(json.loads(text)))
    written = json.loads(text)
    if isinstance(written["slots"], int):
        listed = any("slots" in entry for entry in written["topics"].values())
        layout = "topic, slots listed" if listed else "topic"
    else:
        layout = "slot"
    return SizeResult(
        case,
        len(_builtin(state)),
        len(_v2(document)),
        len(_v3(document)),
        len(text),
        layout,
        write_ms,
        read_ms,
    )


def cases(quick: bool = False) -> list[SizeCase]:
    """Return the cases: one topic, then 100 topics of 10 partitions.

    One topic of 100, 1,000 and 10,000 partitions over 1, 20, 200 slots and one slot per
    partition; 100 topics of 10 partitions over 20 slots and one slot per partition.
    """
    sizes = (100, 1000) if quick else (100, 1000, 10000)
    one_topic = [
        SizeCase(partitions, slots, dealt)
        for partitions in sizes
        for slots in (1, 20, 200, partitions)
        for dealt in (True, False)
        if slots <= partitions
    ]
    many_topics = [
        SizeCase(10, slots, dealt, topics=100) for slots in (20, 1000) for dealt in (True, False)
    ]
    return one_topic + many_topics


def table(results: list[SizeResult]) -> str:
    """Format the results as a Markdown table, with the ratios to built-in, v2 and v3."""
    header = (
        "topics x partitions | slots | assignment | built-in | v2 | v3 | v4 (layout) "
        "| v4 / built-in | v4 / v2 | v4 / v3 | v4 write ms | v4 read ms"
    )
    return markdown_table(header, "rrlrrrrrrrrr", map(_row, results))


def _row(r: SizeResult) -> str:
    c = r.case
    total = c.topics * c.partitions
    shape = f"{c.partitions:,}" if c.topics == 1 else f"{c.topics:,} x {c.partitions:,}"
    slots = f"{c.slots:,}" + (" (one per partition)" if c.slots == total else "")
    return (
        f"{shape} | {slots} | {'dealt' if c.dealt else 'rescaled'} | {r.builtin:,} | "
        f"{r.v2:,} | {r.v3:,} | {r.v4:,} ({r.layout}) | {r.v4 / r.builtin:.2f} | "
        f"{r.v4 / r.v2:.2f} | {r.v4 / r.v3:.2f} | {r.write_ms:.1f} | {r.read_ms:.1f}"
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
