"""Avro payloads decoded in bulk by the native core, when it is installed.

``kafka_rescalable_native`` (the separate distribution built from the repository's ``native/``
folder) decodes a whole Arrow column of Avro payloads at once: it reads the registry framing,
groups the records by writer schema id, resolves each group to the reader schema and puts the
records back in order. It does no I/O and takes no decision; this module keeps them:

- which writer schemas: the ids the batch holds are read in bulk first, and the ones not seen
  yet are fetched from the registry here, by the Avro codec's own per-worker lookup, before
  the core is called;
- the Arrow type: the core's array is made the type Spark declared
  (:func:`kafka_rescalable.formats.avro.arrow.conform`);
- failures: the core never says which record failed or why in our words, so on any failure
  (a malformed payload, an id the registry does not know, a writer schema the core cannot
  resolve) this returns ``None`` and :func:`kafka_rescalable.formats.decoding.decode_batch`
  decodes the batch on its slow path, which names the record and gives today's reason.

``KAFKA_RESCALABLE_NATIVE=0`` forces the pure-Python decoders
(:mod:`kafka_rescalable.formats.native_core`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pyarrow as pa

from kafka_rescalable.formats.avro.arrow import conform
from kafka_rescalable.formats.avro.parity import (
    promotion_first,
    resolution_differs,
    union_names_a_type,
)
from kafka_rescalable.formats.avro.types import without_ignored_logical_types
from kafka_rescalable.formats.codec import ColumnDecoder
from kafka_rescalable.formats.native_core import built_once, bulk_column, native_core
from kafka_rescalable.formats.options import Framing

__all__ = ["WriterText", "native_decoder"]

WriterText = Callable[[int], "str | None"]
"""A writer schema id in, its Avro schema's JSON text out; ``None`` when no record written with
it can be read (the slow path gives the reason)."""


def native_decoder(
    reader_text: str,
    arrow_type: pa.DataType,
    framing: Framing,
    writer_text: WriterText | None,
) -> ColumnDecoder:
    """Build the bulk decoder of one column, on an executor, once per Python worker.

    Parameters
    ----------
    reader_text
        The reader schema's JSON text.
    arrow_type
        The Arrow type of the Spark type the source declared: what the column must be.
    framing
        Whether payloads carry the registry's framing.
    writer_text
        Gives a framed payload's writer schema by id; ``None`` when payloads are plain.
    """
    state = _State(_for_core(reader_text), arrow_type, framing, writer_text)
    reader = json.loads(reader_text)
    state.resolves_unions_alike = not promotion_first(reader)
    if union_names_a_type(reader):
        state.core = False  # every batch on the slow path: see union_names_a_type
    return state.decode


def _for_core(text: str) -> str:
    """Give the schema as the core reads it: without the logical types Spark reads as plain."""
    return json.dumps(without_ignored_logical_types(json.loads(text)))


class _State:
    """One column's core decoder, made when first needed, and the writer ids it was given."""

    def __init__(
        self,
        reader_text: str,
        arrow_type: pa.DataType,
        framing: Framing,
        writer_text: WriterText | None,
    ) -> None:
        self.reader_text = reader_text
        self.arrow_type = arrow_type
        self.framed = framing is Framing.CONFLUENT
        self.writer_text = writer_text
        self.core: Any = None
        self.unreadable: set[int] = set()
        """Ids no record can be decoded with here: their batches go to the slow path."""
        self.resolves_unions_alike = True
        """Whether a writer schema other than the reader's resolves alike on both paths."""

    def decode(self, payloads: pa.Array) -> pa.Array | None:
        core = native_core()
        if core is None:
            return None
        if self.core is None:
            self.core = built_once(
                core,
                lambda: core.AvroDecoder(self.reader_text),
                "the native core cannot read the reader schema",
            )
        if self.core is False:
            return None
        return bulk_column(lambda: self._decoded(core, payloads), self.arrow_type)

    def _decoded(self, core: ModuleType, payloads: pa.Array) -> pa.Array | None:
        if self.framed and self.writer_text is not None:
            if not self._writers_known(core, payloads):
                return None
            decoded = self.core.decode_framed(payloads)
        else:
            decoded = self.core.decode_plain(payloads)
        return conform(decoded, self.arrow_type)

    def _resolves_alike(self, text: str) -> bool:
        """Whether both paths read records of writer schema ``text`` alike (parity)."""
        if _for_core(text) == self.reader_text:
            return True  # no resolution at all: fastavro reads with the writer schema alone
        writer = json.loads(_for_core(text))
        return (
            self.resolves_unions_alike
            and not union_names_a_type(writer)
            and not resolution_differs(writer, json.loads(self.reader_text))
        )

    def _writers_known(self, core: ModuleType, payloads: pa.Array) -> bool:
        """Give the core every writer schema the batch needs; ``False``: use the slow path."""
        assert self.writer_text is not None
        ids = core.schema_ids(payloads)  # raises NativeDecodeError on a malformed frame
        for schema_id in ids:
            if schema_id in self.unreadable:
                return False
            if self.core.has_writer(schema_id):
                continue
            try:
                text = self.writer_text(schema_id)
            except Exception:  # noqa: BLE001 - the registry failed: the slow path says how
                return False
            if text is None:
                return False
            if not self._resolves_alike(text):
                self.unreadable.add(schema_id)
                return False
            try:
                self.core.add_writer(schema_id, _for_core(text))
            except core.NativeDecodeError:
                self.unreadable.add(schema_id)
                return False
        return True
