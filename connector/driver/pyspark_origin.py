"""Say, once per planning process, when that process compiled PySpark from ``pyspark.zip``.

Spark starts each streaming query's source process (and each planning process of a Python
data source) with ``$SPARK_HOME/python/lib/pyspark.zip`` first on its path. Where the archive
holds no bytecode, that process compiled every PySpark module it imported before our code
ran: about half a second of each query's start, the largest part of the start-up a query of
ours has and the built-in source has not. Nothing in a query's progress shows it, and the
fix is one command per Spark installation, so the process that paid says so. The check is a
look at ``pyspark.__file__``: zipimport names the entry it loaded, ``.py`` when it compiled
the source, ``.pyc`` when it used bytecode; an installed pyspark is not in a zip at all.
"""

from __future__ import annotations

import os

from kafka_rescalable._logging import logger

__all__ = ["compiled_pyspark_hint", "note_pyspark_origin"]

_noted = False


def compiled_pyspark_hint(pyspark_file: str) -> str | None:
    """Return the hint for a PySpark loaded from ``pyspark_file``; ``None`` if it had bytecode."""
    archive, inside, _ = pyspark_file.partition(".zip" + os.sep)
    if not inside or not pyspark_file.endswith(".py"):
        return None
    return (
        f"this Python process (which Spark starts for each query) compiled PySpark from the "
        f"sources in {archive}.zip before the query could start, about half a second on a "
        "typical machine. Run kafka-rescalable-compile-pyspark once for that Spark "
        "installation to add the archive's bytecode (docs/deploy/local.md, Query start)"
    )


def note_pyspark_origin() -> None:
    """Log :func:`compiled_pyspark_hint` once per process, if it has anything to say."""
    global _noted
    if _noted:
        return
    _noted = True
    import pyspark

    hint = compiled_pyspark_hint(getattr(pyspark, "__file__", None) or "")
    if hint is not None:
        logger.info(hint)
