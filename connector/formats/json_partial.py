"""A struct's JSON payloads read partly in bulk: the fields pyarrow can take, and the others.

pyarrow's JSON reader (:mod:`~kafka_rescalable.formats.json_bulk`) cannot read a map (nor
binary, nor an interval), and a struct holding one was read record by record whole. Here its
top-level fields are parted: those pyarrow can read are read by the bulk decoder, as a struct
of their own, whose reader skips the others (``unexpected_field_behavior="ignore"``); the
others are read record by record, by ``json.loads`` and the same field converters as the
record-by-record reader, then both are put together in the struct's field order. The cost of a
record is then a parse in C and the refused fields' conversion, not a whole walk and the whole
struct's ``pa.array``. Where every refused field is a ``MAP<STRING, STRING>`` and the native
core is installed, the core reads them in bulk instead (``json_string_maps``), and the records
it declines are read whole by the record-by-record reader.

The result equals the record-by-record reader's, record for record, because every part is
either that reader's own work or proven equal to it, and every doubt goes back to it:

- the bulk part's reference is the record-by-record reader of the **whole** struct, its result
  cut to the bulk fields: a record the bulk decoder sends back is read whole, so a record that
  does not decode gives the batch up, as it does without a map;
- the refused fields are parsed with the whole reader's own parser (exact decimals when the
  struct has any) and converted by its converters (a struct converter of just those fields);
- a record whose refused fields do not convert, or whose text is not UTF-8 or not JSON, or
  escapes a UTF-16 surrogate (which the whole reader checks over all its strings), is read
  again whole by the record-by-record reader, all its fields; if that fails too, the batch is
  given up (``None``) and decoded record by record, where the reasons and ``mode`` apply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyspark.sql.types as T

from kafka_rescalable._logging import logger
from kafka_rescalable.errors import KafkaSourceError
from kafka_rescalable.formats.json_bulk import bulk_decoder, readable_in_bulk
from kafka_rescalable.formats.native_core import native_core

__all__ = ["partial_decoder"]

ColumnDecoder = Callable[[pa.Array], pa.Array | None]


class SendBack(KafkaSourceError):  # noqa: N818 - a signal between the readers, never raised out
    """The refused fields of a record are in doubt: read the record again, whole."""


def partial_decoder(
    spark_type: T.DataType,
    read: Callable[[bytes], Any],
    read_fields: Callable[[T.StructType, list[str]], Callable[[bytes], dict[str, Any]]],
) -> ColumnDecoder | None:
    """Build the decoder of a struct some of whose top-level fields pyarrow reads, or ``None``.

    ``read`` is the record-by-record reader of ``spark_type``; ``read_fields(spark_type,
    names)`` builds the reader of the named top-level fields alone from one payload, by the
    same parser and converters, which raises :class:`SendBack` where it cannot tell what
    ``read`` gives. The
    decoder's result equals ``read`` applied to each payload (null payloads null), or it
    returns ``None``. ``None`` here when every field, or none, can be read in bulk.
    """
    from pyspark.sql.pandas.types import to_arrow_type  # as decoding.py builds the column

    if not isinstance(spark_type, T.StructType):
        return None
    names = spark_type.names
    if len(set(names)) != len(names):
        return None
    bulk = [field for field in spark_type if readable_in_bulk(field.dataType)]
    rest = [field.name for field in spark_type if not readable_in_bulk(field.dataType)]
    if not bulk or not rest:
        return None
    kept = [field.name for field in bulk]

    def read_kept(payload: bytes) -> dict[str, Any] | None:
        value = read(payload)
        return None if value is None else {name: value[name] for name in kept}

    decode_kept = bulk_decoder(T.StructType(bulk), read_kept)
    if decode_kept is None:
        return None
    target = to_arrow_type(spark_type, timezone="UTC")
    native = _string_maps(spark_type, rest, target)
    return _PartialDecoder(
        names, rest, target, decode_kept, read_fields(spark_type, rest), read, native
    )


def _string_maps(
    spark_type: T.StructType, rest: list[str], target: pa.StructType
) -> Callable[[pa.Array], tuple[list[pa.Array], list[int]] | None] | None:
    """Give the native core's reader of the refused fields, when each is a map of strings.

    It returns the fields' arrays and the rows it declined, which are read whole on the
    Python path; ``None`` where the core is not installed (or switched off) or fails.
    """
    string = T.StringType()
    if not all(
        isinstance(t := spark_type[name].dataType, T.MapType)
        and t.keyType == string
        and t.valueType == string
        and t.valueContainsNull
        for name in rest
    ):
        return None
    types = [target.field(name).type for name in rest]

    def read(payloads: pa.Array) -> tuple[list[pa.Array], list[int]] | None:
        core = native_core()
        if core is None or not hasattr(core, "json_string_maps"):  # an older native build
            return None
        try:
            maps, declined = core.json_string_maps(payloads, rest)
        except Exception as error:  # noqa: BLE001 - the Python path reads the batch
            logger.debug("the string maps are read record by record: %s", error)
            return None
        if [m.type for m in maps] != types:  # never seen; the Python path builds the right type
            logger.debug("the native core gave %s, not %s", [m.type for m in maps], types)
            return None
        return maps, declined

    return read


class _PartialDecoder:
    """One column's decoder, kept per Python worker with the decode plan."""

    def __init__(
        self,
        names: list[str],
        rest: list[str],
        target: pa.StructType,
        decode_kept: ColumnDecoder,
        read_rest: Callable[[bytes], dict[str, Any]],
        read: Callable[[bytes], Any],
        native: Callable[[pa.Array], tuple[list[pa.Array], list[int]] | None] | None,
    ) -> None:
        self._names = names
        self._rest = rest
        self._rest_types = [target.field(name).type for name in rest]
        self._target = target
        self._decode_kept = decode_kept
        self._read_rest = read_rest
        self._read = read
        self._native = native

    def __call__(self, payloads: pa.Array) -> pa.Array | None:
        kept = self._decode_kept(payloads)
        if kept is None:
            return None  # given up (or skipped): the batch is read record by record
        natively = None if self._native is None else self._native(payloads)
        if natively is not None:
            rest, again = natively
            return self._finish(kept, rest, payloads, again)
        read_rest = self._read_rest
        values: list[dict[str, Any] | None] = []
        append = values.append
        again: list[int] = []
        for row, payload in enumerate(payloads.to_pylist()):
            if payload is None:
                append(None)
                continue
            try:
                append(read_rest(payload))
            except SendBack:
                again.append(row)
                append(None)
        try:
            rest = [
                pa.array([None if v is None else v[name] for v in values], arrow_type)
                for name, arrow_type in zip(self._rest, self._rest_types, strict=True)
            ]
        except Exception:  # noqa: BLE001 - as decoding.py takes any failure of a decoder
            return None  # a record that does not decode: record by record, where it is named
        return self._finish(kept, rest, payloads, again)

    def _finish(
        self, kept: pa.StructArray, rest: list[pa.Array], payloads: pa.Array, again: list[int]
    ) -> pa.Array | None:
        """Read the records in doubt whole, then put the struct together."""
        try:
            whole = pa.array([self._read(payloads[row].as_py()) for row in again], self._target)
        except Exception:  # noqa: BLE001 - as decoding.py takes any failure of a decoder
            return None  # a record that does not decode: record by record, where it is named
        return self._assemble(kept, rest, whole, again)

    def _assemble(
        self, kept: pa.StructArray, rest: list[pa.Array], whole: pa.Array, again: list[int]
    ) -> pa.Array:
        """Put the fields in the struct's order; the records read again whole replace theirs."""
        children = dict(zip(self._rest, rest, strict=True))
        children.update(zip(kept.type.names, kept.flatten(), strict=True))
        columns = [children[name] for name in self._names]
        out = pa.StructArray.from_arrays(columns, fields=list(self._target), mask=kept.is_null())
        if not again:
            return out
        redone = pa.array(again, pa.uint64())
        keep = pc.invert(pc.is_in(pa.array(range(len(out)), pa.uint64()), redone))
        rows = pa.concat_arrays([pc.indices_nonzero(keep), redone])
        return pa.concat_arrays([out.filter(keep), whole]).take(pc.sort_indices(rows))
