"""What one Spark task is: the value the driver plans and the executors read.

Both sides import this package and neither imports the other, as Flink's Kafka connector keeps
its split type in ``split/``: the driver (:mod:`connector.driver`) builds
:class:`KafkaInputPartition` values and the :class:`RangeReadSettings` that travel on the
pickled reader; the executors (:mod:`connector.executor`) read them. The readers are handed the
executor's task-reading function (a :data:`ReadTask`) by :mod:`connector.source`, which wires
the two sides together.
"""

from connector.task.partition import KafkaInputPartition, ReadTask
from connector.task.settings import RangeReadSettings, read_settings

__all__ = ["KafkaInputPartition", "RangeReadSettings", "ReadTask", "read_settings"]
