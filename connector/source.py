"""``KafkaSource``: the Spark data source; it only wires options to the readers and writers."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, NoReturn

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from kafka_rescalable._executor_guard import ShippedToExecutors
from kafka_rescalable.config.kafka_config import check_client_accepts
from kafka_rescalable.config.options import KafkaSourceOptions, Mode, parse_options
from kafka_rescalable.config.redaction import warn_shown_by_spark
from kafka_rescalable.config.table import OPTIONS
from kafka_rescalable.driver.interpreter import warn_about_executor_python
from kafka_rescalable.driver.pyspark_origin import note_pyspark_origin
from kafka_rescalable.driver.stream_reader import KafkaStreamReader
from kafka_rescalable.errors import KafkaSourceError
from kafka_rescalable.formats.codec import ReaderSchema
from kafka_rescalable.formats.declared import (
    declared_schema,
    decode_plan,
    resolve_readers,
    subscribed_topics,
)
from kafka_rescalable.formats.decoding import DecodePlan
from kafka_rescalable.schema import spark_schema
from kafka_rescalable.task import RangeReadSettings

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.datasource import InputPartition

__all__ = ["KafkaSource"]


class KafkaSource(ShippedToExecutors, DataSource):
    """Read Kafka with ``spark.readStream.format("kafka-rescalable")`` or ``spark.read``.

    Write to it with ``df.writeStream`` or ``df.write`` in the same format (the sink).

    Options keep the names and meanings of Spark's built-in Kafka source; see the README's
    option table. Installed, Spark finds it by name (``pyspark_kafka_rescalable``); where the
    package is only importable, register it with ``spark.dataSource.register(KafkaSource)``.
    """

    _defined_readers: tuple[ReaderSchema, ...] | None = None
    """The reader schemas fixed by :meth:`schema` when the DataFrame was defined.

    Spark pickles this instance after asking for its schema and hands the pickled instance,
    with them, to :meth:`reader` and :meth:`streamReader`: so a DataFrame reads with the
    subject version it was defined with (as ``from_avro`` reads with the schema it was given),
    however many versions came since, and a DataFrame defined later reads with a later one.
    ``None`` when Spark did not ask (a schema given with ``.schema(...)``).
    """

    @classmethod
    def name(cls) -> str:
        """Name the format users pass to ``format(...)``."""
        return "kafka-rescalable"

    def schema(self) -> StructType | str:
        """Spark's Kafka schema, with ``headers`` only under ``includeHeaders``.

        Spark asks for it when the DataFrame is defined (``load()``), before it knows whether
        the DataFrame is read as a batch or a stream; that is where bad options are refused,
        so a typo fails at once, with our message, not when the query starts, and where a
        secret Spark would print in the plan is warned about. With a typed
        key or value (``valueFormat``), that column's type replaces the bytes, and the schema
        is declared as DDL (see :mod:`kafka_rescalable.formats.declared`); a registry subject's
        latest version is looked up here, and kept for the readers (``_defined_readers``).
        """
        options = check_options(self.options)
        warn_shown_by_spark(self.options)
        base = spark_schema(options.include_headers)
        payloads = options.payloads
        readers = resolve_readers(payloads, subscribed_topics(options.subscription))
        self._defined_readers = readers
        return declared_schema(base, readers, payloads.mode)

    def reader(self, schema: StructType) -> DataSourceReader:
        """Return the batch reader, for ``spark.read``."""
        options = self._parse("batch")
        warn_about_executor_python()
        note_pyspark_origin()
        plan = _decode_plan(options, schema, self._defined_readers)
        from kafka_rescalable.driver.batch_reader import KafkaBatchReader

        return KafkaBatchReader(options, _read_on_executor, plan)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """Return the micro-batch reader, for ``spark.readStream``.

        An option valid only for batch reads (``endingOffsets``) is refused from the reader's
        first call rather than here: PySpark's streaming runner fails while handling an error
        raised by this method, and the user would see that failure instead of ours.
        """
        try:
            options = self._parse("stream")
            warn_about_executor_python()
            note_pyspark_origin()
            plan = _decode_plan(options, schema, self._defined_readers)
            return KafkaStreamReader(options, _read_on_executor, plan)
        except KafkaSourceError as error:
            return _RefusedStreamReader(error)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """Return the batch writer, for ``df.write``; bad options or columns fail here.

        See the README's "Writing to Kafka" for the options and ``kafka_rescalable.sink``.
        """
        warn_about_executor_python()
        from kafka_rescalable.sink.writer import make_writer

        return make_writer(self.options, schema, overwrite, streaming=False)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """Return the micro-batch writer, for ``df.writeStream``; checked as ``writer``."""
        warn_about_executor_python()
        from kafka_rescalable.sink.writer import make_writer

        return make_writer(self.options, schema, overwrite, streaming=True)

    def _parse(self, mode: Mode) -> KafkaSourceOptions:
        options = parse_options(self.options, mode)
        check_client_accepts(options.kafka_settings)
        return options


_BATCH_ONLY: Final = frozenset(
    option.key for option in OPTIONS if "stream" not in option.modes
)  # the ``ending*`` options, as the option table declares them


def _decode_plan(
    options: KafkaSourceOptions, schema: StructType, defined: tuple[ReaderSchema, ...] | None
) -> DecodePlan | None:
    """Plan the executors' decoding with the reader schemas ``defined`` with the DataFrame.

    When Spark did not ask for the schema (the user gave one), they are resolved now.
    """
    payloads = options.payloads
    if defined is None:
        defined = resolve_readers(payloads, subscribed_topics(options.subscription))
    return decode_plan(payloads, defined, schema)


def check_options(options: Mapping[str, str]) -> KafkaSourceOptions:
    """Refuse options that are wrong whether the DataFrame is read as a batch or a stream.

    The ``ending*`` options exist only in batch reads, so options holding one are checked as
    a batch read's; the rest as a stream's, whose rules the batch's add to only for the start
    (``startingOffsets=latest`` is refused in a batch), which is then refused when the batch
    reader is made.

    Returns the options as parsed for that check.

    Raises
    ------
    InvalidOptionError
        Naming the option, the bad value and what would be valid.
    """
    raw = {key.lower(): value for key, value in options.items()}
    if any(name in raw for name in _BATCH_ONLY):
        checked = parse_options(raw, "batch")
    else:
        checked = parse_options(raw, "stream")
    check_client_accepts(checked.kafka_settings)
    return checked


class _RefusedStreamReader(ShippedToExecutors, DataSourceStreamReader):
    """A stream reader for refused options: every call raises the refusal."""

    def __init__(self, error: KafkaSourceError) -> None:
        self._error = error

    def _refuse(self) -> NoReturn:
        raise self._error

    def initialOffset(self) -> dict:
        """Raise the refusal."""
        self._refuse()

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        """Raise the refusal."""
        self._refuse()

    def partitions(self, start: dict, end: dict) -> Any:
        """Raise the refusal."""
        self._refuse()

    def read(self, partition: Any) -> Any:
        """Raise the refusal."""
        self._refuse()


def _read_on_executor(
    partition: InputPartition, settings: RangeReadSettings
) -> Iterator[pa.RecordBatch]:
    """Read one task, on an executor: the readers hand this function to Spark.

    The executor's modules are imported here, where they run, and not with this module: the
    driver's side of every streaming query is a new Python process that imports this module
    before its first micro-batch, and the readers (with ``pyarrow.compute``) would add some
    70 ms to each query's start-up there, for code that process never runs.
    """
    from kafka_rescalable.executor.tasks import read_input_partition

    return read_input_partition(partition, settings)
