"""Protobuf messages to the Python values Arrow takes for their Spark type, and back.

Both directions are planned once per message type and Spark type, by walking the descriptors:
a reader is a table from field descriptor to the field's converter (``None`` where protobuf's
own value already fits Arrow), and reads a message with one ``ListFields()`` call, which lists
exactly the fields that are set. A field that is not set keeps the value planned for it: null
where protobuf tracks presence (messages, ``oneof`` members, ``optional`` fields), else the
field's default (0, ``""``, an enum's first value, an empty list or map), the value a protobuf
reader of the message sees. (spark-protobuf gives that only with ``emit.default.values``; we
keep proto3's zeros, since a count of 0 is a count, not a missing value.)

Conversions where protobuf's value does not fit as it is: unsigned integers wrap into Spark's
signed types as in spark-protobuf, an enum's number becomes its name, ``Timestamp`` a UTC
datetime and ``Duration`` a timedelta. Both are counted in microseconds as spark-protobuf counts
them, ``seconds * 1,000,000`` plus the nanos cut toward zero, so that even a message protobuf
calls invalid (negative nanos, years past 9999) reads as it does in ``from_protobuf``; a
``Timestamp`` outside Python's datetime range stays an int of microseconds, which Arrow takes
for a timestamp. Past what Spark's 64-bit microseconds hold, the record fails, naming the
field (:class:`TimeOutOfRange`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    DataType,
    DayTimeIntervalType,
    DecimalType,
    IntegerType,
    LongType,
    MapType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kafka_rescalable.errors import PayloadDecodeError
from kafka_rescalable.formats.protobuf_misfits import misfit_field
from kafka_rescalable.formats.protobuf_types import is_duration, is_map, is_timestamp

__all__ = ["TimeOutOfRange", "message_reader", "message_writer", "record_reader"]

Message = Any
"""A ``google.protobuf.message.Message`` (protobuf is imported lazily, as an extra)."""

Convert = Callable[[Any], Any]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
_SPARK_MICROS = range(-(2**63), 2**63)
"""What Spark's TIMESTAMP and INTERVAL DAY TO SECOND hold: 64-bit microseconds."""
_DATETIME_MICROS = range(
    (datetime.min.replace(tzinfo=timezone.utc) - _EPOCH) // _MICROSECOND,
    (datetime.max.replace(tzinfo=timezone.utc) - _EPOCH) // _MICROSECOND + 1,
)
# FieldDescriptor.TYPE_* numbers, fixed by descriptor.proto
_TYPE_UINT32, _TYPE_FIXED32, _TYPE_UINT64, _TYPE_FIXED64 = 13, 7, 4, 6
_UNSIGNED_32 = (_TYPE_UINT32, _TYPE_FIXED32)
_UNSIGNED_64 = (_TYPE_UINT64, _TYPE_FIXED64)


def record_reader(descriptor: Any, struct: StructType) -> Callable[[Message], dict[str, Any]]:
    """Plan how a record's own message becomes a dict, refusing what spark-protobuf refuses.

    :func:`message_reader`, after the look at the message's top level that
    :func:`~kafka_rescalable.formats.protobuf_misfits.misfit_field` takes (spark-protobuf
    checks no nested message). Failures are :class:`PayloadDecodeError` with no schema id.
    """
    read = message_reader(descriptor, struct)
    name = descriptor.full_name

    def read_record(message: Message) -> dict[str, Any]:
        misfit = misfit_field(message)
        if misfit is not None:
            raise PayloadDecodeError(f"not a valid {name} message: {misfit}")
        return read(message)

    return read_record


def message_reader(descriptor: Any, struct: StructType) -> Callable[[Message], dict[str, Any]]:
    """Plan how messages of ``descriptor`` become dicts of ``struct``'s fields.

    Raises
    ------
    TypeError
        When ``struct`` names a field the message lacks, or a type it does not map to.
    """
    plan: dict[Any, tuple[str, Convert | None]] = {}
    template: dict[str, Any] = {}
    for spark_field in struct.fields:
        field = _field(descriptor, spark_field.name)
        convert = _field_reader(field, spark_field.dataType)
        plan[field] = (spark_field.name, convert)
        template[spark_field.name] = _unset(field, convert)
    planned = plan.get

    def read(message: Message) -> dict[str, Any]:
        row = template.copy()
        for field, value in message.ListFields():
            entry = planned(field)
            if entry is not None:  # a field left out of the Spark type, or an extension
                name, convert = entry
                row[name] = value if convert is None else convert(value)
        return row

    return read


def _field(descriptor: Any, name: str) -> Any:
    field = descriptor.fields_by_name.get(name)
    if field is None:
        msg = f"message {descriptor.full_name} has no field {name!r}"
        raise TypeError(msg)
    return field


def _unset(field: Any, convert: Convert | None) -> Any:
    """Give the value of a field that is not set (shared by every row: never mutated)."""
    if is_map(field):
        return {}
    if field.is_repeated:
        return []
    if field.has_presence and not field.has_default_value:
        return None
    default = field.default_value
    return default if convert is None else convert(default)


def _field_reader(field: Any, data_type: DataType) -> Convert | None:
    if is_map(field):
        if not isinstance(data_type, MapType):
            raise _mismatch(field, data_type)
        key_field, value_field = field.message_type.fields
        key = _value_reader(key_field, data_type.keyType)
        value = _value_reader(value_field, data_type.valueType, named=field)
        if key is None and value is None:
            return dict
        key = key or _same
        value = value or _same
        return lambda entries: {key(k): value(v) for k, v in entries.items()}
    if field.is_repeated:
        if not isinstance(data_type, ArrayType):
            raise _mismatch(field, data_type)
        element = _value_reader(field, data_type.elementType)
        if element is None:
            return list
        return lambda values: [element(v) for v in values]
    return _value_reader(field, data_type)


def _same(value: Any) -> Any:
    return value


def _value_reader(field: Any, data_type: DataType, named: Any = None) -> Convert | None:
    """Plan one value's conversion.

    ``named`` is the field a failure names, by default ``field``: a map's values are the
    fields of its entries, which the user never wrote.
    """
    message = field.message_type
    if message is not None:
        owner = named or field
        if isinstance(data_type, TimestampType) and is_timestamp(message):
            return lambda value: _timestamp(value, owner)
        if isinstance(data_type, DayTimeIntervalType) and is_duration(message):
            return lambda value: _duration(value, owner)
        if isinstance(data_type, StructType):
            return message_reader(message, data_type)
        raise _mismatch(field, data_type)
    if field.enum_type is not None:
        enum = field.enum_type
        names = {value.number: value.name for value in enum.values}
        unknown = f"UNKNOWN_ENUM_VALUE_{enum.name}_"  # the name spark-protobuf (Java) gives
        return lambda number: names.get(number) or f"{unknown}{number}"
    if field.type in _UNSIGNED_32 and isinstance(data_type, IntegerType):
        return _signed_32
    if field.type in _UNSIGNED_64 and isinstance(data_type, LongType):
        return _signed_64
    if field.type in _UNSIGNED_64 and isinstance(data_type, DecimalType):
        return Decimal
    return None


def _mismatch(field: Any, data_type: DataType) -> TypeError:
    msg = f"field {field.full_name} does not map to the Spark type {data_type.simpleString()}"
    return TypeError(msg)


def _signed_32(value: int) -> int:
    return value - 0x1_0000_0000 if value > 0x7FFF_FFFF else value


def _signed_64(value: int) -> int:
    return value - 0x1_0000_0000_0000_0000 if value > 0x7FFF_FFFF_FFFF_FFFF else value


class TimeOutOfRange(PayloadDecodeError):
    """A ``Timestamp`` or ``Duration`` past Spark's 64-bit microseconds (some 292,000 years).

    Raised without the record's schema id, which the codec adds (``protobuf_codec``).
    """


def _micros(message: Message, field: Any) -> int:
    """Return ``message``'s seconds and nanos in microseconds, the nanos cut toward zero.

    As spark-protobuf counts (Java's integer division cuts toward zero), not as a floor: a
    ``Timestamp`` of 0 s and -1 ns, which protobuf calls invalid but parses, is the epoch.
    """
    nanos = message.nanos
    micros = message.seconds * 1_000_000 + (nanos // 1000 if nanos >= 0 else -(-nanos // 1000))
    if micros not in _SPARK_MICROS:
        kind = message.DESCRIPTOR.name
        msg = (
            f"field {field.full_name}: a {kind} of {message.seconds} s is beyond the 64-bit "
            "microseconds Spark holds (some 292,000 years either side of 1970)"
        )
        raise TimeOutOfRange(msg)
    return micros


def _timestamp(message: Message, field: Any) -> datetime | int:
    micros = _micros(message, field)
    if micros in _DATETIME_MICROS:
        return _EPOCH + timedelta(microseconds=micros)
    return micros  # past year 9999 or before year 1: Arrow takes microseconds as they are


def _duration(message: Message, field: Any) -> timedelta | int:
    micros = _micros(message, field)
    if micros < _SPARK_MICROS.start + 1_000_000:
        return micros  # pyarrow overflows converting a timedelta this close to the least value
    return timedelta(microseconds=micros)


def message_writer(descriptor: Any, struct: StructType) -> Callable[[Message, Any], None]:
    """Plan how dicts of ``struct``'s fields (as pyarrow's ``to_pylist`` gives) fill messages.

    Fields of ``struct`` may be fewer than the message's, in any order; a null or missing
    value leaves its field unset. Maps may come as dicts or as ``(key, value)`` pairs.

    Raises
    ------
    TypeError
        When ``struct`` names a field the message lacks, or a type it does not map to.
    """
    steps = [
        (
            spark_field.name,
            _field_writer(_field(descriptor, spark_field.name), spark_field.dataType),
        )
        for spark_field in struct.fields
    ]

    def write(message: Message, row: Any) -> None:
        get = row.get
        for name, set_field in steps:
            value = get(name)
            if value is not None:
                set_field(message, value)

    return write


def _field_writer(field: Any, data_type: DataType) -> Callable[[Message, Any], None]:
    name = field.name
    if is_map(field):
        if not isinstance(data_type, MapType):
            raise _mismatch(field, data_type)
        key_field, value_field = field.message_type.fields
        key = _scalar_writer(key_field, data_type.keyType)
        if value_field.message_type is None:
            value = _scalar_writer(value_field, data_type.valueType)

            def set_map(message: Message, entries: Any) -> None:
                target = getattr(message, name)
                for k, v in _pairs(entries):
                    target[key(k)] = value(v)

            return set_map
        fill = _message_filler(value_field, data_type.valueType)

        def set_message_map(message: Message, entries: Any) -> None:
            target = getattr(message, name)
            for k, v in _pairs(entries):
                fill(target[key(k)], v)

        return set_message_map
    if field.is_repeated:
        if not isinstance(data_type, ArrayType):
            raise _mismatch(field, data_type)
        if field.message_type is None:
            element = _scalar_writer(field, data_type.elementType)
            return lambda message, values: getattr(message, name).extend(map(element, values))
        fill = _message_filler(field, data_type.elementType)

        def set_messages(message: Message, values: Any) -> None:
            add = getattr(message, name).add
            for value in values:
                fill(add(), value)

        return set_messages
    if field.message_type is not None:
        fill = _message_filler(field, data_type)
        return lambda message, value: fill(getattr(message, name), value)
    scalar = _scalar_writer(field, data_type)
    return lambda message, value: setattr(message, name, scalar(value))


def _pairs(entries: Any) -> Any:
    return entries.items() if isinstance(entries, dict) else entries


def _message_filler(field: Any, data_type: DataType) -> Callable[[Message, Any], None]:
    message = field.message_type
    if isinstance(data_type, (TimestampType, TimestampNTZType)) and is_timestamp(message):
        return _fill_timestamp
    if isinstance(data_type, DayTimeIntervalType) and is_duration(message):
        return _fill_duration
    if isinstance(data_type, StructType):
        write = message_writer(message, data_type)

        def fill(target: Message, value: Any) -> None:
            target.SetInParent()  # present even when every value in it is null
            write(target, value)

        return fill
    raise _mismatch(field, data_type)


def _scalar_writer(field: Any, data_type: DataType) -> Convert:
    if field.enum_type is not None:
        enum = field.enum_type
        numbers = {value.name: value.number for value in enum.values}

        def number(name: Any) -> int:
            if not isinstance(name, str):
                return int(name)
            found = numbers.get(name)
            if found is None:
                msg = f"{name!r} is not a value of enum {enum.full_name} (field {field.name})"
                raise ValueError(msg)
            return found

        return number
    if field.type in _UNSIGNED_32 and isinstance(data_type, IntegerType):
        return lambda value: value & 0xFFFF_FFFF
    if field.type in _UNSIGNED_64 and isinstance(data_type, (LongType, DecimalType)):
        return lambda value: int(value) & 0xFFFF_FFFF_FFFF_FFFF
    return _same


def _fill_timestamp(target: Message, value: datetime) -> None:
    if value.tzinfo is None:  # TIMESTAMP_NTZ, or a naive datetime: taken as UTC
        value = value.replace(tzinfo=timezone.utc)
    seconds, micros = divmod((value - _EPOCH) // _MICROSECOND, 1_000_000)
    target.seconds = seconds
    target.nanos = micros * 1000


def _fill_duration(target: Message, value: timedelta) -> None:
    micros = value // _MICROSECOND
    seconds, rest = divmod(abs(micros), 1_000_000)
    sign = -1 if micros < 0 else 1
    target.seconds = sign * seconds
    target.nanos = sign * rest * 1000
