"""The JVM options of the broker the benchmark suite runs against.

The embedded broker of the tests stops the JIT at its first tier and keeps a small heap: it
starts sooner, which is what a test needs. ``benchmarks.run`` runs for half an hour against
one broker, long enough for the optimizing tier to pay for its compiling, so it starts the
broker with these options, as does the sink benchmark run on its own.

Not so ``benchmarks.diagnostics.wide_stream`` (unless asked): it starts a broker, creates
10,000 partitions and measures a stream within about three minutes. With these options, on
this 2-core machine, its median batch took 11.8 and 19.3 s (two runs) against 3.3-6.3 s with
the tests' broker (``benchmarks/RESULTS.md``, twelfth session). The cause was not measured
apart; the broker used 1.3 cores in its first minute, which suggests the optimizing tier
compiling while the stream is measured.
"""

from __future__ import annotations

__all__ = ["BROKER_JVM_OPTIONS"]


def _broker_jvm_options() -> tuple[str, ...]:
    """Return the test broker's JVM options with the JIT's optimizing tier and a 1 GiB heap."""
    from connector.testing.local_kafka import DEFAULT_JVM_OPTIONS

    options = [o for o in DEFAULT_JVM_OPTIONS if o != "-XX:TieredStopAtLevel=1"]
    return tuple("-Xmx1g" if o.startswith("-Xmx") else o for o in options)


BROKER_JVM_OPTIONS = _broker_jvm_options()
