"""Benchmarks of throughput, latency, memory, planning cost and the rebalancer.

Grouped by kind: :mod:`benchmarks.whole_queries` (a query timed to its end),
:mod:`benchmarks.running_queries` (a steady query watched for a while),
:mod:`benchmarks.micro` (one piece of the library on its own) and
:mod:`benchmarks.diagnostics` (profiles, memory, the verdicts on long runs); shared:
:mod:`benchmarks.session`, :mod:`benchmarks.data`, :mod:`benchmarks.workloads`,
:mod:`benchmarks.report`. Run everything with ``python -m benchmarks.run [--quick]``; see
``benchmarks/README.md``.
"""
