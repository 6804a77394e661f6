"""The schema registry's client, shared by the formats that frame payloads for a registry.

Avro, JSON and Protobuf payloads framed for a Confluent-style registry carry a schema id that
only the registry resolves; each of those codecs asks the same client, made here once per
Python worker and registry settings.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from connector.errors import MissingExtraError
from connector.formats.options import RegistrySettings

__all__ = ["SERIALIZER_KEYS", "registry_client"]

SERIALIZER_KEYS: Final = frozenset(
    {"auto.register.schemas", "normalize.schemas", "use.latest.version"}
)
"""``schema.registry.*`` settings of the sink's serializers, which ``SchemaRegistryClient``
refuses as unknown: the client is made without them."""


@functools.cache
def registry_client(registry: RegistrySettings) -> Any:
    """confluent-kafka's ``SchemaRegistryClient`` for ``registry``, one per Python worker.

    One client per worker and settings keeps its caches (schemas by id, subjects' versions)
    across tasks, so an executor asks the registry once per writer schema, not per batch.
    """
    try:
        from confluent_kafka.schema_registry import SchemaRegistryClient
    except ImportError as error:  # httpx, authlib, ... come with the extras
        msg = (
            "a schema registry needs confluent-kafka's registry client and its libraries "
            f"({error.name} is missing): pip install 'kafka-rescalable[avro]' (or [protobuf], "
            "[json])"
        )
        raise MissingExtraError(msg, "avro") from error
    config = {k: v for k, v in registry.items if k not in SERIALIZER_KEYS}
    return SchemaRegistryClient(config)
