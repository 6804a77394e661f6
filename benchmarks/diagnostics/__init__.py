"""Diagnostics: where time and memory go, and the pure decisions on what long runs sampled.

cProfile listings (:mod:`.profiling`), the start-up of a streaming query's Python process
(:mod:`.startup_profile`), resident memory per kind of process (:mod:`.process_memory`, shared
with the soak run in ``integration_tests``), the memory of a running query over minutes
(:mod:`.memory`), and the keep-up and memory-growth verdicts (:mod:`.trends`).
"""
