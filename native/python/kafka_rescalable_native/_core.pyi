"""Type stubs of the Rust extension module (src/lib.rs)."""

import pyarrow as pa

__version__: str

class NativeDecodeError(Exception):
    """The native core could not decode a batch: the caller decodes it on its slow path."""

class AvroDecoder:
    """Avro payloads (an Arrow binary array) to one Arrow array of the reader schema."""

    def __init__(self, reader_schema: str) -> None:
        """Build a decoder for ``reader_schema`` (Avro JSON text)."""

    def add_writer(self, schema_id: int, writer_schema: str) -> None:
        """Register the writer schema of registry id ``schema_id``, resolved to the reader's."""

    def has_writer(self, schema_id: int) -> bool:
        """Whether the writer schema of ``schema_id`` was registered."""

    def decode_plain(self, payloads: pa.Array) -> pa.Array:
        """Decode plain payloads, written with the reader schema itself; nulls stay null."""

    def decode_framed(self, payloads: pa.Array) -> pa.Array:
        """Decode registry-framed payloads (magic byte, 4-byte id, body); nulls stay null."""

def schema_ids(payloads: pa.Array) -> list[int]:
    """Give the distinct schema ids of framed payloads, in the order they first appear."""
