"""The command line: ``python -m kafka_rescalable.inspect`` and ``kafka-rescalable-inspect``.

It reads the checkpoint, builds one view of :mod:`kafka_rescalable.inspect.model`, and prints it as
JSON or as text; every error is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Final

from kafka_rescalable.inspect.continuing import continuation
from kafka_rescalable.inspect.diffing import diff_batches
from kafka_rescalable.inspect.model import batch_json, continuation_json, diff_json
from kafka_rescalable.inspect.reading import (
    CheckpointError,
    CheckpointLog,
    read_checkpoint,
    reject_malformed,
)
from kafka_rescalable.inspect.rendering import batch_text, continuation_text, diff_text

PROG: Final = "python -m kafka_rescalable.inspect"
EXIT_ERROR: Final = 2
"""Exit code of every error, as argparse uses for a bad command line."""


def main(
    argv: Sequence[str] | None = None, read: Callable[[str], CheckpointLog] = read_checkpoint
) -> int:
    """Run the command; return its exit code (0, or 2 on any error, with one line on stderr).

    ``read`` turns the ``CHECKPOINT`` argument into the log: a local path here;
    ``kafka-rescalable-inspect`` passes :func:`kafka_rescalable.checkpoints.read_checkpoint_at`,
    which also opens ``pyarrow.fs`` URIs.
    """
    args = _parser().parse_args(argv)
    try:
        log = read(args.checkpoint)
        if args.source is not None and not args.starting_offsets:
            raise CheckpointError("--source goes with --starting-offsets")
        if args.starting_offsets:
            found = continuation_json(log, continuation(log, args.source))
            output = json.dumps(found, indent=2) if args.json else continuation_text(found)
        elif args.diff is not None:
            diff_view = diff_json(log, diff_batches(log, args.diff[0], args.diff[1]))
            output = json.dumps(diff_view, indent=2) if args.json else diff_text(diff_view)
        else:
            batch = log.latest if args.batch is None else log.batch(args.batch)
            reject_malformed(batch)
            batch_view = batch_json(log, batch)
            output = json.dumps(batch_view, indent=2) if args.json else batch_text(batch_view)
    except (CheckpointError, OSError) as error:  # OSError: a directory we may not read
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        print(output)
        sys.stdout.flush()
    except BrokenPipeError:
        # Piped into `head`: not worth a traceback. Point stdout at devnull so the flush at
        # interpreter exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Show which reader slots own which Kafka partitions in a kafka-rescalable "
            "checkpoint, for the latest batch, a chosen batch, or between two batches; or "
            "print the startingOffsets that continue a checkpointed query (ours or Spark's "
            "built-in kafka source's) in a new kafka-rescalable query."
        ),
    )
    parser.add_argument(
        "checkpoint",
        metavar="CHECKPOINT",
        help="the checkpointLocation: a path, or a URI pyarrow.fs opens (s3://, hdfs://, file://)",
    )
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--batch", type=int, metavar="ID", help="describe this batch id")
    chosen.add_argument(
        "--diff",
        type=int,
        nargs=2,
        metavar=("FROM", "TO"),
        help="how the assignment changed from batch FROM to batch TO, and records read",
    )
    chosen.add_argument(
        "--starting-offsets",
        action="store_true",
        help=(
            "print the startingOffsets JSON that continues this query (Spark's built-in kafka "
            "source or ours) in a new kafka-rescalable query: the end of its last committed "
            "batch, one line per Kafka source when it has several"
        ),
    )
    parser.add_argument(
        "--source", metavar="KEY", help="with --starting-offsets: only this source (0, 1, ...)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser
