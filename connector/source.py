"""``KafkaSource``: the Spark data source; it only wires options to the two readers."""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader
from pyspark.sql.types import StructType

from connector.batch_reader import KafkaBatchReader
from connector.kafka_config import check_client_accepts
from connector.options import KafkaSourceOptions, Mode, include_headers, parse_options
from connector.schema import spark_schema
from connector.stream_reader import KafkaStreamReader

__all__ = ["KafkaSource"]


class KafkaSource(DataSource):
    """Read Kafka with ``spark.readStream.format("kafka-rescalable")`` or ``spark.read``.

    Options keep the names and meanings of Spark's built-in Kafka source; see the README's
    option table. Register once per session with ``spark.dataSource.register(KafkaSource)``.
    """

    @classmethod
    def name(cls) -> str:
        """Name the format users pass to ``format(...)``."""
        return "kafka-rescalable"

    def schema(self) -> StructType:
        """Spark's Kafka schema, with ``headers`` only under ``includeHeaders``."""
        return spark_schema(include_headers(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        """Return the batch reader, for ``spark.read``."""
        return KafkaBatchReader(self._parse("batch"))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """Return the micro-batch reader, for ``spark.readStream``."""
        return KafkaStreamReader(self._parse("stream"))

    def _parse(self, mode: Mode) -> KafkaSourceOptions:
        options = parse_options(self.options, mode)
        check_client_accepts(options.kafka_settings)
        return options
