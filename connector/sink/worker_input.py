"""Whether a Python worker's input really ended, or was cut by a failure upstream in the task.

When something before the sink fails inside the same Spark task (a UDF, a shuffle fetch), the
JVM stops feeding the writer's worker and closes its input. The Arrow reader PySpark hands
``write()`` takes the closed stream for a normal end, so ``write()`` sees fewer rows and
returns normally: a per-task commit would then record a partial partition as written, and the
retried task would skip it. A complete input is followed by PySpark's ``END_OF_STREAM`` code,
which the worker reads after ``write()`` returns; a cut input by end-of-file. This module
peeks at those next bytes, without consuming them, from the worker's input stream.
"""

from __future__ import annotations

import struct
import sys
from typing import Any, Final

__all__ = ["input_complete"]

_END_OF_STREAM: Final = struct.pack(">i", -4)
"""PySpark's ``SpecialLengths.END_OF_STREAM``, as the JVM writes it after the last input."""


def _worker_input() -> Any:
    """Return the worker's input stream: ``infile`` of PySpark's worker ``main``, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "main" and "infile" in frame.f_locals:
            return frame.f_locals["infile"]
        frame = frame.f_back
    return None


def input_complete() -> bool | None:
    """Say whether this worker's input ended normally.

    Returns ``True`` when ``END_OF_STREAM`` follows the rows, ``False`` when the input was cut
    (end-of-file instead), and ``None`` outside a PySpark worker (a test calling the writer
    directly), where there is nothing to check.
    """
    stream = _worker_input()
    if stream is None or not hasattr(stream, "peek"):
        return None
    following = stream.peek(len(_END_OF_STREAM))[: len(_END_OF_STREAM)]
    return bool(following) and _END_OF_STREAM.startswith(following)
