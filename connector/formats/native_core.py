"""Which codecs typed records use: the native core when it is installed, else pure Python.

``kafka_rescalable_native`` (the separate distribution built from the repository's ``native/``
folder) decodes Avro and Protobuf columns, reads JSON's string maps and encodes Avro columns in
bulk. Every format's glue asks :func:`native_core` on each batch, so that one switch,
``KAFKA_RESCALABLE_NATIVE=0``, sends all of them to the pure-Python codecs (tests and
benchmarks run both paths with it), and one line per process says which codecs run.

The glue's bargain is the same for every format: the core decides nothing, and any failure,
whatever its kind, sends the batch to the slow path, which names the failing record and says
why in our words. :func:`bulk_column` and :func:`built_once` hold that bargain once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final, Literal

import pyarrow as pa

from kafka_rescalable._logging import logger

__all__ = ["NATIVE_ENV", "built_once", "bulk_column", "native_core"]

NATIVE_ENV: Final = "KAFKA_RESCALABLE_NATIVE"
"""Set to ``0`` to decode and encode typed records with the pure-Python codecs even where the
native core is installed."""

_said: set[str] = set()


def native_core() -> ModuleType | None:
    """Return the native core's module, or ``None`` when the pure-Python codecs are used.

    Read on every call, so that ``KAFKA_RESCALABLE_NATIVE`` set in a running process (a test)
    takes effect; the choice is logged once per process and choice.
    """
    if os.environ.get(NATIVE_ENV, "").strip() == "0":
        _say(f"the pure-Python codecs: {NATIVE_ENV}=0")
        return None
    try:
        import kafka_rescalable_native as core
    except ImportError:
        _say(
            "the pure-Python codecs: kafka_rescalable_native is not installed "
            "(pip install 'kafka-rescalable[native]' decodes Avro some 25 times faster)"
        )
        return None
    _say(f"the native core (kafka_rescalable_native {core.__version__})")
    return core


def _say(codecs: str) -> None:
    if codecs not in _said:
        _said.add(codecs)
        logger.info("typed records are decoded and encoded with %s", codecs)


def built_once(core: ModuleType, build: Callable[[], Any], refusal: str) -> Any | Literal[False]:
    """Build one of the core's per-column objects; ``False`` if the core refuses the schema.

    A refusal is final for the column in this worker (the caller keeps the ``False``): the
    schema does not change, so neither would the core's answer. ``refusal`` starts the debug
    line that says so.
    """
    try:
        return build()
    except core.NativeDecodeError as error:
        logger.debug("%s: %s", refusal, error)
        return False


def bulk_column(decode: Callable[[], pa.Array | None], arrow_type: pa.DataType) -> pa.Array | None:
    """Run one bulk decoding; ``None`` (the slow path) on any failure or any other Arrow type.

    ``decode`` itself returns ``None`` where it declines before calling the core (a writer
    schema it cannot use, say).
    """
    try:
        column = decode()
    except Exception as error:  # noqa: BLE001 - whatever failed, the slow path decides
        # NativeDecodeError, an Arrow cast, or the decoder busy in another thread
        logger.debug("a batch is decoded on the slow path: %s", error)
        return None
    if column is not None and column.type != arrow_type:
        # never seen; the slow path builds the right type
        logger.debug("the native core gave %s, not %s", column.type, arrow_type)
        return None
    return column
