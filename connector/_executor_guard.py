"""Name the missing package when an executor's Python cannot import kafka-rescalable.

Spark ships the source, its readers and its writers to the executors pickled, and the
executors unpickle them before any code of ours runs: where the executors' Python lacks the
package, the task used to fail with a bare ``No module named 'kafka_rescalable'`` (or
``'confluent_kafka'``) that names neither this project nor what to do. The classes that travel
(:class:`ShippedToExecutors`) therefore pickle as a call to :func:`rebuild` with their state as
opaque bytes. This module is pickled *by value* (``register_pickle_by_value``), so
:func:`rebuild` reaches the executor even where the package is missing; there it imports the
class's module first and, if that fails, raises the error with a message that says which
Python lacks what and where the deployment guide is.

The driver cannot tell this before the tasks run: which interpreter the executors start, and
what is installed in it, is known on the workers only. A missing ``pyarrow`` still fails in
PySpark's own code first (its read function needs pyarrow before any of ours is unpickled).
"""

from __future__ import annotations

import sys
from typing import Any

from pyspark import cloudpickle

__all__ = ["GUIDE", "ShippedToExecutors", "missing_package_message", "rebuild"]

GUIDE = "docs/deploy/cluster.md (Running on a cluster)"
"""Where the deployment guide is, as the messages name it."""


def missing_package_message(missing: str | None, executable: str, host: str) -> str:
    """Say which executor Python lacks which module, why that Python runs, and what to do."""
    module = missing or "kafka_rescalable"
    return (
        f"kafka-rescalable cannot run on executor host {host}: its Python, {executable}, "
        f"has no module {module!r}. For a source found by name, the executors run the "
        "interpreter the driver's environment names (PYSPARK_DRIVER_PYTHON, else "
        "PYSPARK_PYTHON, else python3), resolved on each worker; spark.pyspark.python alone "
        "does not choose it. Install kafka-rescalable into that Python on every worker, or "
        "ship it with `kafka-rescalable-pack` and spark.archives; see " + GUIDE
    )


def rebuild(module_name: str, qualname: str, state: bytes) -> Any:
    """Import the class's module, naming what is missing, then restore the pickled object.

    Runs wherever the object is unpickled: on the driver's planner process and on executors.

    Raises
    ------
    ModuleNotFoundError
        With :func:`missing_package_message`: the executor's Python cannot import the package
        or one of its dependencies. (No exception class of ours can be imported there.)
    """
    import importlib
    import pickle
    import socket

    try:
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        message = missing_package_message(error.name, sys.executable, socket.gethostname())
        raise ModuleNotFoundError(message, name=error.name) from error
    for part in qualname.split("."):
        target = getattr(target, part)
    restored = target.__new__(target)
    values = pickle.loads(state)
    if hasattr(restored, "__setstate__"):
        restored.__setstate__(values)
    elif values:  # object.__getstate__ gives None for an empty __dict__
        restored.__dict__.update(values)
    return restored


class ShippedToExecutors:
    """Mixin: pickle through :func:`rebuild`, so a missing package gets a message of ours.

    The state is what ``__getstate__`` returns (a class that trims what it ships keeps doing
    so), pickled apart into bytes so that unpickling it cannot import the package before
    :func:`rebuild` has checked it can.
    """

    def __reduce__(self) -> tuple[Any, tuple[str, str, bytes]]:
        """Pickle as ``rebuild(module, qualname, state bytes)``."""
        cls = type(self)
        state = cloudpickle.dumps(self.__getstate__())
        return rebuild, (cls.__module__, cls.__qualname__, state)


# rebuild must reach executors that cannot import this package: ship this module's code.
cloudpickle.register_pickle_by_value(sys.modules[__name__])
