"""The machinery behind :class:`kafka_rescalable.testing.schema_registry.LocalSchemaRegistry`.

Building the registry application once from Maven Central (``build``); the tool users call,
which runs it, lives in :mod:`kafka_rescalable.testing.schema_registry`.
"""
