"""librdkafka validation of pass-through settings happens on the driver, naming the option."""

from __future__ import annotations

import pytest

from kafka_rescalable.config.kafka_config import check_client_accepts, translate_kafka_settings
from kafka_rescalable.errors import InvalidOptionError


def test_unknown_setting_is_named() -> None:
    with pytest.raises(InvalidOptionError) as caught:
        check_client_accepts({"bootstrap.servers": "127.0.0.1:1", "no.such.setting": "1"})
    assert caught.value.option == "kafka.no.such.setting"


def test_bad_value_is_named() -> None:
    with pytest.raises(InvalidOptionError) as caught:
        check_client_accepts({"bootstrap.servers": "127.0.0.1:1", "isolation.level": "sometimes"})
    assert caught.value.option == "kafka.isolation.level"


def test_valid_settings_pass() -> None:
    check_client_accepts({"bootstrap.servers": "127.0.0.1:1", "isolation.level": "read_committed"})


def test_empty_endpoint_identification_means_none() -> None:
    translated = translate_kafka_settings({"ssl.endpoint.identification.algorithm": ""})
    assert translated.settings == {"ssl.endpoint.identification.algorithm": "none"}


def test_secret_settings_are_redacted_from_the_parsed_options_repr() -> None:
    from kafka_rescalable.config.options import parse_options

    options = parse_options(
        {
            "kafka.bootstrap.servers": "b:9093",
            "subscribe": "t",
            "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required "
                'username="alice" password="s3cr3t-pw";'
            ),
            "kafka.ssl.key.password": "key-pw-9",
            "kafka.sasl.oauthbearer.config": "principal=x secret=oauth-7",
        },
        "stream",
    )
    text = repr(options)
    for secret in ("s3cr3t-pw", "key-pw-9", "oauth-7"):
        assert secret not in text
    assert "'sasl.username': 'alice'" in text
    assert "'sasl.password': '***'" in text
    assert options.kafka_settings["sasl.password"] == "s3cr3t-pw"  # only the repr hides it

    from kafka_rescalable.task import read_settings

    settings = read_settings(options)
    assert "s3cr3t-pw" not in repr(settings)
    assert "'sasl.password': '***'" in repr(settings)
    assert settings.consumer_config["sasl.password"] == "s3cr3t-pw"

