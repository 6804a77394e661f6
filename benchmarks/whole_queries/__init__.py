"""Whole queries: the time a query takes from ``start()`` to its end, per contender.

Throughput of our source against Spark's built-in one, the raw client limit and a Python
source that reads nothing (:mod:`.spark_throughput`, :mod:`.client_limit`,
:mod:`.ceiling_source`); decoding Avro records (:mod:`.avro_decode`, its records in
:mod:`.avro_records`); writing with our sink against Spark's (:mod:`.sink_throughput`).
"""
