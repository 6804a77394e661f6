"""What one Spark task is: the value the driver plans and the executors read.

Both sides import this package and neither imports the other, as Flink's Kafka connector keeps
its split type in ``split/``: the driver (:mod:`kafka_rescalable.driver`) builds
:class:`KafkaInputPartition` values and the :class:`RangeReadSettings` that travel on the
pickled reader; the executors (:mod:`kafka_rescalable.executor`) read them. The readers are handed
the
executor's task-reading function (a :data:`ReadTask`) by :mod:`kafka_rescalable.source`, which wires
the two sides together.
"""

from kafka_rescalable.task.partition import KafkaInputPartition, ReadTask
from kafka_rescalable.task.settings import RangeReadSettings, read_settings

__all__ = ["KafkaInputPartition", "RangeReadSettings", "ReadTask", "read_settings"]
