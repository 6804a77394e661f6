"""cProfile of one call, as text: where a missed target's time goes."""

from __future__ import annotations

import cProfile
import io
import pstats
from collections.abc import Callable

__all__ = ["profile_call"]


def profile_call(call: Callable[[], object], top: int = 20) -> str:
    """Run ``call`` once under cProfile; return the ``top`` functions by cumulative time.

    cProfile slows Python code down several times, function calls most: read the shares,
    not the absolute times.
    """
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        call()
    finally:
        profiler.disable()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.strip_dirs().sort_stats("cumulative").print_stats(top)
    return text.getvalue().strip()
