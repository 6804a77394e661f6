"""The driver's side of the source: Kafka lookups, batch boundaries, and the tasks of a batch.

Policy lives in :mod:`state`; these modules fetch what it needs from Kafka (and from Spark's
REST API for ``parallelism=auto``), call it, and hand Spark the result.
"""
