"""The client factory's logging and error recording, without a broker."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kafka_rescalable.config.options import parse_options
from kafka_rescalable.kafka_clients import ClientErrors, _RepeatFilter, executor_config


class FakeKafkaError:
    """Stands for confluent-kafka's KafkaError: only ``code`` and ``str`` are used."""

    def __init__(self, code: int, text: str) -> None:
        self._code, self._text = code, text

    def code(self) -> int:  # noqa: D102
        return self._code

    def str(self) -> str:  # noqa: D102
        return self._text


def record(text: str) -> logging.LogRecord:
    # As confluent-kafka logs: "%s [%s] %s" with facility, client name and message.
    return logging.LogRecord(
        "kafka_rescalable.librdkafka", logging.ERROR, __file__, 1, "%s [%s] %s",
        ("FAIL", "rdkafka#consumer-3", text), None,
    )


def test_repeated_connection_lines_pass_once_per_window_with_their_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr("kafka_rescalable.kafka_clients.time.monotonic", lambda: now[0])
    repeats = _RepeatFilter(window_s=30)
    line = "127.0.0.1:9092/1: Connect to 127.0.0.1:9092 failed: Connection refused (after {}ms)"
    passed = []
    for step in range(100):  # 20 lines a second for 5 s
        now[0] = 100.0 + step * 0.05
        item = record(line.format(step % 7))
        if repeats.filter(item):
            passed.append(item.getMessage())
    assert len(passed) == 1
    now[0] = 131.0
    item = record(line.format(3))
    assert repeats.filter(item)
    assert "(99 similar lines in the last 30 s)" in item.getMessage()


def test_librdkafka_own_repeat_count_does_not_make_a_line_new() -> None:
    repeats = _RepeatFilter(window_s=30)
    assert repeats.filter(record("Connect failed: Connection refused (after 0ms in state CONNECT)"))
    assert not repeats.filter(
        record(
            "Connect failed: Connection refused (after 0ms in state CONNECT, "
            "1 identical error(s) suppressed)"
        )
    )


def test_different_lines_are_not_held_back() -> None:
    repeats = _RepeatFilter(window_s=30)
    assert repeats.filter(record("broker 1 down"))
    assert repeats.filter(record("authentication failed"))


def test_client_errors_keep_the_last_error_and_any_authentication_failure() -> None:
    errors = ClientErrors()
    errors(FakeKafkaError(-195, "Connection refused"))
    assert errors.authentication is None
    errors(FakeKafkaError(58, "SASL authentication failed: Invalid credentials"))
    errors(FakeKafkaError(-187, "1/1 brokers are down"))
    assert errors.last.code() == -187
    assert errors.authentication.code() == 58


def test_an_oidc_providers_refusal_is_definitive_and_its_outage_is_not() -> None:
    errors = ClientErrors()
    errors(FakeKafkaError(-169, "Failed to acquire SASL OAUTHBEARER token: HTTP 503"))
    assert errors.authentication is not None and not errors.definitive
    refused = (
        'Failed to acquire SASL OAUTHBEARER token: {"error":"unauthorized_client",'
        '"error_description":"Invalid client or Invalid client credentials"}'
    )
    errors(FakeKafkaError(-169, refused))
    assert errors.definitive
    errors.clear()
    assert not errors.definitive


def test_executor_settings_are_picklable_and_default_to_read_uncommitted() -> None:
    import pickle

    options = parse_options(
        {"kafka.bootstrap.servers": "b:9092", "subscribe": "t"}, "stream"
    )
    config: dict[str, Any] = executor_config(options)
    assert pickle.loads(pickle.dumps(config)) == config
    assert config["isolation.level"] == "read_uncommitted"
    assert config["group.id"].startswith("spark-kafka-source-")
    assert config["group.id"].endswith("-executor")
