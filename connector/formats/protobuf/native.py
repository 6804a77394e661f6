"""Protobuf payloads decoded in bulk by the native core, when it is installed.

``kafka_rescalable_native.ProtobufDecoder`` reads the column's descriptor set with
``prost-reflect`` and decodes a whole Arrow column of payloads into one struct array of the
Arrow type Spark declared: straight from the wire format into Arrow builders, or, for a batch
that reader declines (a message field given twice, two members of one oneof, a known field
with another wire type, groups), through ``prost-reflect``'s dynamic messages. Both give the
Python path's values (:mod:`.protobuf_values`): fields not set are null where protobuf
tracks presence, else their defaults; unsigned integers wrap;
enums are names (``UNKNOWN_ENUM_VALUE_...`` for unknown numbers of open enums);
``Timestamp`` and ``Duration`` are microseconds; ``oneof`` members, nested messages, repeated
fields and maps as the Python path gives them. Map entries come in key order: protobuf's
Python maps iterate in a hash order that changes from one process to the next, so the Python
path has no order of its own (the parity tests compare maps in key order).

Decoded natively only where the parity tests prove both paths equal; the core refuses the
rest when the decoder is built, and the column is then read record by record in Python:

- messages with a proto2 ``required`` field anywhere (the Python path checks them);
- fields with an explicit proto2 ``[default = ...]``, proto2 groups, editions files;
- any Spark type other than the one :mod:`.protobuf_types` declares (a ``DECIMAL`` for a
  ``uint64``, a ``TIMESTAMP_NTZ``, ...).

A batch goes to the Python path, which names the failing record and says why in our words,
whenever the core fails on it: a payload that does not parse (prost-reflect is stricter than
protobuf's parser about invalid UTF-8), a field with another wire type than its type's or an
unknown number of a closed (proto2) enum (the Python path fails the record where
spark-protobuf does, at the message's top level, and reads the field as unset below it),
another message's indexes in the registry framing, a ``Timestamp`` or ``Duration`` past
Spark's 64-bit microseconds. ``KAFKA_RESCALABLE_NATIVE=0`` forces the Python path, as for
Avro.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from kafka_rescalable.formats.codec import ColumnDecoder
from kafka_rescalable.formats.native_core import built_once, bulk_column, native_core

__all__ = ["native_decoder"]


def native_decoder(
    descriptor_set: bytes,
    message: str,
    arrow_type: pa.DataType,
    message_indexes: Sequence[int] | None,
) -> ColumnDecoder:
    """Build the bulk decoder of one column, on an executor, once per Python worker.

    Parameters
    ----------
    descriptor_set
        The serialized ``FileDescriptorSet`` the reader schema holds.
    message
        The message's full name, as the descriptor pool found it (no leading dot).
    arrow_type
        The Arrow type of the Spark type the source declared: what the column must be.
    message_indexes
        With registry framing, the index path records must carry (the Python path's
        expectation); ``None`` for plain payloads.
    """
    indexes = None if message_indexes is None else list(message_indexes)
    return _State(descriptor_set, message, arrow_type, indexes).decode


class _State:
    """One column's core decoder, made when first needed (``False``: never, in this worker)."""

    def __init__(
        self,
        descriptor_set: bytes,
        message: str,
        arrow_type: pa.DataType,
        indexes: list[int] | None,
    ) -> None:
        self.descriptor_set = descriptor_set
        self.message = message
        self.arrow_type = arrow_type
        self.indexes = indexes
        self.core: Any = None

    def decode(self, payloads: pa.Array) -> pa.Array | None:
        core = native_core()
        if core is None or not hasattr(core, "ProtobufDecoder"):  # an older native build
            return None
        if self.core is None:
            self.core = built_once(
                core,
                lambda: core.ProtobufDecoder(
                    self.descriptor_set, self.message, self.arrow_type, self.indexes
                ),
                f"the Python path reads {self.message}",
            )
        if self.core is False:
            return None
        return bulk_column(lambda: self.core.decode(payloads), self.arrow_type)
