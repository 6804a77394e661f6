"""Small, blocking Kafka helpers for integration tests: topics in, records in, records out.

Every helper waits until the broker confirms what it did (topic metadata visible, records
acknowledged, topic gone) before it returns, so a test never races the broker; each wait has
a deadline and fails with a message that says what was awaited.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

__all__ = [
    "BackgroundProducer",
    "ConsumedRecord",
    "Record",
    "create_topic",
    "delete_topic",
    "produce",
    "read_all",
    "wait_for_topic",
]

Header = tuple[str, bytes | None]


@dataclass(frozen=True)
class Record:
    """A record to produce; ``None`` fields are left to the producer and the broker.

    Parameters
    ----------
    value
        The value; ``None`` produces a tombstone.
    key
        The key; ``None`` for none.
    headers
        ``(name, value)`` pairs in order; names may repeat, as Kafka allows.
    timestamp_ms
        Create time in milliseconds since the epoch; ``None`` (or 0, as librdkafka reads it)
        lets the producer use "now".
    partition
        Target partition; ``None`` lets the partitioner choose from the key.
    """

    value: bytes | None
    key: bytes | None = None
    headers: tuple[Header, ...] = ()
    timestamp_ms: int | None = None
    partition: int | None = None


@dataclass(frozen=True)
class ConsumedRecord:
    """A record as read back, with the position the broker gave it."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    timestamp_ms: int

    @property
    def position(self) -> tuple[int, int]:
        """``(partition, offset)``, the record's identity within its topic."""
        return (self.partition, self.offset)


def create_topic(
    bootstrap_servers: str,
    topic: str,
    partitions: int = 1,
    config: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
) -> None:
    """Create ``topic`` and return once every partition has a leader.

    Parameters
    ----------
    bootstrap_servers
        The broker to use.
    topic
        Name of the new topic.
    partitions
        Number of partitions.
    config
        Topic configs such as ``{"cleanup.policy": "compact"}``.
    timeout_s
        Deadline for the creation and for the metadata to show it.
    """
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    new_topic = NewTopic(
        topic, num_partitions=partitions, replication_factor=1, config=dict(config or {})
    )
    futures = admin.create_topics([new_topic], operation_timeout=timeout_s)
    futures[topic].result(timeout=timeout_s)
    wait_for_topic(bootstrap_servers, topic, partitions, timeout_s)


def wait_for_topic(
    bootstrap_servers: str, topic: str, partitions: int, timeout_s: float = 30.0
) -> None:
    """Wait until metadata shows ``topic`` with ``partitions`` partitions, each with a leader.

    Topic creation returns when the controller has recorded it; the broker may need a moment
    more before it serves the partitions, and a producer started in that moment fails.
    """
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    deadline = time.monotonic() + timeout_s
    seen = "no metadata"
    while time.monotonic() < deadline:
        metadata = admin.list_topics(topic=topic, timeout=max(0.1, deadline - time.monotonic()))
        described = metadata.topics.get(topic)
        if described is not None and described.error is None:
            leaders = [partition.leader for partition in described.partitions.values()]
            if len(leaders) == partitions and all(leader >= 0 for leader in leaders):
                return
            seen = f"{len(leaders)} partitions, leaders {sorted(leaders)}"
        elif described is not None:
            seen = str(described.error)
        time.sleep(0.05)
    msg = f"topic {topic!r} did not show {partitions} led partitions within {timeout_s} s: {seen}"
    raise TimeoutError(msg)


def produce(
    bootstrap_servers: str,
    topic: str,
    records: Iterable[Record],
    producer_config: Mapping[str, str | int | bool] | None = None,
    timeout_s: float = 30.0,
) -> list[tuple[int, int]]:
    """Produce ``records`` in order, flush, and return the ``(partition, offset)`` of each.

    The producer is idempotent with ``acks=all``, so a retry can neither reorder nor
    duplicate records and the returned positions are the only ones the records hold.

    Raises
    ------
    KafkaException
        If any record was not acknowledged, with the first delivery error.
    TimeoutError
        If the flush did not finish within ``timeout_s``.
    """
    config: dict[str, str | int | bool] = {
        "bootstrap.servers": bootstrap_servers,
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 5,
    }
    config.update(producer_config or {})
    producer = Producer(config)
    positions: list[tuple[int, int] | None] = []
    errors: list[KafkaError] = []

    def delivered(index: int) -> Callable[[KafkaError | None, Message], None]:
        def callback(error: KafkaError | None, message: Message) -> None:
            if error is not None:
                errors.append(error)
            else:
                positions[index] = (_known(message.partition()), _known(message.offset()))

        return callback

    for index, record in enumerate(records):
        positions.append(None)
        while True:
            try:
                producer.produce(
                    topic,
                    value=record.value,
                    key=record.key,
                    # librdkafka's "not given": the partitioner, and the current time.
                    partition=-1 if record.partition is None else record.partition,
                    timestamp=0 if record.timestamp_ms is None else record.timestamp_ms,
                    headers=list(record.headers) or None,
                    on_delivery=delivered(index),
                )
                break
            except BufferError:
                # The local queue is full: let deliveries drain it, then retry this record.
                producer.poll(0.1)
    remaining = producer.flush(timeout_s)
    if errors:
        raise KafkaException(errors[0])
    if remaining:
        msg = f"{remaining} records to {topic!r} were not acknowledged within {timeout_s} s"
        raise TimeoutError(msg)
    return [position for position in positions if position is not None]


def read_all(
    bootstrap_servers: str,
    topic: str,
    isolation_level: Literal["read_committed", "read_uncommitted"] = "read_committed",
    timeout_s: float = 30.0,
) -> list[ConsumedRecord]:
    """Read every partition of ``topic`` from its first offset to its current end.

    The end is where the broker reports end-of-partition: the high watermark, or under
    ``read_committed`` the last stable offset, after any aborted records and transaction
    markers. Records come back sorted by ``(partition, offset)``.
    """
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    described = admin.list_topics(topic=topic, timeout=timeout_s).topics[topic]
    if described.error is not None:
        raise KafkaException(described.error)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_servers,
            "group.id": f"read-all-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": isolation_level,
        }
    )
    try:
        partitions = sorted(described.partitions)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        at_end: set[int] = set()
        records: list[ConsumedRecord] = []
        deadline = time.monotonic() + timeout_s
        while len(at_end) < len(partitions):
            if time.monotonic() > deadline:
                missing = sorted(set(partitions) - at_end)
                msg = f"partitions {missing} of {topic!r} did not reach their end in {timeout_s} s"
                raise TimeoutError(msg)
            message = consumer.poll(0.2)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(_known(message.partition()))
                    continue
                raise KafkaException(error)
            records.append(
                ConsumedRecord(
                    partition=_known(message.partition()),
                    offset=_known(message.offset()),
                    key=message.key(),
                    value=message.value(),
                    headers=_headers(message.headers()),
                    timestamp_ms=message.timestamp()[1],
                )
            )
        return sorted(records, key=lambda record: record.position)
    finally:
        consumer.close()


def _headers(
    raw: list[tuple[str, str | bytes | None]] | dict[str, str | bytes | None] | None,
) -> tuple[Header, ...]:
    """Return headers as ``(name, bytes or None)`` pairs, in the order the record holds them."""
    pairs = list(raw.items()) if isinstance(raw, dict) else list(raw or ())
    return tuple(
        (name, value.encode() if isinstance(value, str) else value) for name, value in pairs
    )


def _known(number: int | None) -> int:
    """Narrow a partition or offset that librdkafka always sets on delivered records."""
    if number is None:
        msg = "a delivered record has no partition or offset"
        raise KafkaException(msg)
    return number


def delete_topic(bootstrap_servers: str, topic: str, timeout_s: float = 30.0) -> None:
    """Delete ``topic`` and wait until metadata no longer lists it."""
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    futures = admin.delete_topics([topic], operation_timeout=timeout_s)
    futures[topic].result(timeout=timeout_s)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if topic not in admin.list_topics(timeout=timeout_s).topics:
            return
        time.sleep(0.05)
    msg = f"topic {topic!r} was still listed {timeout_s} s after its deletion"
    raise TimeoutError(msg)


class BackgroundProducer:
    """Keeps producing to every partition of a topic from a thread until stopped.

    Used to show that stopping, rescaling and restarting a query loses and duplicates nothing
    while data keeps arriving. Bounded: at most ``max_records`` records, ``batch`` every
    ``interval_s``. ``positions`` holds the acknowledged ``(partition, offset)`` of each record.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        partitions: int,
        batch: int = 40,
        interval_s: float = 0.1,
        max_records: int = 200_000,
        config: Mapping[str, object] | None = None,
        flush_timeout_s: float = 30.0,
    ) -> None:
        import threading

        self._producer = Producer(
            {"bootstrap.servers": bootstrap_servers, "linger.ms": 5, **(config or {})}
        )
        self._flush_timeout_s = flush_timeout_s
        self._topic = topic
        self._partitions = partitions
        self._batch = batch
        self._interval_s = interval_s
        self._max_records = max_records
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._positions: list[tuple[int, int]] = []
        self._errors: list[KafkaError] = []
        self._thread = threading.Thread(target=self._run, name=f"produce-{topic}", daemon=True)

    def __enter__(self) -> BackgroundProducer:
        """Start producing in the background for the length of the block."""
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop producing even when the block failed, so no thread outlives the test."""
        self.stop()

    def _delivered(self, error: KafkaError | None, message: Message) -> None:
        with self._lock:
            if error is not None:
                self._errors.append(error)
            else:
                self._positions.append((message.partition(), message.offset()))

    def _run(self) -> None:
        sent = 0
        while not self._stop.is_set() and sent < self._max_records:
            for _ in range(self._batch):
                self._producer.produce(
                    self._topic,
                    value=b"bg-%d" % sent,
                    partition=sent % self._partitions,
                    on_delivery=self._delivered,
                )
                sent += 1
            self._producer.poll(0)
            self._stop.wait(self._interval_s)
        self._producer.flush(self._flush_timeout_s)

    def stop(self) -> list[tuple[int, int]]:
        """Stop, wait for every acknowledgement, and return all positions produced."""
        self._stop.set()
        self._thread.join(self._flush_timeout_s + 30)
        if self._errors:
            raise KafkaException(self._errors[0])
        return self.positions

    @property
    def positions(self) -> list[tuple[int, int]]:
        """The ``(partition, offset)`` of each record acknowledged so far, sorted."""
        with self._lock:
            return sorted(self._positions)


def consume_group(
    client_config: Mapping[str, str | int | bool],
    topic: str,
    count: int,
    group_id: str,
    timeout_s: float = 30.0,
) -> list[ConsumedRecord]:
    """Read ``count`` records of ``topic`` as member of ``group_id``, commit, and return them.

    ``client_config`` carries ``bootstrap.servers`` and any security settings, so the same
    helper reads through a SASL or TLS listener. The group starts from the earliest offset;
    offsets are committed synchronously once ``count`` records are in. Records come back
    sorted by ``(partition, offset)``.

    Raises
    ------
    KafkaException
        On the first error the consumer reports (authorization, authentication...).
    TimeoutError
        If fewer than ``count`` records arrive within ``timeout_s``.
    """
    consumer = Consumer(
        {
            **client_config,
            "group.id": group_id,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.subscribe([topic])
        records: list[ConsumedRecord] = []
        deadline = time.monotonic() + timeout_s
        while len(records) < count:
            if time.monotonic() > deadline:
                msg = f"{len(records)} of {count} records of {topic!r} arrived in {timeout_s} s"
                raise TimeoutError(msg)
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error() is not None:
                raise KafkaException(message.error())
            records.append(_consumed(message))
        consumer.commit(asynchronous=False)
        return sorted(records, key=lambda record: record.position)
    finally:
        consumer.close()


def _consumed(message: Message) -> ConsumedRecord:
    return ConsumedRecord(
        partition=_known(message.partition()),
        offset=_known(message.offset()),
        key=message.key(),
        value=message.value(),
        headers=_headers(message.headers()),
        timestamp_ms=message.timestamp()[1],
    )


def first_client_error(
    client_config: Mapping[str, str | int | bool], timeout_s: float = 30.0
) -> KafkaError:
    """Return the first error a client with ``client_config`` reports while connecting.

    For settings that must fail (a wrong password, an untrusted certificate): librdkafka
    reports those through its error callback, not as an exception, and then keeps retrying.

    Raises
    ------
    TimeoutError
        If the client reports no error within ``timeout_s``, e.g. because it connected.
    """
    errors: list[KafkaError] = []
    producer = Producer({**client_config, "error_cb": errors.append, "log_level": 0})
    deadline = time.monotonic() + timeout_s
    while not errors and time.monotonic() < deadline:
        producer.poll(0.1)
    if not errors:
        msg = f"no client error within {timeout_s} s"
        raise TimeoutError(msg)
    return errors[0]


def create_replicated_topic(
    bootstrap_servers: str,
    topic: str,
    partitions: int = 1,
    replication_factor: int = 3,
    config: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
) -> None:
    """Create ``topic`` with ``replication_factor`` replicas; return once every partition leads.

    :func:`create_topic` makes single-replica topics, which suit one broker; fault tests on a
    cluster need replicas to fail over to.
    """
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    new_topic = NewTopic(
        topic,
        num_partitions=partitions,
        replication_factor=replication_factor,
        config=dict(config or {}),
    )
    futures = admin.create_topics([new_topic], operation_timeout=timeout_s)
    futures[topic].result(timeout=timeout_s)
    wait_for_topic(bootstrap_servers, topic, partitions, timeout_s)


def first_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    """Return the first line ``process`` prints on stdout, waiting at most ``timeout_s``.

    For programs that announce readiness with a line and then run until signalled: a plain
    ``readline()`` would block forever on one that hangs before printing.

    Raises
    ------
    TimeoutError
        If no line comes in time, or stdout closes first; with what the process wrote on
        stderr (the process is killed first, so that reading stderr cannot block).
    """
    import queue
    import threading

    stdout, stderr = process.stdout, process.stderr
    assert stdout is not None and stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        line = lines.get(timeout=timeout_s)
    except queue.Empty:
        line = ""
    if not line:
        process.kill()
        msg = f"no line on stdout within {timeout_s} s; stderr:\n{stderr.read()}"
        raise TimeoutError(msg)
    return line
