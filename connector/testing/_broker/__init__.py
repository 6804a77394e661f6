"""The machinery behind the broker tools: one Kafka JVM and what it needs.

:mod:`kafka_rescalable.testing.local_kafka` and :mod:`kafka_rescalable.testing.local_cluster` are
the tools
users call; this package runs the processes under them: a node's configuration and process
(``node``, ``config``, ``process``, ``class_data``), when it is ready (``readiness``), the start
and clean-up both tools share (``server``), and the admin calls of a cluster
(``cluster_admin``).
"""
