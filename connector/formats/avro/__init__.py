"""Avro as the ``avro`` codec (:mod:`kafka_rescalable.formats.avro_codec`) reads and writes it.

- :mod:`~kafka_rescalable.formats.avro.types`: Avro schemas read as Spark types, the table of
  spark-avro's rules the other modules share;
- :mod:`~kafka_rescalable.formats.avro.values`: fastavro's values turned into Arrow's, and
  rows' values into fastavro's (the sink);
- :mod:`~kafka_rescalable.formats.avro.writer_schema`: Spark types written as Avro schemas;
- :mod:`~kafka_rescalable.formats.avro.registered`: registry schemas made self-contained, the
  named types of the subjects they reference written in by
  :mod:`~kafka_rescalable.formats.avro.inlined`;
- :mod:`~kafka_rescalable.formats.avro.native`: whole columns decoded by the native core, when
  it is installed, with :mod:`~kafka_rescalable.formats.avro.arrow` making its Arrow array the
  type Spark declared, and :mod:`~kafka_rescalable.formats.avro.parity` naming the schemas
  that it leaves to the pure-Python decoders, which would read them differently.
"""
