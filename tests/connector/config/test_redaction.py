"""Which secret options Spark's default redaction prints, and the warning about them.

``integration_tests/test_avro_records.py`` checks the same list against the plan real Spark
prints.
"""

from __future__ import annotations

import logging

import pytest

from kafka_rescalable.config import redaction
from kafka_rescalable.config.redaction import shown_by_spark, warn_shown_by_spark

OPTIONS = {
    "kafka.bootstrap.servers": "b:9092",
    "schema.registry.url": "https://alice:pw@registry:8081",
    "schema.registry.basic.auth.user.info": "alice:pw",
    "schema.registry.bearer.auth.token": "t0k",
    "kafka.sasl.password": "pw",
    "kafka.sasl.jaas.config": 'x.PlainLoginModule required username="u" password="pw";',
    "kafka.ssl.key.pem": "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----",
    "kafka.sasl.oauthbearer.config": "scope=read principal=svc",
    "kafka.sasl.username": "alice",
    "valueFormat": "avro",
}


def test_spark_prints_the_secrets_its_default_patterns_miss() -> None:
    assert shown_by_spark(OPTIONS) == [
        "kafka.sasl.oauthbearer.config",
        "kafka.ssl.key.pem",
        "schema.registry.basic.auth.user.info",
    ]


def test_a_value_spark_matches_is_hidden_whatever_the_name() -> None:
    assert shown_by_spark({"kafka.sasl.oauthbearer.config": "clientSecret=x"}) == []
    assert shown_by_spark({"Schema.Registry.Basic.Auth.User.Info": "a:b"}) == [
        "schema.registry.basic.auth.user.info"
    ]


def test_the_warning_names_the_option_and_the_way_out_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redaction, "_warned", set())
    connector_logger = logging.getLogger("kafka_rescalable")  # it does not propagate
    connector_logger.addHandler(caplog.handler)
    try:
        warn_shown_by_spark(OPTIONS)
        warn_shown_by_spark(OPTIONS)
    finally:
        connector_logger.removeHandler(caplog.handler)
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 3
    user_info = next(m for m in messages if "basic.auth.user.info" in m)
    assert "schema.registry.url" in user_info and "spark.sql.redaction.options.regex" in user_info
    assert "alice:pw" not in "".join(messages)
