"""Shared settings of the unit tests.

Hypothesis's per-example deadline is a timing assertion: on a loaded two-core CI machine it
fails tests whose properties hold. Properties are checked here, never speed (benchmarks/ does
that), so the deadline is off for every property test.
"""

from hypothesis import settings

settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")
