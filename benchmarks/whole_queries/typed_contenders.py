"""Who decodes what in the typed-records benchmark: the formats, both sides, their DataFrames.

Each format pairs our source decoding a topic (``valueFormat``) with Spark's built-in source
plus Spark's JVM decoder on the same topic, the way a user of the built-in source decodes it:

========================  ===================================  ==================================
format                    ours                                 built-in source +
========================  ===================================  ==================================
``binary``                the bytes (no decoding)              the bytes (no decoding)
``avro``                  ``valueFormat=avro``, schema inline  ``from_avro`` (spark-avro)
``avro-registry``         the same with ``schema.registry.url``  ``from_avro`` of ``substring(value,
                          on Confluent-framed records          6)``: the 5-byte framing cut off
``protobuf``              ``valueFormat=protobuf``             ``from_protobuf`` (spark-protobuf)
``json``                  ``valueFormat=json``, DDL            ``from_json`` of the value as text
``avro-udf``              bytes + an Arrow UDF calling         ``from_avro`` (the same as for
                          fastavro per record                  ``avro``)
========================  ===================================  ==================================

``from_protobuf`` runs with ``emit.default.values``, so that it gives the rows ours gives (a
proto3 zero as itself, not null). Every query selects every decoded field (``v.*``); the
binary floor selects ``value``.

spark-protobuf is not on Maven Central (as reached here), so its jar is given by hand
(``--spark-protobuf-jar``, see :func:`spark_protobuf_jars`); without one, the JVM side of
``protobuf`` is reported as not run.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks.session import BUILTIN, OURS
from benchmarks.whole_queries.avro_records import ORDER_SCHEMA, ORDER_SCHEMA_JSON, order_type
from benchmarks.whole_queries.order_encodings import ORDER_DDL, ORDER_MESSAGE

__all__ = [
    "FAMILIES",
    "FORMATS",
    "JVM",
    "NATIVE_ENV",
    "OURS_SIDE",
    "PROTOBUF_JAVA",
    "Contender",
    "Reading",
    "TypedFormat",
    "decode_orders",
    "decoded",
    "spark_decoders",
    "spark_protobuf_jars",
    "worker_decoders",
]

FAMILIES = ("avro", "protobuf", "json")
"""What our source decodes with one decoder each, native or Python."""
OURS_SIDE = "ours"
JVM = "jvm"
NATIVE_ENV = "KAFKA_RESCALABLE_NATIVE"
"""Set to ``0``, our source decodes with its pure-Python fallback even where the core exists."""
PROTOBUF_JAVA = (
    "com.google.protobuf:protobuf-java:4.29.3",
    "com.google.protobuf:protobuf-java-util:4.29.3",
)
"""What spark-protobuf 4.x is built against: protobuf-java, and protobuf-java-util, whose
``JsonFormat`` its deserializer calls (Spark's own build shades both into its jar; a jar built
without shading needs them beside it; their own dependencies, gson and guava, are in
pyspark's jars)."""


@dataclass(frozen=True)
class TypedFormat:
    """One row of the comparison: the topic both sides read and what the JVM side runs."""

    name: str
    encoding: str
    """The topic's encoding (:data:`~benchmarks.whole_queries.order_encodings.ENCODINGS`)."""
    title: str
    jvm_title: str
    family: str = ""
    """Our decoder's family (:data:`FAMILIES`); none when our side does not decode."""
    jvm_format: str = ""
    """The format whose JVM contender this one shares (``avro-udf`` shares ``avro``'s)."""

    @property
    def jvm_key(self) -> str:
        """The format name under which the JVM side runs (once, if shared)."""
        return self.jvm_format or self.name


FORMATS: dict[str, TypedFormat] = {
    f.name: f
    for f in (
        TypedFormat("binary", "avro", "binary (no decoding)", "built-in, bytes"),
        TypedFormat("avro", "avro", "Avro, schema inline", "built-in + from_avro", "avro"),
        TypedFormat(
            "avro-registry",
            "avro-framed",
            "Avro, registry-framed",
            "built-in + from_avro(substring(value, 6))",
            "avro",
        ),
        TypedFormat("protobuf", "protobuf", "Protobuf", "built-in + from_protobuf", "protobuf"),
        TypedFormat("json", "json", "JSON", "built-in + from_json", "json"),
        TypedFormat(
            "avro-udf",
            "avro",
            "Avro, bytes + Arrow UDF (fastavro)",
            "built-in + from_avro",
            jvm_format="avro",
        ),
    )
}
"""Every format the benchmark knows, in the order of its table."""


@dataclass(frozen=True)
class Contender:
    """One side of one format: what one timed query runs."""

    format: str
    side: str

    def __str__(self) -> str:
        """``avro/ours``: the name in progress lines."""
        return f"{self.format}/{self.side}"


@dataclass(frozen=True)
class Reading:
    """What the DataFrames need besides the contender: where to read, how to decode."""

    bootstrap: str
    registry_url: str | None
    descriptor_set: Path
    """The Protobuf descriptor set file (our ``valueSchema``; its bytes go to from_protobuf)."""


def decoded(spark: Any, contender: Contender, topic: str, reading: Reading, batch: bool) -> Any:
    """Return ``contender``'s DataFrame of ``topic``: every decoded field, or ``value``."""
    from pyspark.sql import functions as F

    source = OURS if contender.side == OURS_SIDE else BUILTIN
    reader = (spark.read if batch else spark.readStream).format(source)
    options = {
        "kafka.bootstrap.servers": reading.bootstrap,
        "subscribe": topic,
        "startingOffsets": "earliest",
    }
    if contender.side == OURS_SIDE:
        options |= _our_options(contender.format, reading)
    for key, value in options.items():
        reader = reader.option(key, value)
    frame = reader.load()
    if contender.format == "binary":
        return frame.select("value")
    if contender.side == JVM:
        value = _jvm_decoder(contender.format, reading)
    elif contender.format == "avro-udf":
        value = F.arrow_udf(decode_orders, order_type())(F.col("value"))
    else:
        value = F.col("value")
    return frame.select(value.alias("v")).select("v.*")


def decode_orders(values: pa.Array) -> pa.Array:
    """Decode each plain Avro value with fastavro and build the struct: the Arrow UDF.

    What a user would write: one ``schemaless_reader`` call per record, the parsed schema and
    the Arrow type built once per Python worker. The annotations are Arrow's types, not
    ``Any``: ``arrow_udf`` reads them to choose how to call the function.
    """
    import fastavro

    parsed, arrow_type = _udf_schema()
    read = fastavro.schemaless_reader
    rows = [
        None if value is None else read(io.BytesIO(value), parsed, None)
        for value in values.to_pylist()
    ]
    return pa.array(rows, type=arrow_type)


@functools.cache
def _udf_schema() -> tuple[Any, pa.DataType]:
    import fastavro
    from pyspark.sql.pandas.types import to_arrow_type

    return fastavro.parse_schema(dict(ORDER_SCHEMA)), to_arrow_type(order_type(), timezone="UTC")


def _our_options(name: str, reading: Reading) -> dict[str, str]:
    if name == "avro":
        return {"valueFormat": "avro", "valueSchema": ORDER_SCHEMA_JSON}
    if name == "avro-registry":
        return {"valueFormat": "avro", "schema.registry.url": str(reading.registry_url)}
    if name == "protobuf":
        return {
            "valueFormat": "protobuf",
            "valueSchema": str(reading.descriptor_set),
            "valueMessage": ORDER_MESSAGE,
        }
    if name == "json":
        return {"valueFormat": "json", "valueSchema": ORDER_DDL}
    return {}


def _jvm_decoder(name: str, reading: Reading) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql.protobuf.functions import from_protobuf

    if name == "avro":
        return from_avro(F.col("value"), ORDER_SCHEMA_JSON)
    if name == "avro-registry":
        return from_avro(F.expr("substring(value, 6)"), ORDER_SCHEMA_JSON)
    if name == "protobuf":
        return from_protobuf(
            F.col("value"),
            ORDER_MESSAGE,
            options={"emit.default.values": "true"},
            binaryDescriptorSet=reading.descriptor_set.read_bytes(),
        )
    if name == "json":
        return F.from_json(F.col("value").cast("string"), ORDER_DDL)
    msg = f"no JVM decoder for format {name!r}"
    raise ValueError(msg)


def worker_decoders(_index: Any = None) -> dict[str, str]:
    """Return, per decoding family, the decoder our source uses here: ``native`` or ``python``.

    JSON is ``python, maps native`` where the core reads the string maps pyarrow cannot.

    The contract of the native core: it is the separate distribution
    ``kafka_rescalable_native``, used when it imports, unless :data:`NATIVE_ENV` is ``0``. It
    may decode some formats only (Avro first), and the connector uses it for a format only
    where it has the glue: a family counts as native when the connector has a module
    ``kafka_rescalable.formats.<family>.native`` and the core exports a decoder named after
    the family (``AvroDecoder``, ...). Run this in a Spark Python worker
    (:func:`spark_decoders`) to see what the executors use.
    """
    exported: list[str] = []
    if os.environ.get(NATIVE_ENV, "").strip() != "0":
        try:
            import kafka_rescalable_native as core
        except ImportError:
            pass
        else:
            exported = [name.lower() for name in dir(core)]
    decoders = {
        family: "native"
        if any(name.startswith(family) for name in exported) and _has_glue(family)
        else "python"
        for family in FAMILIES
    }
    if decoders.get("json") == "python" and "json_string_maps" in exported:
        decoders["json"] = "python, maps native"  # formats/json_partial.py: string maps only
    return decoders


def _has_glue(family: str) -> bool:
    # The connector's glue for a family lives in its format's package (formats/avro/native.py).
    for module in (
        f"kafka_rescalable.formats.{family}.native",
        f"kafka_rescalable.formats.native_{family}",
    ):
        try:
            if importlib.util.find_spec(module) is not None:
                return True
        except ModuleNotFoundError:  # the family's package itself does not exist
            continue
    return False


def spark_decoders(spark: Any) -> dict[str, str]:
    """Return :func:`worker_decoders` as run in one of ``spark``'s Python workers."""
    return spark.sparkContext.parallelize([0], 1).map(worker_decoders).collect()[0]


@functools.cache
def spark_protobuf_jars(given: Path | None) -> tuple[list[Path], str]:
    """Return the jars ``from_protobuf`` needs, or none and the reason it cannot run.

    ``given`` is a spark-protobuf jar built for this pyspark's Spark version (Maven Central
    has none to fetch); protobuf-java comes from Maven Central beside it.
    """
    if given is None:
        return [], "spark-protobuf is not on Maven Central: give --spark-protobuf-jar"
    if not given.is_file():
        return [], f"--spark-protobuf-jar {given} is not a file"
    from kafka_rescalable.testing.jars import resolve_jars

    return [given, *resolve_jars(PROTOBUF_JAVA, transitive=False)], ""
