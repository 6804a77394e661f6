"""Protobuf messages as Spark types, the way spark-protobuf maps them with its default options.

A message becomes a struct of its fields, by their ``.proto`` names and in declaration order:

- ``int32``, ``sint32``, ``sfixed32``, ``uint32``, ``fixed32`` are ``INT``; the 64-bit integers
  ``BIGINT``. Unsigned values above the signed range wrap to negative numbers, as in
  spark-protobuf, whose ``upcast.unsigned.ints`` is off by default.
- ``float``, ``double``, ``bool``, ``string`` as they are; ``bytes`` is ``BINARY``; an enum is
  ``STRING``, its value's name.
- A nested message is a ``STRUCT``, ``repeated`` an ``ARRAY``, a map field a ``MAP``; a
  ``oneof``'s members are fields of their own, null unless set.
- ``google.protobuf.Timestamp`` is ``TIMESTAMP`` and ``google.protobuf.Duration`` is
  ``INTERVAL DAY TO SECOND`` (microseconds; finer nanoseconds are cut toward zero). Other
  well-known types (the wrappers such as ``Int32Value``, ``Any``) are messages like any other:
  ``STRUCT<value: INT>``, ``STRUCT<type_url: STRING, value: BINARY>``.
- A field whose message has no fields is left out; a recursive message is refused, since a
  Spark type is finite (spark-protobuf refuses it too unless told how deep to unroll).

Arrays and maps are declared with nullable elements, unlike spark-protobuf: the source declares
its schema as DDL, which cannot say otherwise, and no element is ever null.

This module is pure: it reads descriptor sets and maps their messages.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DayTimeIntervalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.formats.ddl import to_ddl

__all__ = [
    "is_duration",
    "is_map",
    "is_timestamp",
    "load_message",
    "message_type",
]

Descriptor = Any
"""A ``google.protobuf.descriptor.Descriptor`` (protobuf is imported lazily, as an extra)."""

_INCLUDE_IMPORTS = (
    "make it with protoc --include_imports --descriptor_set_out=FILE your.proto, so that the "
    "files your .proto imports are in the set too"
)


def load_message(data: bytes, name: str, option: str, message_option: str) -> Descriptor:
    """Read a serialized ``FileDescriptorSet`` into a pool of its own and find message ``name``.

    ``name`` is the message's full name, with its package. Files are added dependencies first,
    whatever their order in the set.

    Raises
    ------
    InvalidOptionError
        Naming ``option`` (the descriptor set's) when ``data`` is not a descriptor set or a
        file's import is missing; naming ``message_option`` when the set has no message
        ``name`` (listing those it has).
    """
    from google.protobuf import descriptor_pb2
    from google.protobuf import descriptor_pool as pools
    from google.protobuf.message import DecodeError

    files = descriptor_pb2.FileDescriptorSet()
    try:
        files.ParseFromString(data)
    except DecodeError as error:
        msg = f"the file is not a Protobuf descriptor set ({error}); {_INCLUDE_IMPORTS}"
        raise InvalidOptionError(option, msg) from error
    if not files.file:
        msg = f"the file is not a Protobuf descriptor set, or an empty one; {_INCLUDE_IMPORTS}"
        raise InvalidOptionError(option, msg)
    by_name = {file.name: file for file in files.file}
    pool = pools.DescriptorPool()
    added: set[str] = set()

    def add(file_name: str, importer: str) -> None:
        if file_name in added:
            return
        if file_name not in by_name:
            msg = (
                f"{importer} imports {file_name}, which the descriptor set lacks; "
                f"{_INCLUDE_IMPORTS}"
            )
            raise InvalidOptionError(option, msg)
        added.add(file_name)  # before its imports: a cycle stops here, and the pool refuses it
        for dependency in by_name[file_name].dependency:
            add(dependency, file_name)
        try:
            pool.Add(by_name[file_name])
        except (TypeError, ValueError) as error:
            raise InvalidOptionError(option, f"{file_name} does not load: {error}") from error

    for file in files.file:
        add(file.name, file.name)
    try:
        return pool.FindMessageTypeByName(name.strip().lstrip("."))
    except KeyError:
        pass
    known = sorted(_message_names(files.file))
    shown = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
    msg = (
        f"no message {name!r} in the descriptor set; give a message's full name, with its "
        f"package (the set has: {shown or 'no messages'})"
    )
    raise InvalidOptionError(message_option, msg)


def _message_names(files: Any) -> list[str]:
    names: list[str] = []

    def walk(prefix: str, messages: Any) -> None:
        for message in messages:
            full = f"{prefix}{message.name}"
            if not message.options.map_entry:
                names.append(full)
            walk(f"{full}.", message.nested_type)

    for file in files:
        walk(f"{file.package}." if file.package else "", file.message_type)
    return names


def message_type(descriptor: Descriptor, option: str) -> tuple[StructType, str]:
    """Map a message to its Spark struct, returned with the struct's DDL.

    Raises
    ------
    InvalidOptionError
        Naming ``option`` when the message is recursive or has no field Spark can hold.
    """
    struct = _struct(descriptor, (descriptor.full_name,), option)
    if struct is None:
        msg = f"message {descriptor.full_name} has no fields, so no Spark column can hold it"
        raise InvalidOptionError(option, msg)
    return struct, to_ddl(struct)


def is_map(field: Any) -> bool:
    """Whether ``field`` is a map field (a repeated field of a generated map-entry message)."""
    message = field.message_type
    return message is not None and field.is_repeated and message.GetOptions().map_entry


def is_timestamp(message: Descriptor) -> bool:
    """Whether ``message`` is shaped as ``google.protobuf.Timestamp``, as spark-protobuf tells."""
    return message.name == "Timestamp" and _seconds_and_nanos(message)


def is_duration(message: Descriptor) -> bool:
    """Whether ``message`` is shaped as ``google.protobuf.Duration``, as spark-protobuf tells."""
    return message.name == "Duration" and _seconds_and_nanos(message)


def _seconds_and_nanos(message: Descriptor) -> bool:
    return [field.name for field in message.fields] == ["seconds", "nanos"]


def _struct(descriptor: Descriptor, path: tuple[str, ...], option: str) -> StructType | None:
    fields = []
    for field in descriptor.fields:
        data_type = _field_type(field, path, option)
        if data_type is not None:
            fields.append(StructField(field.name, data_type, nullable=not field.is_required))
    return StructType(fields) if fields else None


def _field_type(field: Any, path: tuple[str, ...], option: str) -> DataType | None:
    if is_map(field):
        key, value = field.message_type.fields
        value_type = _value_type(value, path, option)
        return None if value_type is None else MapType(_value_type(key, path, option), value_type)
    value_type = _value_type(field, path, option)
    if value_type is None or not field.is_repeated:
        return value_type
    return ArrayType(value_type)


_SCALARS: dict[int, DataType] = {}


def _scalar_types() -> dict[int, DataType]:
    if not _SCALARS:
        from google.protobuf.descriptor import FieldDescriptor as F

        for types, spark in (
            (
                (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32, F.TYPE_UINT32, F.TYPE_FIXED32),
                IntegerType(),
            ),
            (
                (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64, F.TYPE_UINT64, F.TYPE_FIXED64),
                LongType(),
            ),
            ((F.TYPE_FLOAT,), FloatType()),
            ((F.TYPE_DOUBLE,), DoubleType()),
            ((F.TYPE_BOOL,), BooleanType()),
            ((F.TYPE_STRING, F.TYPE_ENUM), StringType()),
            ((F.TYPE_BYTES,), BinaryType()),
        ):
            _SCALARS.update(dict.fromkeys(types, spark))
    return _SCALARS


def _value_type(field: Any, path: tuple[str, ...], option: str) -> DataType | None:
    message = field.message_type
    if message is None:
        return _scalar_types()[field.type]
    if is_timestamp(message):
        return TimestampType()
    if is_duration(message):
        return DayTimeIntervalType(DayTimeIntervalType.DAY, DayTimeIntervalType.SECOND)
    if message.full_name in path:
        cycle = " -> ".join((*path[path.index(message.full_name) :], message.full_name))
        msg = (
            f"field {field.full_name} makes the message recursive ({cycle}), and a Spark type "
            "cannot nest without end; decode a message without recursion, or read the bytes "
            "with valueFormat 'binary'"
        )
        raise InvalidOptionError(option, msg)
    return _struct(message, (*path, message.full_name), option)
