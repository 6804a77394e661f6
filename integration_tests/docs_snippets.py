"""Run the documentation's code (``docs/snippets/*.py``) as a reader would, against real parts.

Every snippet file is a script that reads where to connect from the environment
(``KAFKA_BOOTSTRAP_SERVERS``, ``DOCS_TOPIC``, ``DOCS_WORKDIR``, ...); the pages include its
marked sections. :func:`run_snippet` runs one in the test's own process, so that
``SparkSession.builder.getOrCreate()`` in the snippet is the suite's session (one Spark for
all of them), and returns the script's globals for the test to check. tests/test_docs_site.py
checks that every snippet file is run by some ``run_snippet("<name>.py", ...)`` call of the
integration tests.
"""

from __future__ import annotations

import os
import runpy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["SNIPPETS", "run_snippet"]

SNIPPETS = Path(__file__).resolve().parent.parent / "docs" / "snippets"


def run_snippet(name: str, env: Mapping[str, str]) -> dict[str, Any]:
    """Run ``docs/snippets/<name>`` with ``env`` added to the environment; return its globals.

    The environment is restored afterwards, whatever the snippet did, so one test's topic
    never leaks into the next test's snippet.
    """
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        return runpy.run_path(str(SNIPPETS / name), run_name="docs_snippet")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
