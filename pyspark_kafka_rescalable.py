"""Let PySpark find ``kafka-rescalable`` by name, with no ``spark.dataSource.register`` call.

PySpark (4.2+) imports every top-level module on the Python path whose name starts with
``pyspark_`` and registers its ``DefaultSource`` under ``DefaultSource.name()``. This module
is installed with the distribution for that lookup only; import ``connector`` in code.

The lookup lists modules with ``pkgutil.iter_modules()``, so this file must sit in a folder
on the path: a wheel install, or an editable one made with ``editable_mode=strict`` (the
default editable mode hides it behind an import hook; see the README).
"""

from kafka_rescalable.source import KafkaSource as DefaultSource

__all__ = ["DefaultSource"]
