"""What a Kafka error means for a driver lookup: retry it, or give up with which advice.

Kept apart from the lookups themselves so that the classification (which codes a leader
change or a broker restart causes) and the messages users read are in one place.
"""

from __future__ import annotations

from typing import Any, Final

from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.errors import (
    KafkaAuthenticationError,
    KafkaAuthorizationError,
    KafkaMetadataError,
)

__all__ = [
    "authentication_failed",
    "gave_up",
    "group_not_authorized",
    "is_retriable",
    "kafka_error_of",
    "not_authorized",
]

_RETRIABLE_CODES: Final = frozenset(
    {
        -195,  # _TRANSPORT: a broker connection failed (killed, restarting, unreachable)
        -187,  # _ALL_BROKERS_DOWN
        -185,  # _TIMED_OUT
        -180,  # _WAIT_COORD
        5,  # LEADER_NOT_AVAILABLE: an election is under way
        6,  # NOT_LEADER_OR_FOLLOWER: our metadata names the old leader
        7,  # REQUEST_TIMED_OUT
        8,  # BROKER_NOT_AVAILABLE
        9,  # REPLICA_NOT_AVAILABLE
        13,  # NETWORK_EXCEPTION
        15,  # COORDINATOR_NOT_AVAILABLE
        16,  # NOT_COORDINATOR
        19,  # NOT_ENOUGH_REPLICAS
        56,  # KAFKA_STORAGE_ERROR
        74,  # FENCED_LEADER_EPOCH
        75,  # UNKNOWN_LEADER_EPOCH
        78,  # OFFSET_NOT_AVAILABLE: a new leader is not caught up yet
    }
)
"""Kafka errors that a leader change, a broker restart or an outage cause, and that go away
by themselves: retried until ``fetchOffset.retryTimeout``. librdkafka's own ``retriable()``
flag is also honoured, but it leaves out the transport errors a killed broker causes."""

_UNREACHABLE_CODES: Final = frozenset({-195, -187, -185, -193})


def is_retriable(error: Any) -> bool:
    """Whether a confluent-kafka ``KafkaError`` is a transient one (see ``_RETRIABLE_CODES``)."""
    if error is None or not hasattr(error, "code"):
        return False
    return error.code() in _RETRIABLE_CODES or bool(error.retriable())


def gave_up(
    options: KafkaSourceOptions,
    last: Any,
    what: str,
    exc: Exception,
    error: Any,
    attempts: int,
    elapsed_s: float,
) -> KafkaMetadataError:
    """Build the error of a lookup that failed for good: the last Kafka error, advice.

    ``last`` is the last error librdkafka reported through ``error_cb``, if any.
    """
    reason = str(exc)
    if error is not None and getattr(error, "code", lambda: None)() in _UNREACHABLE_CODES:
        if last is not None and str(last.str()) not in reason:
            reason = f"{reason} (last client error: {last.str()})"
        advice = (
            f"Check 'kafka.bootstrap.servers' ({options.bootstrap_servers}), that the "
            "brokers run and are reachable from the Spark driver, and the security settings"
        )
    elif is_retriable(error):
        advice = (
            "The partitions had no available leader for that long; check the brokers' "
            "health (kafka-topics --describe)"
        )
    else:
        advice = "Check the brokers' logs"
    msg = (
        f"could not {what} after {attempts} attempts in {elapsed_s:.0f} s: {reason}. "
        f"{advice}, or raise 'fetchOffset.retryTimeout' "
        f"({options.fetch_offset_retry_timeout_ms // 1000} s) to wait longer"
    )
    return KafkaMetadataError(msg, error if error is not None else exc)


def kafka_error_of(exc: Exception) -> Any:
    """Return the confluent-kafka ``KafkaError`` inside an exception, if any."""
    if isinstance(exc, KafkaMetadataError):
        return exc.kafka_error
    if exc.args and hasattr(exc.args[0], "code"):
        return exc.args[0]
    return None


def authentication_failed(error: Any, options: KafkaSourceOptions) -> KafkaAuthenticationError:
    """Explain credentials the brokers refused, naming the settings to check."""
    protocol = options.kafka_settings.get("security.protocol", "PLAINTEXT")
    mechanism = options.kafka_settings.get("sasl.mechanisms", "")
    if mechanism.strip().upper() == "OAUTHBEARER":
        check = (
            "Check the OAuth client ('kafka.sasl.oauthbearer.client.id', "
            "'kafka.sasl.oauthbearer.client.secret', 'kafka.sasl.oauthbearer.token.endpoint.url',"
            " 'kafka.sasl.oauthbearer.scope') or the token provider ('kafkaTokenProvider'), "
            "and that the brokers trust the provider that signs the tokens"
        )
    else:
        check = (
            "Check the user name and password ('kafka.sasl.jaas.config' or "
            "'kafka.sasl.username' / 'kafka.sasl.password') and the mechanism"
        )
    msg = (
        f"authentication failed against {options.bootstrap_servers} "
        f"(security.protocol={protocol}{', sasl.mechanism=' + mechanism if mechanism else ''}): "
        f"{error.str()}. {check}"
    )
    return KafkaAuthenticationError(msg, error)


def not_authorized(
    topics: list[str], operation: str, options: KafkaSourceOptions
) -> KafkaAuthorizationError:
    """Explain a missing ACL, with the ``kafka-acls`` command that grants it."""
    user = options.kafka_settings.get("sasl.username")
    who = f"User:{user}" if user else "the connector's principal"
    names = ", ".join(topics)
    msg = (
        f"not authorized to {operation} topic {names}: {who} lacks the {operation} permission. "
        f"Grant it, e.g. kafka-acls --add --allow-principal {who if user else 'User:<name>'} "
        f"--operation {operation} --topic {topics[0]}"
    )
    return KafkaAuthorizationError(msg, topics, operation)


def group_not_authorized(group: str, options: KafkaSourceOptions) -> KafkaAuthorizationError:
    """Explain a missing ``DESCRIBE`` ACL on the group ``startingOffsetsFromGroup`` names."""
    user = options.kafka_settings.get("sasl.username")
    who = f"User:{user}" if user else "the connector's principal"
    msg = (
        f"not authorized to read the committed offsets of consumer group '{group}' "
        f"('startingOffsetsFromGroup'): {who} lacks the DESCRIBE permission on the group. "
        f"Grant it, e.g. kafka-acls --add --allow-principal {who if user else 'User:<name>'} "
        f"--operation DESCRIBE --group {group}"
    )
    return KafkaAuthorizationError(msg, (), "DESCRIBE")
