"""Typed records: Kafka keys and values decoded from Avro, Protobuf, JSON or text, and encoded.

A Kafka record's key and value are bytes; most production topics carry Avro or Protobuf framed
for a Confluent-style schema registry, or JSON. These modules turn those bytes into Spark
columns in the source (on the executors, straight into Arrow) and back into bytes in the sink,
with pip-installable libraries only (fastavro, protobuf, confluent-kafka's registry client).

- :mod:`kafka_rescalable.formats.options`: the ``keyFormat`` / ``valueFormat`` family of options and
  ``schema.registry.*``, parsed into frozen, picklable values shared by source and sink;
- :mod:`kafka_rescalable.formats.registry`: the schema registry's wire framing (magic byte, schema
  id)
  and its client, one per Python worker;
- :mod:`kafka_rescalable.formats.codec`: what a decoder and an encoder are, and which ones a format
  gets;
- :mod:`kafka_rescalable.formats.decoding`: an Arrow batch of raw records in, typed columns out,
  with
  ``mode`` (``FAILFAST`` / ``PERMISSIVE``) deciding what a bad record does;
- :mod:`kafka_rescalable.formats.ddl`: Spark types written as DDL, how the source declares its
  schema.
"""
