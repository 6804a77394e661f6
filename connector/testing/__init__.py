"""Tools for testing against real Kafka: a local multi-node cluster, secured listeners.

Not part of the connector's runtime API: nothing in :mod:`connector` imports this package, and
its extra dependency (``cryptography``, for TLS) comes with the ``test`` extras.
"""

from connector.testing.local_cluster import LocalKafkaCluster, PartitionState
from connector.testing.security import SecurityConfig, TlsFiles

__all__ = ["LocalKafkaCluster", "PartitionState", "SecurityConfig", "TlsFiles"]
