"""Whole queries: the time a query takes from ``start()`` to its end, per contender.

Throughput of our source against Spark's built-in one, the raw client limit and a Python
source that reads nothing (:mod:`.spark_throughput`, :mod:`.client_limit`,
:mod:`.ceiling_source`); decoding typed records against Spark's JVM decoders
(:mod:`.typed_decode`, its contenders in :mod:`.typed_contenders`, its records in
:mod:`.avro_records` and :mod:`.order_encodings`); writing with our sink against Spark's
(:mod:`.sink_throughput`).
"""
