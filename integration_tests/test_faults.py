"""Broker faults under a running query, on a real 3-node KRaft cluster.

Each scenario runs a live producer (``acks=all``, idempotent) into a topic with replication
factor 3 and ``min.insync.replicas=2``, a query writing to a Parquet sink (exactly once by its
own log), and a fault on a seeded schedule. At the end every acknowledged
``(partition, offset)`` must be in the sink exactly once, and the running query must have
gone on by itself (no restart), except where the scenario restarts it on purpose.

The longer scenarios (repeated kills, rescaling on a standalone cluster, memory) live in the
soak run, ``python -m integration_tests.soak``; see RELIABILITY.md.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from integration_tests import kafka_fixtures
from integration_tests.fault_helpers import SafeProducer, exactly_once_report
from integration_tests.kafka_helpers import create_replicated_topic
from integration_tests.spark_helpers import (
    BUILTIN_FORMAT,
    OUR_FORMAT,
    committed_batches,
    read_positions,
    start_parquet_stream,
    start_until_batches,
    wait_until,
)
from kafka_rescalable.testing.local_cluster import LocalKafkaCluster

PARTITIONS = 4


kafka_cluster_for_module = kafka_fixtures.kafka_cluster_for_module
kafka_cluster = kafka_fixtures.kafka_cluster


@pytest.fixture
def cluster_topic(kafka_cluster: LocalKafkaCluster, topic_name: str) -> str:
    """Return a topic that survives one broker: three replicas, two in sync for a write."""
    create_replicated_topic(
        kafka_cluster.bootstrap_servers,
        topic_name,
        partitions=PARTITIONS,
        config={"min.insync.replicas": "2"},
    )
    return topic_name


def assert_exactly_once(spark: SparkSession, output: Path, produced: list[tuple[int, int]]) -> None:
    """Every acknowledged record is in the sink, and none twice."""
    missing, twice = exactly_once_report(produced, read_positions(spark, output))
    assert not twice, f"{len(twice)} records written twice, e.g. {twice[:5]}"
    assert not missing, f"{len(missing)} records never written, e.g. {missing[:5]}"


def drain(
    spark: SparkSession, query: StreamingQuery, output: Path, produced: list[tuple[int, int]]
) -> None:
    """Wait until the running query has written every acknowledged record, or has failed."""

    def caught_up() -> bool:
        if query.exception() is not None:
            raise AssertionError(f"the query failed: {query.exception()}")
        return output.exists() and len(read_positions(spark, output)) >= len(produced)

    wait_until(caught_up, "the query to read every record", timeout_s=240, interval_s=2)


def run_with_fault(
    spark: SparkSession,
    cluster: LocalKafkaCluster,
    topic: str,
    tmp_path: Path,
    fault,
    fmt: str = OUR_FORMAT,
) -> list[tuple[int, int]]:
    """Run producer and query, ``fault(cluster)`` in the middle, then drain and check."""
    output, checkpoint = tmp_path / f"out-{fmt}", tmp_path / f"checkpoint-{fmt}"
    bootstrap = cluster.bootstrap_servers
    with SafeProducer(bootstrap, topic, PARTITIONS) as producer:

        def start() -> StreamingQuery:
            if fmt == OUR_FORMAT:
                return start_parquet_stream(spark, bootstrap, topic, output, checkpoint)
            return (
                spark.readStream.format(fmt)
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic)
                .option("startingOffsets", "earliest")
                .load()
                .select("partition", "offset")
                .writeStream.format("parquet")
                .option("path", str(output))
                .option("checkpointLocation", str(checkpoint))
                .trigger(processingTime="500 milliseconds")
                .start()
            )

        query = start_until_batches(start, checkpoint, 2, "two batches before the fault")
        try:
            fault(cluster)
            produced = producer.stop()
            drain(spark, query, output, produced)
            assert query.isActive, "the query went on by itself"
        finally:
            query.stop()
    assert_exactly_once(spark, output, produced)
    return produced


def kill_a_leader(seed: int):
    """Return a fault: SIGKILL a seeded partition's leader, let the cluster elect, restart it."""

    def fault(cluster: LocalKafkaCluster, topic: str) -> None:
        rng = random.Random(seed)
        partition = rng.randrange(PARTITIONS)
        leader = cluster.leader_of(topic, partition)
        time.sleep(rng.uniform(0.5, 2.0))  # part of the schedule: where in a batch it lands
        cluster.kill(leader)
        time.sleep(rng.uniform(8.0, 12.0))  # past the broker session timeout: a new leader
        cluster.restart(leader)

    return fault


@pytest.mark.parametrize("fmt", [OUR_FORMAT, BUILTIN_FORMAT])
def test_leader_killed_mid_stream(
    spark: SparkSession,
    kafka_cluster: LocalKafkaCluster,
    cluster_topic: str,
    tmp_path: Path,
    fmt: str,
) -> None:
    fault = kill_a_leader(seed=12)
    produced = run_with_fault(
        spark, kafka_cluster, cluster_topic, tmp_path, lambda c: fault(c, cluster_topic), fmt
    )
    assert len(produced) > 1000


@pytest.mark.parametrize("fmt", [OUR_FORMAT, BUILTIN_FORMAT])
def test_rolling_restart_of_all_brokers(
    spark: SparkSession,
    kafka_cluster: LocalKafkaCluster,
    cluster_topic: str,
    tmp_path: Path,
    fmt: str,
) -> None:
    def roll(cluster: LocalKafkaCluster) -> None:
        for node in cluster.node_ids:
            cluster.stop_node(node)  # controlled shutdown, as an operator's rolling restart
            cluster.restart(node)

    produced = run_with_fault(spark, kafka_cluster, cluster_topic, tmp_path, roll, fmt)
    assert len(produced) > 1000


def test_broker_bounce_while_the_query_rescales(
    spark: SparkSession, kafka_cluster: LocalKafkaCluster, cluster_topic: str, tmp_path: Path
) -> None:
    output, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    bootstrap = kafka_cluster.bootstrap_servers
    rng = random.Random(7)
    with SafeProducer(bootstrap, cluster_topic, PARTITIONS) as producer:
        for parallelism, bounce in (("2", False), ("5", True), ("1", False), ("3", True)):
            query = start_parquet_stream(
                spark, bootstrap, cluster_topic, output, checkpoint, parallelism=parallelism
            )
            try:
                done = committed_batches(checkpoint)
                wait_until(lambda d=done: committed_batches(checkpoint) >= d + 2, "two batches")
                if bounce:
                    node = rng.choice(kafka_cluster.node_ids)
                    kafka_cluster.kill(node)
                    done = committed_batches(checkpoint)
                    wait_until(
                        lambda d=done: committed_batches(checkpoint) >= d + 2,
                        "two batches with a broker down",
                    )
                    kafka_cluster.restart(node)
                assert query.exception() is None
            finally:
                query.stop()
        produced = producer.stop()
    query = start_parquet_stream(spark, bootstrap, cluster_topic, output, checkpoint)
    try:
        drain(spark, query, output, produced)
    finally:
        query.stop()
    assert_exactly_once(spark, output, produced)
