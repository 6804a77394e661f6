"""Shared settings of the unit tests.

Hypothesis's per-example deadline is a timing assertion: on a loaded two-core CI machine it
fails tests whose properties hold. Properties are checked here, never speed (benchmarks/ does
that), so the deadline is off for every property test.

CI runs the tests on two pyspark lines (``.ci/run``), so the report header names the pyspark
this run uses, where the log of either stage shows it first.
"""

from pathlib import Path

import pyspark
from hypothesis import settings

settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")


def pytest_report_header() -> str:
    """Name the pyspark under test and where it is installed."""
    return f"pyspark {pyspark.__version__} ({Path(pyspark.__file__).parent.parent})"
