"""The embedded broker: it starts, serves real Kafka semantics, fails loudly, and caches jars.

These tests use :class:`LocalKafka` directly, not the ``kafka_bootstrap`` fixture, because
what they test is the local broker itself, whatever broker the rest of the suite runs on.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from integration_tests.docs_snippets import run_snippet
from integration_tests.kafka_fixtures import local_kafka_program
from integration_tests.kafka_helpers import (
    Record,
    create_topic,
    delete_topic,
    produce,
    read_all,
)
from kafka_rescalable.testing import jars
from kafka_rescalable.testing.jars import KAFKA_BROKER_COORDINATES, resolve_jars
from kafka_rescalable.testing.local_kafka import BrokerStartError, LocalKafka


@pytest.fixture(scope="module")
def local_kafka() -> Iterator[LocalKafka]:
    """One broker for the tests below that only need a running broker."""
    with LocalKafka() as kafka:
        yield kafka


def test_session_fixture_gives_a_broker_without_auto_created_topics(
    kafka_bootstrap: str, topic_name: str
) -> None:
    """Whichever broker the fixture chose, it answers and has the settings tests rely on."""
    create_topic(kafka_bootstrap, topic_name, partitions=3)
    positions = produce(kafka_bootstrap, topic_name, [Record(value=b"v", partition=2)])

    assert positions == [(2, 0)]
    assert [r.value for r in read_all(kafka_bootstrap, topic_name)] == [b"v"]
    assert topic_name.startswith("t-") and len(topic_name) == 34


def test_round_trip_keeps_keys_values_headers_and_timestamps(
    local_kafka: LocalKafka, topic_name: str
) -> None:
    """Every field of a record, including repeated and null headers, comes back as sent."""
    bootstrap = local_kafka.bootstrap_servers
    assert re.fullmatch(r"127\.0\.0\.1:\d+", bootstrap)
    create_topic(bootstrap, topic_name, partitions=2)
    records = [
        Record(
            value=f"v{i}".encode(),
            key=f"k{i}".encode(),
            headers=(("h", f"{i}".encode()), ("h", None), ("other", b"")),
            timestamp_ms=1_700_000_000_000 + i,
            partition=i % 2,
        )
        for i in range(10)
    ]
    records.append(Record(value=None, key=b"tombstone", partition=0, timestamp_ms=1))

    positions = produce(bootstrap, topic_name, records)
    consumed = read_all(bootstrap, topic_name)

    assert [record.position for record in consumed] == sorted(positions)
    by_position = dict(zip(positions, records, strict=True))
    for got in consumed:
        sent = by_position[got.position]
        assert (got.key, got.value, got.headers, got.timestamp_ms) == (
            sent.key,
            sent.value,
            sent.headers,
            sent.timestamp_ms,
        )
    assert {position[0] for position in positions} == {0, 1}

    delete_topic(bootstrap, topic_name)
    assert topic_name not in AdminClient({"bootstrap.servers": bootstrap}).list_topics().topics


def test_aborted_transaction_is_invisible_under_read_committed(
    local_kafka: LocalKafka, topic_name: str
) -> None:
    """Transactions work on one broker: the internal topic's replication factor fits it."""
    bootstrap = local_kafka.bootstrap_servers
    create_topic(bootstrap, topic_name, partitions=1)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"tx-{topic_name}"})
    producer.init_transactions(30)
    for values, commit in (([b"c1", b"c2"], True), ([b"a1", b"a2", b"a3"], False), ([b"c3"], True)):
        producer.begin_transaction()
        for value in values:
            producer.produce(topic_name, value=value)
        if commit:
            producer.commit_transaction(30)
        else:
            # Flushed first: an abort discards records still queued in the client, and the
            # test is about records the broker wrote and then hid.
            assert producer.flush(30) == 0
            producer.abort_transaction(30)

    committed = read_all(bootstrap, topic_name, isolation_level="read_committed")
    everything = read_all(bootstrap, topic_name, isolation_level="read_uncommitted")

    assert [record.value for record in committed] == [b"c1", b"c2", b"c3"]
    assert [record.value for record in everything] == [b"c1", b"c2", b"a1", b"a2", b"a3", b"c3"]
    # Commit and abort markers take offsets too: c1, c2, marker, a1..a3, marker, c3, marker.
    assert [record.offset for record in committed] == [0, 1, 7]


def test_compacted_topic_is_compacted_within_seconds(
    local_kafka: LocalKafka, topic_name: str
) -> None:
    """The short cleaner backoff lets compaction tests finish in seconds, not minutes."""
    bootstrap = local_kafka.bootstrap_servers
    create_topic(
        bootstrap,
        topic_name,
        config={
            "cleanup.policy": "compact",
            "segment.ms": "100",
            "min.cleanable.dirty.ratio": "0.01",
        },
    )
    produce(bootstrap, topic_name, [Record(value=f"{i}".encode(), key=b"same") for i in range(5)])
    deadline = time.monotonic() + 30
    while True:
        # Only closed segments are cleaned, and a segment closes on the first append after
        # segment.ms: keep appending (other keys) until the cleaner has done its work.
        time.sleep(0.2)
        produce(bootstrap, topic_name, [Record(value=b"x", key=b"filler")])
        same = [r for r in read_all(bootstrap, topic_name) if r.key == b"same"]
        if [r.value for r in same] == [b"4"]:
            break
        assert time.monotonic() < deadline, f"not compacted within 30 s: {same}"


def test_retention_deletes_expired_segments_within_seconds(
    local_kafka: LocalKafka, topic_name: str
) -> None:
    """The fast retention check lets retention tests finish in seconds, not minutes."""
    bootstrap = local_kafka.bootstrap_servers
    create_topic(bootstrap, topic_name, config={"retention.ms": "500", "segment.ms": "100"})
    produce(bootstrap, topic_name, [Record(value=f"{i}".encode()) for i in range(3)])
    deadline = time.monotonic() + 30
    while True:
        time.sleep(0.2)
        produce(bootstrap, topic_name, [Record(value=b"later")])
        remaining = read_all(bootstrap, topic_name)
        if remaining and remaining[0].offset > 0:
            break
        assert time.monotonic() < deadline, "no segment was deleted within 30 s"


def test_old_timestamps_are_not_deleted_by_default_retention(
    local_kafka: LocalKafka, topic_name: str
) -> None:
    """Records with old timestamps survive: retention is off unless a topic sets it."""
    bootstrap = local_kafka.bootstrap_servers
    create_topic(bootstrap, topic_name, config={"segment.ms": "100"})
    produce(bootstrap, topic_name, [Record(value=b"old", timestamp_ms=1_000)])
    time.sleep(2.5)  # two retention checks, and a segment roll on the next append
    produce(bootstrap, topic_name, [Record(value=b"new")])

    assert [r.value for r in read_all(bootstrap, topic_name)] == [b"old", b"new"]


def test_auto_topic_creation_is_off(local_kafka: LocalKafka, topic_name: str) -> None:
    """Producing to a missing topic fails instead of creating it with default settings."""
    producer = Producer(
        {"bootstrap.servers": local_kafka.bootstrap_servers, "message.timeout.ms": 2000}
    )
    errors = []
    producer.produce(topic_name, value=b"x", on_delivery=lambda error, _: errors.append(error))
    producer.flush(10)

    assert len(errors) == 1 and errors[0] is not None


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        # Fails when the controller starts: the broker process itself exits.
        ({"authorizer.class.name": "no.such.Authorizer"}, "ClassNotFoundException"),
        # Fails earlier, when the storage is formatted.
        ({"num.network.threads": "0"}, "Invalid value 0 for configuration num.network.threads"),
    ],
)
def test_bad_setting_fails_with_the_broker_log(properties: dict[str, str], expected: str) -> None:
    """A broker that cannot start says why, in the error itself, and leaves no process."""
    kafka = LocalKafka(extra_properties=properties, start_timeout_s=60)

    with pytest.raises(BrokerStartError) as raised:
        kafka.start()

    assert expected in raised.value.log_tail
    assert expected in str(raised.value)
    assert "command: " in str(raised.value)
    assert raised.value.command and raised.value.command[0].endswith("java")
    assert not kafka.is_running


def test_taken_port_fails_instead_of_retrying() -> None:
    """A port the caller chose is not silently replaced by another one."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        kafka = LocalKafka(port=taken.getsockname()[1])
        with pytest.raises(BrokerStartError, match="Address already in use"):
            kafka.start()


def test_stop_deletes_the_data_folder_unless_kept() -> None:
    """Stopping twice is harmless, and a stopped broker leaves nothing in /tmp."""
    kafka = LocalKafka()
    kafka.start()
    data_dir = kafka.data_dir
    assert kafka.log_path.is_file()
    kafka.stop()
    kafka.stop()  # a second stop does nothing

    assert not data_dir.exists()
    with pytest.raises(RuntimeError):
        _ = kafka.bootstrap_servers


def test_the_testing_pages_snippet_runs_a_broker_of_its_own() -> None:
    """docs/snippets/local_kafka.py, as a user's test would run it: start, use, stop."""
    found = run_snippet("local_kafka.py", {})
    assert "shop-events" in found["topics"]
    with pytest.raises(RuntimeError):  # stopped at the end of its block
        _ = found["kafka"].bootstrap_servers


def test_jar_cache_is_reused_without_running_a_resolver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once resolved, jars come from the cache without running Ivy or touching the network."""
    monkeypatch.setenv(jars.CACHE_ENV_VAR, str(tmp_path))
    coordinates = ["org.slf4j:slf4j-api:1.7.36"]
    first = resolve_jars(coordinates)
    assert [jar.name for jar in first] == ["slf4j-api-1.7.36.jar"]
    assert first[0].is_relative_to(tmp_path / "jars")
    assert (first[0].parent / "resolved.json").is_file()

    def no_subprocess(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cached resolution must not start a process")

    # On the module itself: whichever helper would start Ivy, it goes through these.
    monkeypatch.setattr(subprocess, "run", no_subprocess)
    monkeypatch.setattr(subprocess, "Popen", no_subprocess)

    assert resolve_jars(coordinates) == first
    assert resolve_jars(list(reversed(coordinates * 2))) == first  # order and repeats ignored
    # The broker's jars, resolved by the module fixture's first start, are cached the same way.
    monkeypatch.delenv(jars.CACHE_ENV_VAR)
    assert len(resolve_jars(KAFKA_BROKER_COORDINATES)) > 40


def test_unknown_artifact_raises_jar_resolution_error(tmp_path: Path) -> None:
    """A failed resolution names the artifact and records nothing in the cache."""
    with pytest.raises(jars.JarResolutionError, match="no-such-artifact"):
        resolve_jars(["org.example.nothing:no-such-artifact:0.0.1"], tmp_path)
    assert not (tmp_path / "resolved.json").exists()


def test_runs_that_disagree_on_a_revision_keep_the_highest(tmp_path: Path) -> None:
    """One Ivy run per coordinate: where two retrieve one artifact, the highest revision wins."""
    layout = {
        "0": ["org.a/lib/1.0-rc1", "org.a/lib/1.0", "org.b/solo/2.9"],
        "1": ["org.a/lib/1.0.1", "org.b/solo/2.10", "org.c/other/1.0"],
    }
    for run, folders in layout.items():
        for folder in folders:
            path = tmp_path / run / folder
            path.mkdir(parents=True)
            (path / f"{path.parent.name}-{path.name}.jar").touch()

    chosen = jars._highest_revisions([tmp_path / "0", tmp_path / "1"])

    assert sorted(jar.name for jar in chosen) == ["lib-1.0.1.jar", "other-1.0.jar", "solo-2.10.jar"]
    assert jars._is_newer("1.0", "1.0-rc1") and not jars._is_newer("1.0-rc1", "1.0")


def test_fresh_resolution_gives_the_cached_jars_and_they_run_a_broker(tmp_path: Path) -> None:
    """Ivy, run again into an empty folder, gives the classpath the cache holds, and it runs."""
    cached = resolve_jars(KAFKA_BROKER_COORDINATES)
    fresh = resolve_jars(KAFKA_BROKER_COORDINATES, tmp_path / "ivy", tool="ivy")

    assert [jar.name for jar in fresh] == [jar.name for jar in cached]
    with LocalKafka(jars_cache_dir=tmp_path / "ivy", class_data_sharing=False) as kafka:
        metadata = AdminClient({"bootstrap.servers": kafka.bootstrap_servers}).list_topics(
            timeout=10
        )
        assert len(metadata.brokers) == 1


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_module_runs_a_broker_until_signalled(stop_signal: signal.Signals) -> None:
    """The kept ``python -m kafka_rescalable.local_kafka`` prints its address, stops on a signal."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with local_kafka_program(
        "kafka_rescalable.local_kafka", "--port", str(port), ready_timeout_s=120
    ) as (
        process,
        line,
    ):
        match = re.fullmatch(r"Kafka ready at (127\.0\.0\.1:(\d+)) \(logs: (.+)\)", line.strip())
        assert match, line
        assert int(match.group(2)) == port
        log_path = Path(match.group(3))
        assert log_path.is_file()
        metadata = AdminClient({"bootstrap.servers": match.group(1)}).list_topics(timeout=10)
        assert len(metadata.brokers) == 1

        process.send_signal(stop_signal)
        assert process.wait(timeout=60) == 0
        assert not log_path.parent.exists()
