"""The machinery behind :class:`connector.testing.schema_registry.LocalSchemaRegistry`.

Building the registry application once from Maven Central (``build``); the tool users call,
which runs it, lives in :mod:`connector.testing.schema_registry`.
"""
