"""The Kafka sink: ``df.write`` / ``df.writeStream`` with ``format("kafka-rescalable")``.

- ``options``: the sink's options, parsed once on the driver.
- ``rows``: the input contract (``value``, ``key``, ``topic``, ``partition``, ``headers``)
  and the conversion of Arrow batches into Kafka records.
- ``producing``: bounded producing, and the at-least-once write of one task.
- ``transactions``: the exactly-once write of one task (transaction, fencing, marker).
- ``writer``: the Spark writers that tie them together.
"""
