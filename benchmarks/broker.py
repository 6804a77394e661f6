"""The JVM options and data folder of the broker the benchmark suite runs against.

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

``benchmarks.run`` and ``wide_stream`` put the broker's topic data in memory (tmpfs,
``/dev/shm``) where the machine has one. On this VM's ext4 disk a broker stalls for about
50 s a minute into a steady stream over a new 10,000-partition topic: every partition writes
its first index entries at about the same time, each a block allocation in a sparse
memory-mapped file, and deliveries fall from some 5,000 records/s to a few hundred
(``benchmarks/RESULTS.md``, thirteenth session). That measured this disk, not either source,
which read from the same broker; with the data in memory deliveries held.
``--broker-data-on-disk`` keeps the data on disk, as the runs before the fourteenth session
did.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from kafka_rescalable.testing.local_kafka import LocalKafka

__all__ = ["BROKER_JVM_OPTIONS", "MEMORY_ROOT", "benchmark_broker", "broker_data_properties"]

MEMORY_ROOT: Final = Path("/dev/shm")
"""Linux's tmpfs for everyone; where there is none, the broker's data stays on disk."""


def _broker_jvm_options() -> tuple[str, ...]:
    """Return the test broker's JVM options with the JIT's optimizing tier and a 1 GiB heap."""
    from kafka_rescalable.testing.local_kafka import DEFAULT_JVM_OPTIONS

    options = [o for o in DEFAULT_JVM_OPTIONS if o != "-XX:TieredStopAtLevel=1"]
    return tuple("-Xmx1g" if o.startswith("-Xmx") else o for o in options)


BROKER_JVM_OPTIONS = _broker_jvm_options()


@contextlib.contextmanager
def broker_data_properties(on_disk: bool = False) -> Iterator[dict[str, str]]:
    """Yield the broker's ``server.properties`` entries for its topic data, in memory if it can.

    An empty mapping keeps the broker's own folder on disk: when asked (``on_disk``) or when
    :data:`MEMORY_ROOT` is not a writable folder, which is said on stdout, as it changes what
    a many-partition run measures. The folder in memory is removed on exit.
    """
    if on_disk:
        yield {}
        return
    if not (MEMORY_ROOT.is_dir() and os.access(MEMORY_ROOT, os.W_OK)):
        print(f"the broker's data stays on disk: {MEMORY_ROOT} is not a writable folder")
        yield {}
        return
    with tempfile.TemporaryDirectory(prefix="benchmark-kafka-", dir=MEMORY_ROOT) as folder:
        yield {"log.dirs": folder}


@contextlib.contextmanager
def benchmark_broker(
    jvm_options: Sequence[str] = BROKER_JVM_OPTIONS, *, data_on_disk: bool = False
) -> Iterator[LocalKafka]:
    """Run an embedded broker, its data where :func:`broker_data_properties` puts it.

    The broker is stopped and its data removed on exit.
    """
    from kafka_rescalable.testing.local_kafka import LocalKafka

    with (
        broker_data_properties(data_on_disk) as properties,
        LocalKafka(jvm_options=jvm_options, extra_properties=properties) as kafka,
    ):
        yield kafka
