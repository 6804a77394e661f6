"""kafka-rescalable's native core: Avro payloads in an Arrow array decoded and encoded in bulk,
Protobuf payloads decoded in bulk, and the string maps of JSON records read in bulk.

A private helper of the ``kafka-rescalable`` package, which imports it when it is installed
and falls back to its pure-Python decoders and encoders otherwise. It does no I/O: the caller
hands it the reader schema and every writer schema it needs (for the sink, the writer schema
and the registry's schema id), and decides what a failure means.
"""

from kafka_rescalable_native._core import (
    AvroDecoder,
    AvroEncoder,
    NativeDecodeError,
    NativeEncodeError,
    ProtobufDecoder,
    __version__,
    json_string_maps,
    schema_ids,
)

__all__ = [
    "AvroDecoder",
    "AvroEncoder",
    "NativeDecodeError",
    "NativeEncodeError",
    "ProtobufDecoder",
    "__version__",
    "json_string_maps",
    "schema_ids",
]
