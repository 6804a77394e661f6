"""A Kafka source for Spark Structured Streaming with rescalable offset state.

Installed, the format is found by name (see ``pyspark_kafka_rescalable``); registering
the class is needed only where the package is importable but not installed:

>>> from connector import KafkaSource
>>> spark.dataSource.register(KafkaSource)  # doctest: +SKIP
>>> spark.readStream.format("kafka-rescalable").option(...)  # doctest: +SKIP
>>> df.writeStream.format("kafka-rescalable").option(...)  # doctest: +SKIP
"""

from connector.errors import (
    CheckpointOffsetError,
    DataLossError,
    InvalidOptionError,
    KafkaAuthenticationError,
    KafkaAuthorizationError,
    KafkaMetadataError,
    KafkaReadError,
    KafkaRescalableError,
    KafkaSourceError,
    KafkaWriteError,
    MissingExtraError,
    MissingTopicError,
    PayloadDecodeError,
    RecordDecodeError,
    SchemaRegistryError,
    SinkInputError,
    UnsupportedKafkaSettingError,
)
from connector.source import KafkaSource

__all__ = [
    "CheckpointOffsetError",
    "DataLossError",
    "InvalidOptionError",
    "KafkaAuthenticationError",
    "KafkaAuthorizationError",
    "KafkaMetadataError",
    "KafkaReadError",
    "KafkaRescalableError",
    "KafkaSource",
    "KafkaSourceError",
    "KafkaWriteError",
    "MissingExtraError",
    "MissingTopicError",
    "PayloadDecodeError",
    "RecordDecodeError",
    "SchemaRegistryError",
    "SinkInputError",
    "UnsupportedKafkaSettingError",
]
