"""Micro-benchmarks: one piece of the library timed on its own, no Spark query.

The driver's planning per micro-batch (:mod:`.planning_cost`), the rebalancer
(:mod:`.rebalancer_bench`) and the bytes of one offset-log entry (:mod:`.offset_document_size`).
"""
