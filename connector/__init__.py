"""A Kafka source for Spark Structured Streaming with rescalable offset state.

>>> from connector import KafkaSource
>>> spark.dataSource.register(KafkaSource)  # doctest: +SKIP
>>> spark.readStream.format("kafka-rescalable").option(...)  # doctest: +SKIP
>>> df.writeStream.format("kafka-rescalable").option(...)  # doctest: +SKIP
"""

from connector.errors import (
    DataLossError,
    InvalidOptionError,
    KafkaMetadataError,
    KafkaReadError,
    KafkaRescalableError,
    KafkaSourceError,
    KafkaWriteError,
    SinkInputError,
    UnsupportedKafkaSettingError,
)
from connector.source import KafkaSource

__all__ = [
    "DataLossError",
    "InvalidOptionError",
    "KafkaMetadataError",
    "KafkaReadError",
    "KafkaRescalableError",
    "KafkaSource",
    "KafkaSourceError",
    "KafkaWriteError",
    "SinkInputError",
    "UnsupportedKafkaSettingError",
]
