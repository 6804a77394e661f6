"""SASL/OAUTHBEARER settings: Java names translated, what librdkafka would ignore refused."""

from __future__ import annotations

import pytest

from kafka_rescalable.config.kafka_config import redacted_settings, translate_kafka_settings
from kafka_rescalable.config.redaction import shown_by_spark
from kafka_rescalable.errors import InvalidOptionError, UnsupportedKafkaSettingError

OIDC = {
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "OAUTHBEARER",
    "sasl.oauthbearer.method": "oidc",
    "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
    "sasl.oauthbearer.client.id": "spark",
    "sasl.oauthbearer.client.secret": "s3cret-value",
    "sasl.oauthbearer.scope": "kafka",
}


def test_librdkafka_oidc_settings_pass_through_unchanged() -> None:
    settings = translate_kafka_settings(OIDC).settings
    assert settings["sasl.mechanisms"] == "OAUTHBEARER"
    for name in ("method", "token.endpoint.url", "client.id", "client.secret", "scope"):
        assert settings[f"sasl.oauthbearer.{name}"] == OIDC[f"sasl.oauthbearer.{name}"]


def test_the_java_jaas_line_and_kafka_4_1_names_become_librdkafka_names() -> None:
    jaas = (
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'clientId="spark" clientSecret="s3cret-value" scope="kafka";'
    )
    base = {k: v for k, v in OIDC.items() if not k.startswith("sasl.oauthbearer.client")}
    from_jaas = translate_kafka_settings({**base, "sasl.jaas.config": jaas}).settings
    java_41 = {
        **base,
        "sasl.oauthbearer.client.credentials.client.id": "spark",
        "sasl.oauthbearer.client.credentials.client.secret": "s3cret-value",
    }
    from_names = translate_kafka_settings(java_41).settings
    for settings in (from_jaas, from_names):
        assert settings["sasl.oauthbearer.client.id"] == "spark"
        assert settings["sasl.oauthbearer.client.secret"] == "s3cret-value"
        assert "sasl.jaas.config" not in settings


def test_the_java_login_handler_is_refused_with_the_librdkafka_way() -> None:
    java = {
        **OIDC,
        "sasl.login.callback.handler.class": (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
        ),
    }
    with pytest.raises(UnsupportedKafkaSettingError) as caught:
        translate_kafka_settings(java)
    text = str(caught.value)
    assert "kafka.sasl.login.callback.handler.class" in text
    assert "'kafka.sasl.oauthbearer.method' to 'oidc'" in text
    assert "kafkaTokenProvider" in text


def test_client_credentials_without_method_oidc_are_refused() -> None:
    java = {k: v for k, v in OIDC.items() if k != "sasl.oauthbearer.method"}
    with pytest.raises(InvalidOptionError) as caught:
        translate_kafka_settings(java)
    text = str(caught.value)
    assert "kafka.sasl.oauthbearer.method" in text and "Set it to 'oidc'" in text
    assert "s3cret-value" not in text


def test_unsecured_java_test_tokens_are_refused_naming_the_fields() -> None:
    jaas = (
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'unsecuredLoginStringClaim_sub="alice";'
    )
    with pytest.raises(UnsupportedKafkaSettingError, match="unsecuredLoginStringClaim_sub"):
        translate_kafka_settings({"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": jaas})


def test_the_client_secret_is_hidden_by_us_and_by_spark() -> None:
    assert redacted_settings(OIDC)["sasl.oauthbearer.client.secret"] == "***"
    options = {f"kafka.{k}": v for k, v in OIDC.items()}
    assert shown_by_spark(options) == []
