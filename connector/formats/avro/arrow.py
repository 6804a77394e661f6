"""The native core's Arrow array made the Arrow type Spark declared, with vectorized steps.

The core (``arrow-avro``) reads Avro with Arrow's own mapping: an enum is a dictionary, a
``fixed`` a fixed-size binary, a timestamp keeps its unit (milliseconds or microseconds) and
says ``+00:00``, fields are nullable only where Avro says so, and a union of several types is
a dense union. Spark's mapping (:mod:`kafka_rescalable.formats.avro.types`) differs only in
representation, never in values, so each step here is a cast or a rearrangement of buffers:

- a dense union becomes the ``member0, member1, ...`` struct (one field per non-null member,
  set for the rows of that member), or one column for the unions Spark widens (``[int,
  long]`` to a long, ``[float, double]`` to a double);
- structs, lists and maps are rebuilt around their converted children, with the declared
  field names and nullability, keeping their validity;
- every other difference is an Arrow cast.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["conform"]


def conform(array: pa.Array, target: pa.DataType) -> pa.Array:
    """Return ``array`` (as the native core decoded it) as an array of ``target``.

    Raises
    ------
    pyarrow.ArrowException
        When a value cannot be cast; callers decode the batch on the slow path then.
    """
    if array.type == target:
        return array
    if pa.types.is_union(array.type):
        return _from_union(array, target)
    if pa.types.is_struct(target):
        return _struct(array, target)
    if pa.types.is_map(target):
        return _map(array, target)
    if pa.types.is_list(target):
        return _list(array, target)
    return array.cast(target)


def _mask(array: pa.Array) -> pa.Array | None:
    """Give the rows that are null, ``None`` for none; a union's nulls are its members'."""
    if pa.types.is_union(array.type):
        nulls = array.is_null()
        return nulls if nulls.true_count else None
    return array.is_null() if array.null_count else None


def _struct(array: pa.StructArray, target: pa.StructType) -> pa.Array:
    fields = [target.field(i) for i in range(target.num_fields)]
    children = [conform(array.field(field.name), field.type) for field in fields]
    if not fields:  # a struct without fields keeps its length only through its validity
        return pa.StructArray.from_arrays([], fields=[], mask=array.is_null())
    return pa.StructArray.from_arrays(children, fields=fields, mask=_mask(array))


def _list(array: pa.ListArray, target: pa.ListType) -> pa.Array:
    values = conform(array.values, target.value_type)
    return pa.ListArray.from_arrays(array.offsets, values, type=target, mask=_mask(array))


def _map(array: pa.MapArray, target: pa.MapType) -> pa.Array:
    keys = conform(array.keys, target.key_type)
    items = conform(array.items, target.item_type)
    return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=_mask(array))


def _members(array: pa.UnionArray) -> list[pa.Array]:
    """Each non-null member as a column of the union's length, null where another is set."""
    codes = array.type_codes.to_numpy(zero_copy_only=False)
    offsets = array.offsets.to_numpy(zero_copy_only=False)
    members = []
    for child, code in enumerate(array.type.type_codes):
        values = array.field(child)
        if pa.types.is_null(values.type):
            continue
        picked = codes == code
        indices = pa.array(offsets, pa.int32(), mask=~picked)
        members.append(values.take(indices))
    return members


def _from_union(array: pa.UnionArray, target: pa.DataType) -> pa.Array:
    members = _members(array)
    if pa.types.is_struct(target) and target.num_fields == len(members):
        fields = [target.field(i) for i in range(target.num_fields)]
        children = [
            conform(member, field.type) for member, field in zip(members, fields, strict=True)
        ]
        return pa.StructArray.from_arrays(children, fields=fields, mask=_mask(array))
    # A union Spark reads as one column: each row is its member's value, widened.
    return pc.coalesce(*(conform(member, target) for member in members))
