"""Warn on the driver when the executors will run another Python than ``PYSPARK_PYTHON``.

For a source found by name, Spark's driver JVM picks one interpreter from its environment,
``PYSPARK_DRIVER_PYTHON`` first, and starts both the driver's planning processes (this code)
and the executors' Python workers with it. A user who sets both variables to different
Pythons means the executors to run ``PYSPARK_PYTHON`` (Spark's own guide does so for packed
environments); they will run the driver's instead, and on workers that lack it the tasks
fail. The planning process can see this before any task runs: its own command line names
the interpreter Spark chose, and its environment is the driver JVM's. It cannot see the
workers, so this is a warning, not an error: on one machine (``local[*]``), or on workers
that have the driver's Python at the same path, the query works.

See docs/deploy/cluster.md.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence

from kafka_rescalable._logging import logger

__all__ = ["executor_python_warning", "warn_about_executor_python"]

_warned = False


def executor_python_warning(environ: Mapping[str, str], command: Sequence[str]) -> str | None:
    """Return the warning for this planning process, or ``None`` when there is nothing to say.

    Parameters
    ----------
    environ
        The planning process's environment: the driver JVM's.
    command
        Its command line (``sys.orig_argv``): the first word is the interpreter Spark chose.
    """
    driver = environ.get("PYSPARK_DRIVER_PYTHON", "")
    executors = environ.get("PYSPARK_PYTHON", "")
    if not driver or not executors or not command or command[0] != driver:
        return None  # registered by hand, or one Python for both: no surprise
    if _resolved(driver, environ) == _resolved(executors, environ):
        return None
    return (
        f"the executors will run PYSPARK_DRIVER_PYTHON ({driver}), not PYSPARK_PYTHON "
        f"({executors}): Spark starts a Python data source found by name with the driver's "
        "interpreter on the executors too. If the workers lack it, or it lacks "
        "kafka-rescalable there, the tasks fail; unset PYSPARK_DRIVER_PYTHON or set it to "
        "the same Python, or ship the package (see docs/deploy/cluster.md)"
    )


def warn_about_executor_python() -> None:
    """Log :func:`executor_python_warning` once per process, if it has anything to say."""
    global _warned
    if _warned:
        return
    _warned = True
    message = executor_python_warning(os.environ, getattr(sys, "orig_argv", sys.argv))
    if message is not None:
        logger.warning(message)


def _resolved(command: str, environ: Mapping[str, str]) -> str:
    """Return the folder the command runs from, where ``python`` and ``python3`` agree.

    Not the real path: a virtualenv's ``python`` links to the base interpreter, whose
    packages are another environment's.
    """
    found = shutil.which(command, path=environ.get("PATH"))
    return os.path.dirname(os.path.abspath(found)) if found else command
