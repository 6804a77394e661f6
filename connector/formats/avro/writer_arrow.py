"""A sink column made the Arrow types ``arrow-avro``'s writer takes for a writer schema.

The native core encodes with ``arrow-avro``, which picks each value's encoding from its Arrow
type, not from the Avro schema: a timestamp in microseconds is written as microseconds even
where the schema says ``timestamp-millis``. So the column PySpark hands the sink is first
rebuilt here, walking the writer schema (as fastavro writes it, with
:func:`~kafka_rescalable.formats.avro.types.without_ignored_logical_types` applied) beside
the column, into exactly the Arrow type of each Avro type. Every step is a cast or a
rearrangement of buffers, and each one was chosen so that the bytes are those fastavro writes
for the same row (``tests/connector/formats/test_native_avro_encoding.py`` holds both paths
to it on random schemas).

Two kinds of refusal send rows to the per-record path:

- :class:`SchemaDeclined`: the schema and the column's type are a pair whose bytes are not
  proven equal, so the column is never encoded in bulk. That is every union but ``null`` and
  one type (fastavro picks a general union's member by the Python value, in ways a struct of
  members does not say), ``null`` itself, recursive records, records of no fields, a record
  field the struct lacks (fastavro writes its default), a decimal of another precision or
  scale than the column's, an Avro ``float`` written from a double column, and any
  Spark type a schema's type does not map to as :mod:`~kafka_rescalable.formats.avro.types`
  says (an aware timestamp as ``local-timestamp-*``, a number as a string...).
- :class:`BatchDeclined`: some value of this batch would not give fastavro's bytes, or would
  make fastavro fail where ``arrow-avro`` would not. A null where the schema has no null, a
  NaN in a float column (Python may change its bits on the way to a ``float``), an
  enum symbol the schema lacks, an integer out of an ``int``'s range, a ``fixed`` of another
  size, a map holding a key twice (fastavro writes a dict, which keeps the key once), and a
  ``bytes`` decimal whose unscaled value is ``-2**(8k-1)`` (fastavro writes it one byte longer
  than the shortest two's complement ``arrow-avro`` writes). The batch is encoded record by
  record, where a failing row is named.
"""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from kafka_rescalable.errors import KafkaSourceError
from kafka_rescalable.formats.avro.types import (
    PRIMITIVES,
    AvroMappingError,
    SchemaWalk,
    non_null,
)

__all__ = ["BatchDeclined", "BulkDeclined", "SchemaDeclined", "fit"]


class BulkDeclined(KafkaSourceError):
    """Rows the bulk encoder does not encode: the per-record encoder writes them.

    Never seen by users: the sink catches it and encodes the rows record by record.
    """


class SchemaDeclined(BulkDeclined):
    """The writer schema and the column's type are never encoded in bulk (see the module)."""


class BatchDeclined(BulkDeclined):
    """A value of this batch is not encoded in bulk (see the module); other batches may be."""


def fit(array: pa.Array, schema: Any) -> pa.Array:
    """Return the column as the Arrow types ``arrow-avro`` writes ``schema`` from.

    Parameters
    ----------
    array
        The sink's column, as PySpark hands it (null rows are the caller's: tombstones).
    schema
        The writer schema's JSON, as fastavro writes it (no ignored logical types).

    Raises
    ------
    SchemaDeclined
        When the schema and the column's type are never encoded in bulk.
    BatchDeclined
        When a value of this batch is not.
    """
    try:
        return _fit(array, schema, SchemaWalk())
    except AvroMappingError as error:  # a reference to a type the schema never defines
        raise SchemaDeclined(str(error)) from error
    except (pa.ArrowException, OverflowError) as error:  # a cast that would change a value
        raise BatchDeclined(str(error)) from error


def _fit(array: pa.Array, schema: Any, walk: SchemaWalk) -> pa.Array:
    if isinstance(schema, list):
        others = non_null(schema)
        if len(others) != 1 or len(schema) != 2:
            raise SchemaDeclined(f"the union {schema} is not null and one type")
        return _fit(array, others[0], walk)
    if isinstance(schema, str) and schema in walk.open_records:
        raise SchemaDeclined(f"the record {schema!r} contains itself")
    node = schema if isinstance(schema, str) and schema in PRIMITIVES else walk.resolve(schema)
    if isinstance(node, str):
        return _primitive(array, node, None)
    kind = node.get("type")
    if isinstance(kind, (list, dict)):
        return _fit(array, kind, walk)
    logical = node.get("logicalType")
    if logical == "decimal":
        return _decimal(array, node)
    if kind in ("record", "error"):
        return _record(array, node, walk)
    if kind == "array":
        return _list(array, node["items"], walk)
    if kind == "map":
        return _map(array, node["values"], walk)
    if kind == "enum":
        return _enum(array, node["symbols"])
    if kind == "fixed":
        _require(
            pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type), array, kind
        )
        return array.cast(pa.binary(int(node["size"])))
    return _primitive(array, kind, logical)


def _require(holds: bool, array: pa.Array, avro: Any) -> None:
    if not holds:
        raise SchemaDeclined(f"a column of {array.type} is not written as Avro {avro} in bulk")


_EXACT: Final = Context(prec=80)
"""Room for every digit of a 38-digit decimal (the default context keeps 28)."""

_INTEGERS: Final = {"int": pa.int32(), "long": pa.int64()}
_TIMESTAMPS: Final = {
    "timestamp-millis": ("ms", True),
    "timestamp-micros": ("us", True),
    "local-timestamp-millis": ("ms", False),
    "local-timestamp-micros": ("us", False),
}
"""Each timestamp's unit, and whether Spark's column for it has a time zone (TimestampType)."""


def _primitive(array: pa.Array, kind: str, logical: str | None) -> pa.Array:
    column = array.type
    if logical == "date":
        _require(pa.types.is_date32(column), array, logical)
        return array
    if logical in _TIMESTAMPS:
        unit, aware = _TIMESTAMPS[logical]
        _require(pa.types.is_timestamp(column) and (column.tz is not None) == aware, array, logical)
        return _timestamp(array, unit)
    if kind in _INTEGERS:
        _require(pa.types.is_signed_integer(column), array, kind)
        return array.cast(_INTEGERS[kind])  # safe: out of an int's range declines the batch
    if kind == "boolean":
        _require(pa.types.is_boolean(column), array, kind)
        return array
    if kind in ("float", "double"):
        wider = kind == "double" and pa.types.is_float64(column)
        _require(wider or pa.types.is_float32(column), array, kind)
        if not wider and pc.any(pc.is_nan(array)).as_py():
            # fastavro packs a float's NaN from a Python float, which may change its bits
            raise BatchDeclined("a NaN in a float column")
        return array.cast(pa.float64() if kind == "double" else pa.float32())
    if kind == "string":
        _require(pa.types.is_string(column) or pa.types.is_large_string(column), array, kind)
        return array.cast(pa.string())
    if kind == "bytes":
        _require(pa.types.is_binary(column) or pa.types.is_large_binary(column), array, kind)
        return array.cast(pa.binary())
    raise SchemaDeclined(f"Avro {kind!r} is not written in bulk")


def _timestamp(array: pa.Array, unit: str) -> pa.Array:
    """Give Spark's microseconds in ``unit``, floored as fastavro floors them."""
    tz = array.type.tz
    micros = array.cast(pa.int64())
    if array.type.unit != "us":
        raise SchemaDeclined(f"a timestamp column in {array.type.unit} is not Spark's")
    if unit == "us":
        return micros.cast(pa.timestamp("us", tz))
    # fastavro adds int(microseconds / 1000) of a timedelta whose microseconds are never
    # negative: the floor, where Arrow's integer division truncates toward zero.
    truncated = pc.divide(micros, 1000)
    below = pc.less(pc.subtract(micros, pc.multiply(truncated, 1000)), 0)
    return pc.subtract(truncated, below.cast(pa.int64())).cast(pa.timestamp("ms", tz))


def _decimal(array: pa.Array, node: Any) -> pa.Array:
    precision, scale = int(node["precision"]), int(node.get("scale", 0))
    column = array.type
    _require(
        pa.types.is_decimal128(column) and (column.precision, column.scale) == (precision, scale),
        array,
        f"decimal({precision}, {scale})",
    )
    if node["type"] == "bytes" and pc.any(pc.is_in(array, value_set=_longer(column))).as_py():
        raise BatchDeclined("fastavro writes -2**(8k-1) one byte longer than arrow-avro")
    return array


def _longer(column: pa.Decimal128Type) -> pa.Array:
    """Give the decimals fastavro writes one byte longer as ``bytes``: unscaled -2**(8k-1)."""
    limit = 10**column.precision
    unscaled = [-(2 ** (8 * k - 1)) for k in range(1, 17) if 2 ** (8 * k - 1) < limit]
    return pa.array([Decimal(u).scaleb(-column.scale, _EXACT) for u in unscaled], column)


def _enum(array: pa.Array, symbols: list[str]) -> pa.Array:
    _require(pa.types.is_string(array.type) or pa.types.is_large_string(array.type), array, "enum")
    dictionary = pa.array(symbols, pa.string())
    indices = pc.index_in(array, value_set=dictionary).cast(pa.int32())
    if indices.null_count != array.null_count:
        raise BatchDeclined("a value is not a symbol of the enum")
    return pa.DictionaryArray.from_arrays(indices, dictionary)


def _record(array: pa.Array, node: Any, walk: SchemaWalk) -> pa.Array:
    column = array.type
    _require(pa.types.is_struct(column), array, "record")
    names = [column.field(i).name for i in range(column.num_fields)]
    fields = node["fields"]
    if not fields or len(set(names)) != len(names):
        raise SchemaDeclined("a record of no fields, or a struct with a name twice")
    # with the struct's nulls: what a null row's fields hold is never written, nor checked
    flat = dict(zip(names, array.flatten(), strict=True))
    walk.open_records.append(node["name"])
    children = []
    for field in fields:
        if field["name"] not in flat:
            msg = f"the struct has no field {field['name']!r}: fastavro writes its default"
            raise SchemaDeclined(msg)
        child = _fit(flat[field["name"]], field["type"], walk)
        if not _nullable(field["type"]) and child.null_count:
            unmasked = pc.and_(child.is_null(), array.is_valid())
            if pc.any(unmasked).as_py():
                raise BatchDeclined(f"a null in the non-null field {field['name']!r}")
        children.append(child)
    walk.open_records.pop()
    return pa.StructArray.from_arrays(
        children, names=[field["name"] for field in fields], mask=_mask(array)
    )


def _list(array: pa.Array, items: Any, walk: SchemaWalk) -> pa.Array:
    _require(pa.types.is_list(array.type) or pa.types.is_large_list(array.type), array, "array")
    offsets, entries = _entries(array)
    values = _fit(array.values.slice(*entries), items, walk)
    if not _nullable(items) and values.null_count:
        raise BatchDeclined("a null item in an array of non-null items")
    return pa.ListArray.from_arrays(offsets, values, mask=_mask(array))


def _map(array: pa.Array, values: Any, walk: SchemaWalk) -> pa.Array:
    column = array.type
    keyed = pa.types.is_map(column) and (
        pa.types.is_string(column.key_type) or pa.types.is_large_string(column.key_type)
    )
    _require(keyed, array, "map")
    offsets, entries = _entries(array)
    items = _fit(array.items.slice(*entries), values, walk)
    if not _nullable(values) and items.null_count:
        raise BatchDeclined("a null value in a map of non-null values")
    if _repeats_a_key(array):
        raise BatchDeclined("a map holds a key twice")
    keys = array.keys.slice(*entries).cast(pa.string())
    return pa.MapArray.from_arrays(offsets, keys, items, mask=_mask(array))


def _entries(array: pa.Array) -> tuple[pa.Array, tuple[int, int]]:
    """Give a list's (map's) offsets from zero, and where its entries are in its child.

    A slice of a list keeps its child whole; only the slice's entries are fitted and checked.
    """
    offsets = array.offsets.cast(pa.int32())
    first = offsets[0].as_py()
    return pc.subtract(offsets, first), (first, offsets[-1].as_py() - first)


def _repeats_a_key(array: pa.MapArray) -> bool:
    """Whether a map row holds a key twice: fastavro would write the key once, last value."""
    # as lists of entries: pyarrow's list kernels abort the process on a map array
    entry = pa.struct([array.type.key_field, array.type.item_field])
    lists = array.cast(pa.list_(entry))
    keys = pc.list_flatten(lists).field(0)
    if len(keys) < 2:
        return False
    pairs = pa.table({"row": pc.list_parent_indices(lists), "key": keys})
    return pairs.group_by(["row", "key"]).aggregate([]).num_rows != len(keys)


def _nullable(schema: Any) -> bool:
    return isinstance(schema, list) and "null" in schema


def _mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None
