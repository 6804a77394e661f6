"""Say, once per planning process, when that process compiled PySpark from ``pyspark.zip``.

Spark starts each streaming query's source process (and each planning process of a Python
data source) with ``$SPARK_HOME/python/lib/pyspark.zip`` first on its path. Where the archive
holds no bytecode this Python can use, that process compiled every PySpark module it
imported before our code ran: about half a second of each query's start, the largest part
of the start-up a query of ours has and the built-in source has not. Nothing in a query's
progress shows it, and the fix is one command per Spark installation, so the process that
paid says so. The check is a look at the loaded ``pyspark`` module: its loader is a
``zipimporter`` only when it came from an archive, and zipimport sets ``__file__`` to the
entry it loaded, ``.py`` when it compiled the source, ``.pyc`` when it used bytecode.
"""

from __future__ import annotations

import sys
import zipimport
from types import ModuleType

from kafka_rescalable._logging import logger

__all__ = ["compiled_pyspark_hint", "note_pyspark_origin"]

_noted = False


def compiled_pyspark_hint(pyspark: ModuleType) -> str | None:
    """Return the hint for this loaded ``pyspark`` module; ``None`` if it had bytecode."""
    loader = getattr(pyspark, "__loader__", None)
    loaded = getattr(pyspark, "__file__", None) or ""
    if not isinstance(loader, zipimport.zipimporter) or not loaded.endswith(".py"):
        return None
    return (
        f"this Python process (which Spark starts for each query) compiled PySpark from the "
        f"sources in {loader.archive} before the query could start, about half a second on a "
        f"typical machine: the archive holds no bytecode for this Python ({sys.executable}, "
        f"{sys.implementation.cache_tag}). Run kafka-rescalable-compile-pyspark with this "
        "Python once for that Spark installation (docs/deploy/local.md, Query start)"
    )


def note_pyspark_origin() -> None:
    """Log :func:`compiled_pyspark_hint` once per process, if it has anything to say."""
    global _noted
    if _noted:
        return
    _noted = True
    import pyspark

    hint = compiled_pyspark_hint(pyspark)
    if hint is not None:
        logger.info(hint)
