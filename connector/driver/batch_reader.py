"""``spark.read``: one bounded read between ``startingOffsets`` and ``endingOffsets``.

``startingOffsetsFromGroup`` works here too, as Flink's committed-offsets initializer does for
bounded reads: a batch read from where a consumer group stopped to the end of the topics.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from kafka_rescalable._executor_guard import ShippedToExecutors
from kafka_rescalable._logging import logger
from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.driver.kafka_metadata import KafkaMetadata
from kafka_rescalable.driver.positions import resolve_bound
from kafka_rescalable.driver.slots import plan_input_partitions, starting_state
from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.formats.decoding import DecodePlan
from kafka_rescalable.task import ReadTask, read_settings

__all__ = ["KafkaBatchReader"]


class KafkaBatchReader(ShippedToExecutors, DataSourceReader):
    """Plans on the driver with one metadata and two offset lookups; reads on executors.

    ``read_task`` reads one task on an executor (see :data:`kafka_rescalable.task.ReadTask`); it is
    pickled with the reader.
    """

    def __init__(
        self, options: KafkaSourceOptions, read_task: ReadTask, decode: DecodePlan | None = None
    ) -> None:
        self._options = options
        self._read_task = read_task
        self._settings = read_settings(options, decode)

    def partitions(self) -> Sequence[InputPartition]:
        """Resolve both bounds now: a batch read sees the topic as it is at planning time."""
        options = self._options
        assert options.ending is not None
        with KafkaMetadata(options) as metadata:
            found = metadata.live(options.subscription)
            live = found.partitions
            if found.missing:
                # Spark's built-in source reads nothing from a topic that does not exist;
                # so do we, but not silently: it is most often a typo.
                logger.warning(
                    "topic %s does not exist on %s: nothing is read from it",
                    ", ".join(found.missing),
                    options.bootstrap_servers,
                )
            start_state = starting_state(options, metadata, live)
            end = resolve_bound(options.ending, "endingOffsets", live, metadata)
        start = start_state.offsets()
        group = options.starting_offsets_from_group
        source = f" (with startingOffsetsFromGroup '{group}')" if group else ""
        for tp in sorted(live):
            if end[tp] < start[tp]:
                msg = (
                    f"{tp}: ending offset {end[tp]} is before starting "
                    f"offset {start[tp]}{source}; the end must not precede the start"
                )
                raise InvalidOptionError("endingOffsets", msg)
        return plan_input_partitions(start_state, start_state.with_offsets(end), options)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Read one task's ranges on an executor, with one consumer for all of them."""
        return self._read_task(partition, self._settings)
