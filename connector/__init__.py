"""kafka-rescalable: a Kafka source and sink for Spark with rescalable offset state.

Installed, the format is found by name (see ``pyspark_kafka_rescalable``); registering the
class is needed only where the package is importable but not installed:

>>> from kafka_rescalable import KafkaSource
>>> spark.dataSource.register(KafkaSource)  # doctest: +SKIP
>>> spark.readStream.format("kafka-rescalable").option(...)  # doctest: +SKIP
>>> df.write.format("kafka-rescalable").mode("append").option(...)  # doctest: +SKIP

The public API is what ``__all__`` lists here: the data source class, the checkpoint reader
for moving from the built-in source, and every exception the package raises on purpose, so a
job catches them from one root. Sub-modules are internal unless the documentation names them.

``KafkaSource`` and the checkpoint functions import pyspark and pyarrow; they load on first
use, so ``import kafka_rescalable.state`` (pure Python) and the exceptions stay cheap on a
machine, or in a process, that has no Spark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_rescalable.errors import (
    CheckpointOffsetError,
    DataLossError,
    DeadLetterWriteError,
    EnvironmentPackError,
    InvalidOptionError,
    KafkaAuthenticationError,
    KafkaAuthorizationError,
    KafkaMetadataError,
    KafkaReadError,
    KafkaRescalableError,
    KafkaSourceError,
    KafkaWriteError,
    MetricsEndpointError,
    MissingExtraError,
    MissingTopicError,
    PayloadDecodeError,
    RecordDecodeError,
    SchemaReferenceError,
    SchemaRegistryError,
    SinkInputError,
    TokenProviderError,
    UnsupportedKafkaSettingError,
)
from kafka_rescalable.state.errors import (
    DuplicatePartitionError,
    ForeignCheckpointError,
    OffsetDocumentError,
    OffsetRegressionError,
    StateError,
    UnknownPartitionError,
)

if TYPE_CHECKING:
    from kafka_rescalable.checkpoints import starting_offsets_from_checkpoint
    from kafka_rescalable.inspect.reading import CheckpointError
    from kafka_rescalable.source import KafkaSource

__version__ = "0.2.0"

# Names loaded on first access (PEP 562): module that defines each.
_LAZY = {
    "CheckpointError": "kafka_rescalable.inspect.reading",
    "KafkaSource": "kafka_rescalable.source",
    "starting_offsets_from_checkpoint": "kafka_rescalable.checkpoints",
}

__all__ = [
    "CheckpointError",
    "CheckpointOffsetError",
    "DataLossError",
    "DeadLetterWriteError",
    "DuplicatePartitionError",
    "EnvironmentPackError",
    "ForeignCheckpointError",
    "InvalidOptionError",
    "KafkaAuthenticationError",
    "KafkaAuthorizationError",
    "KafkaMetadataError",
    "KafkaReadError",
    "KafkaRescalableError",
    "KafkaSource",
    "KafkaSourceError",
    "KafkaWriteError",
    "MetricsEndpointError",
    "MissingExtraError",
    "MissingTopicError",
    "OffsetDocumentError",
    "OffsetRegressionError",
    "PayloadDecodeError",
    "RecordDecodeError",
    "SchemaReferenceError",
    "SchemaRegistryError",
    "SinkInputError",
    "StateError",
    "TokenProviderError",
    "UnknownPartitionError",
    "UnsupportedKafkaSettingError",
    "__version__",
    "starting_offsets_from_checkpoint",
]


def __getattr__(name: str) -> Any:
    """Import ``KafkaSource`` (and with it pyspark) and the checkpoint reader (pyarrow) on use."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kafka_rescalable' has no attribute {name!r}")
