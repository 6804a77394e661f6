"""Protobuf as the ``protobuf`` codec (:mod:`kafka_rescalable.formats.protobuf_codec`) reads it.

- :mod:`~kafka_rescalable.formats.protobuf.native`: whole columns decoded by the native core,
  when it is installed, for the messages whose values it is proven to give as the Python path
  (:mod:`~kafka_rescalable.formats.protobuf_values`) does.

A sub-package, as Avro's is, so that the codec reaches its native glue without one more
sibling import (``tests/test_layout.py``); the codec's other modules may move here later.
"""
