"""A user's first session: ``kafka-rescalable`` by name, never registered, in a process of its own.

Usage: python integration_tests/by_name_query.py BOOTSTRAP TOPIC OUT_TOPIC WORKDIR

``test_by_name`` runs it with the Python of a virtualenv where the built wheel is installed
(not this checkout: the script imports nothing from the repository), so PySpark can find the
source only as an installed distribution's ``pyspark_kafka_rescalable`` module. In one
``local[2]`` session it reads ``TOPIC`` as a batch, as an AvailableNow stream into Parquet,
and through SQL (a temporary view), writes rows to ``OUT_TOPIC``, tries catalog tables (with
and without ``OPTIONS``, and a ``SELECT`` from one created with its columns), and
finally registers the class by hand on top of the found one and reads again. It prints one
JSON line with what each step saw; the test checks it.

It runs from a user's job directory: the test copies it there beside the job's own
``state.py`` and ``connector.py``, the names this package's folders had as top-level modules
before 0.2. The directory is the script's own (``sys.path[0]``) and the working directory of
the driver and of the ``local[2]`` executors' Python workers (``-m`` puts it first on their
path), so under the old names those modules would have shadowed the package there. The job
imports its modules on the driver and on an executor and reports where they came from.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

FORMAT = "kafka-rescalable"


def positions(frame: DataFrame) -> list[list]:
    """Return ``[partition, offset, value]`` of every row, value decoded."""
    rows = frame.selectExpr("partition", "offset", "CAST(value AS STRING) AS value").collect()
    return sorted([row.partition, row.offset, row.value] for row in rows)


def sql_error(spark: SparkSession, statement: str) -> str:
    """Run ``statement`` to its end; return Spark's error message, or ``"no error"``."""
    try:
        spark.sql(statement).collect()
    except Exception as error:  # noqa: BLE001 - the test reads the message Spark wrapped
        return str(error)
    return "no error"


def main(bootstrap: str, topic: str, out_topic: str, workdir: str) -> None:
    """Run every step in one session and print the JSON summary."""
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("kafka-rescalable-by-name")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    seen: dict[str, object] = {
        "module": importlib.util.find_spec("pyspark_kafka_rescalable").origin,
        "connector": importlib.util.find_spec("kafka_rescalable").origin,
        # The distribution installs one import root: no generic top-level names in the venv
        # (the job directory's own state.py and connector.py are found, from the cwd).
        "generic_names": [
            name
            for name in ("connector", "state")
            if (spec := importlib.util.find_spec(name)) is not None
            and (spec.origin or "").startswith(sys.prefix)
        ],
        "prefix": sys.prefix,
    }

    def source(reader):
        return (
            reader.format(FORMAT)
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
        )

    seen["batch"] = positions(source(spark.read).load())

    import connector  # the job's own modules, beside this script
    import state

    seen["job_modules"] = [connector.__file__, state.__file__]
    on_executor = spark.sparkContext.parallelize([0], 1).map(
        lambda _: [__import__(name).__file__ for name in ("connector", "state")]
    )
    seen["job_modules_on_executor"] = on_executor.collect()[0]

    output = Path(workdir, "stream")
    query = (
        source(spark.readStream)
        .option("parallelism", "1")
        .load()
        .writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(Path(workdir, "checkpoint")))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    seen["stream"] = positions(spark.read.parquet(str(output)))

    rows = spark.createDataFrame([(f"k{i}", f"w{i}") for i in range(5)], "key string, value string")
    (
        rows.write.format(FORMAT)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", out_topic)
        .mode("append")
        .save()
    )

    options = f"'kafka.bootstrap.servers' '{bootstrap}', 'subscribe' '{topic}'"
    spark.sql(f"CREATE TEMPORARY VIEW events USING `{FORMAT}` OPTIONS ({options})")
    seen["sql_view"] = positions(spark.sql("SELECT * FROM events WHERE offset >= 0"))
    with_options = f"USING `{FORMAT}` OPTIONS ({options})"
    seen["sql_table"] = sql_error(spark, f"CREATE TABLE events_table {with_options}")
    seen["sql_table_bare"] = sql_error(spark, f"CREATE TABLE bare_table USING `{FORMAT}`")
    # With its columns given, Spark creates the table without asking the source; reads fail.
    spark.sql(f"CREATE TABLE typed_table (value BINARY) {with_options}")
    seen["sql_table_select"] = sql_error(spark, "SELECT * FROM typed_table")

    from kafka_rescalable import KafkaSource

    spark.dataSource.register(KafkaSource)  # optional, and harmless on top of the found one
    seen["after_register"] = positions(source(spark.read).load())
    spark.stop()
    print(json.dumps(seen))


if __name__ == "__main__":
    main(*sys.argv[1:5])
