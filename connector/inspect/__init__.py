"""Inspect a checkpoint: which reader slots own which Kafka partitions, batch by batch.

Usage::

    python -m kafka_rescalable.inspect CHECKPOINT [--batch ID | --diff FROM TO] [--json]
    python -m kafka_rescalable.inspect CHECKPOINT --starting-offsets [--source KEY] [--json]

Without options it describes the latest batch of the offset log; ``--batch`` another one;
``--diff`` how the assignment changed between two batches and how many records were read
in between; ``--starting-offsets`` prints the ``startingOffsets`` that continue the query
(Spark's built-in ``kafka`` source's, or ours) in a new kafka-rescalable query: the end of
its last committed batch. ``--json`` prints the same as JSON. Errors (not a checkpoint, no
offsets yet, a malformed document) are one line on stderr and exit code 2.

The package is split by role, and only :func:`read_checkpoint` touches files:

- :mod:`~kafka_rescalable.inspect.files`: what a file system must answer
  (``CheckpointFiles``) and ``LocalFiles``, this machine's disk;
  :mod:`kafka_rescalable.checkpoints` adds every ``pyarrow.fs`` file system.
- :mod:`~kafka_rescalable.inspect.reading`: the offset log into values (:func:`read_checkpoint`,
  :func:`parse_offset_file`, :func:`classify_source`).
- :mod:`~kafka_rescalable.inspect.diffing`: comparing them (:func:`slot_history`,
  :func:`diff_states`, :func:`diff_batches`).
- :mod:`~kafka_rescalable.inspect.continuing`: where a new query continues
  (:func:`~kafka_rescalable.inspect.continuing.continuation`; not re-exported here, to keep this
  package's imports few).
- :mod:`~kafka_rescalable.inspect.model`: the one JSON model of a result (:func:`batch_json`,
  :func:`diff_json`, :func:`continuation_json`); ``--json`` prints it as it is.
- :mod:`~kafka_rescalable.inspect.rendering`: the text view, written from that model
  (:func:`batch_text`, :func:`diff_text`, :func:`continuation_text`), so text and JSON
  always agree.
- :mod:`~kafka_rescalable.inspect.cli`: :func:`main`.

None of it needs Spark or Kafka.
"""

from kafka_rescalable.inspect.cli import EXIT_ERROR as EXIT_ERROR
from kafka_rescalable.inspect.cli import PROG as PROG
from kafka_rescalable.inspect.cli import main
from kafka_rescalable.inspect.diffing import (
    AssignmentDiff,
    PartitionMove,
    PartitionPlacement,
    PartitionProgress,
    SlotRun,
    SourceDiff,
    diff_batches,
    diff_states,
    slot_history,
)
from kafka_rescalable.inspect.model import (
    BatchView,
    ContinuationView,
    DiffView,
    batch_json,
    continuation_json,
    diff_json,
)
from kafka_rescalable.inspect.reading import SUPPORTED_LOG_VERSIONS as SUPPORTED_LOG_VERSIONS
from kafka_rescalable.inspect.reading import (
    BatchOffsets,
    CheckpointError,
    CheckpointLog,
    SourceKind,
    SourceOffset,
    classify_source,
    parse_offset_file,
    read_checkpoint,
)
from kafka_rescalable.inspect.rendering import (
    batch_text,
    continuation_text,
    diff_text,
    render_batch,
    render_diff,
)

__all__ = [
    "AssignmentDiff",
    "BatchOffsets",
    "BatchView",
    "CheckpointError",
    "CheckpointLog",
    "ContinuationView",
    "DiffView",
    "PartitionMove",
    "PartitionPlacement",
    "PartitionProgress",
    "SlotRun",
    "SourceDiff",
    "SourceKind",
    "SourceOffset",
    "batch_json",
    "batch_text",
    "classify_source",
    "continuation_json",
    "continuation_text",
    "diff_batches",
    "diff_json",
    "diff_states",
    "diff_text",
    "main",
    "parse_offset_file",
    "read_checkpoint",
    "render_batch",
    "render_diff",
    "slot_history",
]
