"""Benchmarks of throughput, planning cost and the rebalancer.

Throughput is measured against Spark's built-in Kafka source and the raw client limit. Run
everything with ``python -m benchmarks.run [--quick]``; see ``benchmarks/README.md``.
"""
