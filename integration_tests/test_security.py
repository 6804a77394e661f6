"""Our source against a secured broker: SASL_SSL, SASL_PLAINTEXT and KRaft's authorizer.

SASL_SSL with SCRAM-SHA-512 and SASL_PLAINTEXT with PLAIN. Right credentials read; a wrong
password fails at once saying authentication failed; a principal without an ACL gets a
message naming the topic and the missing operation; no secret appears in any exception, log
line, query progress, ``explain``, checkpoint or event log.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from pyspark.sql import SparkSession

from integration_tests.docs_snippets import run_snippet
from integration_tests.kafka_helpers import Record, create_topic, produce
from integration_tests.secret_scan import query_texts
from integration_tests.spark_helpers import OUR_FORMAT
from kafka_rescalable.testing.local_cluster import LocalKafkaCluster
from kafka_rescalable.testing.security import SecurityConfig

ALICE_PASSWORD = "alice-Pw-7f3e9"  # noqa: S105 - a test password, grepped for below
BOB_PASSWORD = "bob-Pw-2c81d"  # noqa: S105
ADMIN_PASSWORD = "admin-Pw-90ab1"  # noqa: S105


@pytest.fixture(scope="module")
def secured() -> Iterator[LocalKafkaCluster]:
    """One broker with SASL_PLAINTEXT and SASL_SSL listeners and the authorizer on."""
    security = SecurityConfig(
        users={"alice": ALICE_PASSWORD, "bob": BOB_PASSWORD},
        admin_password=ADMIN_PASSWORD,
        mechanisms=("PLAIN", "SCRAM-SHA-512"),
        authorizer=True,
    )
    with LocalKafkaCluster(brokers=1, security=security) as cluster:
        yield cluster


def source_options(
    cluster: LocalKafkaCluster, listener: str, mechanism: str, user: str, password: str
) -> dict[str, str]:
    """Return the options a Spark user writes: Java client names, ``sasl.jaas.config`` too."""
    module = (
        "org.apache.kafka.common.security.plain.PlainLoginModule"
        if mechanism == "PLAIN"
        else "org.apache.kafka.common.security.scram.ScramLoginModule"
    )
    options = {
        "kafka.bootstrap.servers": cluster.bootstrap_for(listener),
        "kafka.security.protocol": listener,
        "kafka.sasl.mechanism": mechanism,
        "kafka.sasl.jaas.config": f'{module} required username="{user}" password="{password}";',
    }
    if listener == "SASL_SSL":
        options["kafka.ssl.truststore.location"] = str(cluster.ca_path)
        options["kafka.ssl.truststore.type"] = "PEM"
    return options


def filled_topic(cluster: LocalKafkaCluster, topic: str, readers: tuple[str, ...]) -> list:
    """Fill a topic with 20 records that ``readers`` may read (set up over PLAINTEXT)."""
    plaintext = cluster.bootstrap_for("PLAINTEXT")
    create_topic(plaintext, topic, partitions=2)
    positions = produce(plaintext, topic, [Record(value=b"s%d" % i) for i in range(20)])
    for user in readers:
        cluster.allow_read(user, topic=topic)
    return positions


@pytest.mark.parametrize(
    ("listener", "mechanism"), [("SASL_SSL", "SCRAM-SHA-512"), ("SASL_PLAINTEXT", "PLAIN")]
)
def test_right_credentials_read_every_record(
    spark: SparkSession, secured: LocalKafkaCluster, topic_name: str, listener: str, mechanism: str
) -> None:
    positions = filled_topic(secured, topic_name, readers=("alice",))
    options = source_options(secured, listener, mechanism, "alice", ALICE_PASSWORD)
    rows = (
        spark.read.format(OUR_FORMAT).options(**options).option("subscribe", topic_name).load()
    ).collect()
    assert sorted((r.partition, r.offset) for r in rows) == sorted(positions)


def error_of_batch_read(spark: SparkSession, options: dict[str, str], topic: str) -> str:
    """Return the text of the error a batch read fails with."""
    with pytest.raises(Exception) as caught:
        spark.read.format(OUR_FORMAT).options(**options).option("subscribe", topic).load().collect()
    return str(caught.value)


def test_the_security_pages_snippet_reads_over_sasl_ssl(
    spark: SparkSession, secured: LocalKafkaCluster, topic_name: str
) -> None:
    """docs/snippets/security.py, the code of the security page, on this broker."""
    positions = filled_topic(secured, topic_name, readers=("alice",))
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": secured.bootstrap_for("SASL_SSL"),
        "DOCS_TOPIC": topic_name,
        "DOCS_USER": "alice",
        "DOCS_PASSWORD": ALICE_PASSWORD,
        "DOCS_CA_FILE": str(secured.ca_path),
    }
    assert run_snippet("security.py", env)["secured_count"] == len(positions)


def test_a_wrong_password_fails_saying_authentication_failed(
    spark: SparkSession, secured: LocalKafkaCluster, topic_name: str
) -> None:
    filled_topic(secured, topic_name, readers=("alice",))
    wrong = "not-" + ALICE_PASSWORD
    options = source_options(secured, "SASL_SSL", "SCRAM-SHA-512", "alice", wrong)
    text = error_of_batch_read(spark, options, topic_name)
    assert "KafkaAuthenticationError" in text
    assert "authentication failed" in text
    assert "Check the user name and password" in text
    assert wrong not in text


def test_a_principal_without_describe_is_told_the_topic_and_permission(
    spark: SparkSession, secured: LocalKafkaCluster, topic_name: str
) -> None:
    filled_topic(secured, topic_name, readers=("alice",))  # not bob
    options = source_options(secured, "SASL_PLAINTEXT", "PLAIN", "bob", BOB_PASSWORD)
    options["assign"] = json.dumps({topic_name: [0]})  # subscribe would just see no topic
    with pytest.raises(Exception) as caught:
        spark.read.format(OUR_FORMAT).options(**options).load().collect()
    text = str(caught.value)
    assert "KafkaAuthorizationError" in text
    assert f"not authorized to DESCRIBE topic {topic_name}" in text
    assert "User:bob" in text


def test_a_principal_without_read_is_told_the_topic_and_permission(
    spark: SparkSession, secured: LocalKafkaCluster, topic_name: str
) -> None:
    filled_topic(secured, topic_name, readers=())
    secured.allow_read("bob", topic=topic_name, operations=("DESCRIBE",))
    options = source_options(secured, "SASL_PLAINTEXT", "PLAIN", "bob", BOB_PASSWORD)
    text = error_of_batch_read(spark, options, topic_name)
    assert "KafkaAuthorizationError" in text
    assert f"not authorized to READ topic {topic_name}" in text


def test_no_secret_appears_anywhere(secured: LocalKafkaCluster, topic_name: str, tmp_path: Path):
    filled_topic(secured, topic_name, readers=("alice",))
    options = source_options(secured, "SASL_SSL", "SCRAM-SHA-512", "alice", ALICE_PASSWORD)
    options.update({"subscribe": topic_name, "startingOffsets": "earliest"})
    for name, text in query_texts(options, tmp_path).items():
        for secret in (ALICE_PASSWORD, ADMIN_PASSWORD):
            assert secret not in text, f"a password appears in {name}"


def test_a_principal_without_describe_on_the_start_group_is_told_the_group(
    spark: SparkSession, secured: LocalKafkaCluster, topic_name: str
) -> None:
    positions = filled_topic(secured, topic_name, readers=("alice",))
    group = f"legacy-{topic_name}"
    # The application's commit, over PLAINTEXT (a super user's listener here).
    owner = Consumer({"bootstrap.servers": secured.bootstrap_for("PLAINTEXT"), "group.id": group})
    owner.commit(offsets=[TopicPartition(topic_name, 0, 3)], asynchronous=False)
    owner.close()
    options = source_options(secured, "SASL_PLAINTEXT", "PLAIN", "alice", ALICE_PASSWORD)
    options["startingOffsetsFromGroup"] = group
    text = error_of_batch_read(spark, options, topic_name)
    assert "KafkaAuthorizationError" in text
    assert f"not authorized to read the committed offsets of consumer group '{group}'" in text
    assert f"--operation DESCRIBE --group {group}" in text and "User:alice" in text

    secured.allow_read("alice", group=group, operations=("DESCRIBE",))
    rows = spark.read.format(OUR_FORMAT).options(**options).option("subscribe", topic_name).load()
    read = sorted((r.partition, r.offset) for r in rows.collect())
    assert read == sorted(p for p in positions if p[0] != 0 or p[1] >= 3)
