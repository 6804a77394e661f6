"""The local cluster: several real KRaft nodes that fail over, and secured listeners.

Clusters run one after the other, never two at once: first a single secured node for the
SASL, TLS and ACL tests (class-scoped, so it stops when the class is done), then a cluster
that must fail to start, then the 3-node ``kafka_cluster`` of
:mod:`integration_tests.kafka_fixtures` for readiness and fail-over, kept to the end.
"""

from __future__ import annotations

import re
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from integration_tests import kafka_fixtures
from integration_tests.kafka_fixtures import local_kafka_program
from integration_tests.kafka_helpers import (
    Record,
    consume_group,
    create_replicated_topic,
    create_topic,
    first_client_error,
    produce,
    read_all,
)
from kafka_rescalable.testing import LocalKafkaCluster, SecurityConfig
from kafka_rescalable.testing.errors import BrokerStartError

USERS = {"alice": "alice-secret", "bob": "bob-secret"}

# The shared 3-node cluster (see kafka_fixtures); conftest.py does not import it for everyone.
kafka_cluster_for_module = kafka_fixtures.kafka_cluster_for_module
kafka_cluster = kafka_fixtures.kafka_cluster


@pytest.fixture(scope="class")
def secured_cluster() -> Iterator[LocalKafkaCluster]:
    """One node with SASL_PLAINTEXT and SASL_SSL, PLAIN and SCRAM-SHA-512, and the authorizer."""
    security = SecurityConfig(users=USERS, authorizer=True)
    with LocalKafkaCluster(brokers=1, security=security) as cluster:
        yield cluster


def _values(count: int, prefix: str) -> list[bytes]:
    return [f"{prefix}-{i}".encode() for i in range(count)]


class TestSecuredListeners:
    """SASL logins on both listeners, TLS verification, and ACLs on one secured node."""

    @pytest.mark.parametrize(
        ("listener", "mechanism"),
        [("SASL_PLAINTEXT", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-512")],
    )
    def test_right_password_produces_and_consumes(
        self, secured_cluster: LocalKafkaCluster, topic_name: str, listener: str, mechanism: str
    ) -> None:
        """A user with the right password writes and reads through a secured listener."""
        create_topic(secured_cluster.bootstrap_servers, topic_name)
        config = secured_cluster.client_config(listener, user="admin", mechanism=mechanism)
        values = _values(5, listener)

        produce(
            config["bootstrap.servers"],
            topic_name,
            [Record(value=value) for value in values],
            producer_config=config,
        )
        consumed = consume_group(config, topic_name, len(values), f"g-{uuid.uuid4().hex}")

        assert [record.value for record in consumed] == values
        assert config["bootstrap.servers"] != secured_cluster.bootstrap_servers

    @pytest.mark.parametrize(
        ("listener", "mechanism"),
        [("SASL_PLAINTEXT", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-512")],
    )
    def test_wrong_password_fails_authentication(
        self, secured_cluster: LocalKafkaCluster, listener: str, mechanism: str
    ) -> None:
        """The broker really checks passwords: a wrong one is an authentication error."""
        config = secured_cluster.client_config(
            listener, user="alice", mechanism=mechanism, password="not-her-password"
        )

        error = first_client_error(config)

        assert error.code() == KafkaError._AUTHENTICATION, error
        assert "Authentication failed" in error.str()
        assert mechanism in error.str() or "Invalid username or password" in error.str()

    def test_tls_listener_needs_the_cluster_ca(self, secured_cluster: LocalKafkaCluster) -> None:
        """The SASL_SSL listener speaks real TLS: without our CA the certificate is rejected."""
        config = secured_cluster.client_config("SASL_SSL", user="alice")
        del config["ssl.ca.location"]

        error = first_client_error(config)

        assert error.code() == KafkaError._SSL, error
        assert "certificate verify failed" in error.str()
        assert secured_cluster.ca_path.read_text().startswith("-----BEGIN CERTIFICATE-----")

    def test_read_acl_decides_who_may_consume(
        self, secured_cluster: LocalKafkaCluster, topic_name: str
    ) -> None:
        """Under the authorizer, only a user granted READ on the topic can consume it."""
        create_topic(secured_cluster.bootstrap_servers, topic_name)
        values = _values(3, "acl")
        admin_config = secured_cluster.client_config("SASL_SSL", mechanism="SCRAM-SHA-512")
        produce(
            admin_config["bootstrap.servers"],
            topic_name,
            [Record(value=value) for value in values],
            producer_config=admin_config,
        )
        bob_group, alice_group = f"bob-{uuid.uuid4().hex}", f"alice-{uuid.uuid4().hex}"
        # Bob may join his group but not read the topic; Alice may do both.
        secured_cluster.allow_read("bob", group=bob_group)
        secured_cluster.allow_read("alice", topic=topic_name, group=alice_group)

        with pytest.raises(KafkaException) as denied:
            consume_group(
                secured_cluster.client_config("SASL_SSL", user="bob", mechanism="SCRAM-SHA-512"),
                topic_name,
                len(values),
                bob_group,
            )
        allowed = consume_group(
            secured_cluster.client_config("SASL_SSL", user="alice", mechanism="SCRAM-SHA-512"),
            topic_name,
            len(values),
            alice_group,
        )

        assert denied.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        assert [record.value for record in allowed] == values

    def test_unknown_listener_is_refused_with_the_choices(
        self, secured_cluster: LocalKafkaCluster
    ) -> None:
        """Asking for a listener the cluster does not have names the ones it has."""
        with pytest.raises(ValueError, match="PLAINTEXT, SASL_PLAINTEXT, SASL_SSL"):
            secured_cluster.bootstrap_for("SSL")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"listeners": ("SSL",)}, "listeners: 'SSL' is not one of SASL_PLAINTEXT, SASL_SSL"),
        ({"mechanisms": ()}, "mechanisms must name at least one of PLAIN"),
        ({"users": {"carol": "a,b"}}, "the password of 'carol'"),
        ({"users": {"bad name": "x"}}, "user name 'bad name'"),
        ({"users": {"admin": "x"}}, "is the admin user"),
    ],
)
def test_security_config_rejects_what_the_broker_could_not_carry(
    arguments: dict[str, object], message: str
) -> None:
    """Bad security choices fail at construction, naming the value, not at broker start."""
    with pytest.raises(ValueError, match=re.escape(message)):
        SecurityConfig(**arguments)  # type: ignore[arg-type]


def test_security_config_is_a_value() -> None:
    users = {"alice": "a-secret"}
    config = SecurityConfig(users=users)
    users["alice"] = "changed"

    assert config == SecurityConfig(users={"alice": "a-secret"})
    assert hash(config) == hash(SecurityConfig(users={"alice": "a-secret"}))
    assert config.password_of("alice") == "a-secret"
    assert config.format_arguments() == [
        "--add-scram",
        "SCRAM-SHA-512=[name=admin,password=admin-secret]",
        "--add-scram",
        "SCRAM-SHA-512=[name=alice,password=a-secret]",
    ]


def test_bad_setting_fails_with_every_node_stopped() -> None:
    """A cluster that cannot start raises the broker's own words and leaves no JVM behind."""
    cluster = LocalKafkaCluster(
        brokers=2, extra_properties={"authorizer.class.name": "no.such.Authorizer"}
    )

    with pytest.raises(BrokerStartError) as raised:
        cluster.start()

    assert "ClassNotFoundException" in raised.value.log_tail
    assert "no.such.Authorizer" in str(raised.value)
    assert cluster.live_node_ids == ()
    with pytest.raises(RuntimeError, match="not running"):
        _ = cluster.bootstrap_servers


def test_module_runs_a_cluster_until_signalled() -> None:
    """``python -m kafka_rescalable.testing.local_kafka --brokers 2``: two nodes, SIGTERM stops."""
    with local_kafka_program(
        "kafka_rescalable.testing.local_kafka", "--brokers", "2", ready_timeout_s=180
    ) as (process, line):
        match = re.fullmatch(
            r"Kafka ready at (127\.0\.0\.1:\d+,127\.0\.0\.1:\d+) "
            r"\(logs: (.+)/node-\*/server\.log\)",
            line.strip(),
        )
        assert match, line
        metadata = AdminClient({"bootstrap.servers": match.group(1)}).list_topics(timeout=10)
        data_dir = Path(match.group(2))
        assert sorted(metadata.brokers) == [1, 2]
        assert (data_dir / "node-2" / "server.log").is_file()

        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=90) == 0
        assert not data_dir.exists()


def test_three_nodes_are_ready_for_transactions_and_groups_at_once(
    kafka_cluster: LocalKafkaCluster, topic_name: str
) -> None:
    """Right after start, a transactional producer and a consumer group work first time."""
    bootstrap = kafka_cluster.bootstrap_servers
    create_replicated_topic(bootstrap, topic_name, partitions=3)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"tx-{topic_name}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for partition in range(3):
        producer.produce(topic_name, value=b"tx-%d" % partition, partition=partition)
    producer.commit_transaction(30)
    group = f"g-{uuid.uuid4().hex}"

    consumed = consume_group({"bootstrap.servers": bootstrap}, topic_name, 3, group)
    # One client for every request: a future of a client already garbage-collected never ends.
    admin = AdminClient({"bootstrap.servers": bootstrap})
    partitions = [TopicPartition(topic_name, p) for p in range(3)]
    committed = (
        admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group, partitions)])[group]
        .result(timeout=30)
        .topic_partitions
    )
    metadata = admin.list_topics(timeout=10)
    [offsets_config] = admin.describe_configs(
        [ConfigResource(ResourceType.TOPIC, "__consumer_offsets")]
    ).values()

    assert sorted(record.value for record in consumed) == [b"tx-0", b"tx-1", b"tx-2"]
    # Each partition holds the record at 0 and the commit marker at 1. The group commits its
    # position after the record: 1, or 2 if the consumer had already stepped over the marker.
    assert [tp.partition for tp in sorted(committed, key=lambda tp: tp.partition)] == [0, 1, 2]
    assert all(tp.offset in (1, 2) and tp.error is None for tp in committed), committed
    assert sorted(metadata.brokers) == list(kafka_cluster.node_ids) == [1, 2, 3]
    assert metadata.cluster_id == kafka_cluster.cluster_id
    for internal in ("__consumer_offsets", "__transaction_state"):
        state = kafka_cluster.partition_state(internal, 0)
        assert sorted(state.replicas) == [1, 2, 3]
    assert offsets_config.result(timeout=30)["min.insync.replicas"].value == "2"


def test_killed_leader_is_replaced_and_rejoins_on_its_data(
    kafka_cluster: LocalKafkaCluster, topic_name: str
) -> None:
    """SIGKILL the leader: a follower takes over, nothing is lost or doubled, it comes back."""
    bootstrap = kafka_cluster.bootstrap_servers
    create_replicated_topic(
        bootstrap, topic_name, partitions=2, config={"min.insync.replicas": "2"}
    )
    before = _values(50, "before")
    produce(bootstrap, topic_name, [Record(value=v, partition=0) for v in before])
    old_leader = kafka_cluster.leader_of(topic_name, 0)

    kafka_cluster.kill(old_leader)
    new_leader = kafka_cluster.wait_for_leader(topic_name, 0, other_than=old_leader)
    during = _values(50, "during")
    # acks=all with min ISR 2: acknowledged only once both survivors have each record.
    produce(bootstrap, topic_name, [Record(value=v, partition=0) for v in during])
    while_down = read_all(bootstrap, topic_name)

    kafka_cluster.restart(old_leader)
    after = _values(10, "after")
    produce(bootstrap, topic_name, [Record(value=v, partition=0) for v in after])
    state = kafka_cluster.partition_state(topic_name, 0)
    everything = read_all(bootstrap, topic_name)

    assert new_leader != old_leader and new_leader in kafka_cluster.node_ids
    assert [record.value for record in while_down] == before + during
    assert [record.value for record in everything] == before + during + after
    assert [record.offset for record in everything] == list(range(110))
    assert old_leader in state.isr and sorted(state.replicas) == [1, 2, 3]
    assert set(kafka_cluster.live_node_ids) == {1, 2, 3}


def test_stopped_leader_hands_over_and_comes_back(
    kafka_cluster: LocalKafkaCluster, topic_name: str
) -> None:
    """SIGTERM is a controlled shutdown: leadership moves, writes go on, the node returns."""
    bootstrap = kafka_cluster.bootstrap_servers
    create_replicated_topic(bootstrap, topic_name, config={"min.insync.replicas": "2"})
    old_leader = kafka_cluster.leader_of(topic_name, 0)

    kafka_cluster.stop_node(old_leader)
    new_leader = kafka_cluster.wait_for_leader(topic_name, 0, other_than=old_leader)
    values = _values(20, "stop")
    produce(bootstrap, topic_name, [Record(value=v) for v in values])
    live_while_stopped = kafka_cluster.live_node_ids
    kafka_cluster.restart(old_leader)

    assert new_leader != old_leader
    assert old_leader not in live_while_stopped and len(live_while_stopped) == 2
    assert old_leader in kafka_cluster.partition_state(topic_name, 0).isr
    assert [record.value for record in read_all(bootstrap, topic_name)] == values


def test_restart_refuses_a_running_node(kafka_cluster: LocalKafkaCluster) -> None:
    with pytest.raises(RuntimeError, match="is running"):
        kafka_cluster.restart(1)
    with pytest.raises(ValueError, match=r"no node 4; the nodes are \[1, 2, 3\]"):
        kafka_cluster.kill(4)
