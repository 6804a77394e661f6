"""Tools for testing against real Kafka: a local multi-node cluster, secured listeners.

Not part of the connector's runtime API: nothing in :mod:`connector` imports this package, and
its one extra dependency (``cryptography``, for TLS) is the ``testing`` extra.

It ships in the product's wheel, as :mod:`pyspark.testing` ships in pyspark's, rather than as a
second distribution: users test their own pipelines against the same embedded broker, cluster
and registry our suite uses, and one distribution cannot drift from the source it tests. It
costs about 150 KB of Python and nothing at run time: the source never imports it (a test
checks), and the jars and the registry's build are fetched only when a tool starts.
"""

from kafka_rescalable.testing.local_cluster import LocalKafkaCluster, PartitionState
from kafka_rescalable.testing.security import SecurityConfig, TlsFiles

__all__ = ["LocalKafkaCluster", "PartitionState", "SecurityConfig", "TlsFiles"]
