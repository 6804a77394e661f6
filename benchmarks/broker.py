"""The JVM options of the broker every benchmark runs against.

The embedded broker of the tests stops the JIT at its first tier and keeps a small heap: it
starts sooner, which is what a test needs. A benchmark runs for minutes, under a steady
producer, next to the query it measures on the same cores; a broker left on its slower
code takes more of those cores than a production broker would, and slows both sources'
planning and reading. So every benchmark and diagnostic starts its broker with these.
"""

from __future__ import annotations

__all__ = ["BROKER_JVM_OPTIONS"]


def _broker_jvm_options() -> tuple[str, ...]:
    """Return the test broker's JVM options with the JIT's optimizing tier and a 1 GiB heap."""
    from connector.testing.local_kafka import DEFAULT_JVM_OPTIONS

    options = [o for o in DEFAULT_JVM_OPTIONS if o != "-XX:TieredStopAtLevel=1"]
    return tuple("-Xmx1g" if o.startswith("-Xmx") else o for o in options)


BROKER_JVM_OPTIONS = _broker_jvm_options()
