"""Type stubs of the Rust extension module (src/lib.rs)."""

import pyarrow as pa

__version__: str

class NativeDecodeError(Exception):
    """The native core could not decode a batch: the caller decodes it on its slow path."""

class NativeEncodeError(Exception):
    """The native core could not encode a batch: the caller encodes it record by record."""

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

class ProtobufDecoder:
    """Protobuf payloads (a binary array) to one struct array of the Arrow type Spark declared."""

    def __init__(
        self,
        descriptor_set: bytes,
        message: str,
        arrow_type: pa.DataType,
        message_indexes: list[int] | None = None,
    ) -> None:
        """Plan message ``message`` of a serialized ``FileDescriptorSet`` as ``arrow_type``.

        With ``message_indexes``, payloads carry the registry framing and those indexes.
        Raises :class:`NativeDecodeError` for what the core does not decode as Python does.
        """

    def decode(self, payloads: pa.Array) -> pa.StructArray:
        """Decode every payload; null payloads give null rows."""

class AvroEncoder:
    """A column of values (an Arrow array) to one Avro payload per row (a binary array)."""

    def __init__(self, writer_schema: str, schema_id: int | None = None) -> None:
        """Build an encoder for ``writer_schema`` (Avro JSON text).

        With ``schema_id``, each payload is framed for a schema registry (zero magic byte,
        4-byte big-endian id, body). The schema is parsed by the first :meth:`encode`, which
        raises :class:`NativeEncodeError` if it does not parse or does not fit the values.
        """

    def encode(self, values: pa.Array) -> pa.BinaryArray:
        """Encode every row of ``values`` (of the writer's Arrow types); null rows stay null.

        Raises
        ------
        NativeEncodeError
            When the values' type does not fit the writer schema, or a value does not encode.
        """

def schema_ids(payloads: pa.Array) -> list[int]:
    """Give the distinct schema ids of framed payloads, in the order they first appear."""

def json_string_maps(payloads: pa.Array, fields: list[str]) -> tuple[list[pa.Array], list[int]]:
    """Read the ``MAP<STRING, STRING>`` fields ``fields`` of JSON payloads in bulk.

    Gives one ``map<string, string>`` array per field and the rows declined: those the caller
    reads on its own path (a value not a string, a repeated key, anything in doubt).
    """
