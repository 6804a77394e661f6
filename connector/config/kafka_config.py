"""Translate Spark users' ``kafka.*`` settings (Java client names) into librdkafka's.

Most settings share a name in both clients and pass through unchanged; librdkafka itself
rejects names it does not know, and :func:`check_client_accepts` turns that rejection into an
error that names the option. A few Java settings have a librdkafka twin under another name or
form, and a few only make sense inside a JVM: those fail here with the librdkafka way to get the
same effect.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_rescalable.config.oauthbearer import (
    JAVA_OIDC_NAMES,
    check_oidc_method,
    is_oauthbearer_jaas,
    login_handler_refusal,
    translate_oauthbearer_jaas,
)
from kafka_rescalable.errors import InvalidOptionError, UnsupportedKafkaSettingError

__all__ = [
    "TranslatedSettings",
    "check_client_accepts",
    "is_secret_setting",
    "redacted_settings",
    "translate_kafka_settings",
]

_SECRET_NAME = re.compile(
    r"password|passphrase|secret|jaas|token|credential|user\.info|private\.key"
    r"|(^|\.)key\.pem$|oauthbearer\.config|custom\.provider\.config"
)
"""Names of settings whose values are secrets: librdkafka's (``sasl.password``,
``ssl.key.pem``, ``sasl.oauthbearer.assertion.private.key.passphrase``, ...) and the schema
registry client's (``basic.auth.user.info``, ``bearer.auth.token``, ...)."""

# Settings the source owns: a user value would break exactly-once reading.
_OWNED_BY_SOURCE = {
    "auto.offset.reset": (
        "the source decides where to start; set the source option 'startingOffsets' to "
        "'earliest', 'latest' or per-partition JSON instead"
    ),
    "enable.auto.commit": (
        "the source never commits offsets to Kafka: its positions live in Spark's checkpoint"
    ),
    "key.deserializer": (
        "keys are returned as bytes; decode them with DataFrame operations, e.g. "
        "col('key').cast('string') or from_json"
    ),
    "value.deserializer": (
        "values are returned as bytes; decode them with DataFrame operations, e.g. "
        "col('value').cast('string') or from_json"
    ),
    "interceptor.classes": (
        "Java interceptors cannot run in librdkafka (the C client this source uses); "
        "remove it and observe the query through Spark's progress reports instead"
    ),
}

_JAVA_CALLBACK_CLASSES = {
    "sasl.login.callback.handler.class",
    "sasl.client.callback.handler.class",
    "sasl.login.class",
    "ssl.engine.factory.class",
    "metric.reporters",
    "key.serializer",
    "value.serializer",
}

_JAAS = re.compile(
    r"^\s*org\.apache\.kafka\.common\.security\.(plain\.PlainLoginModule|scram\.ScramLoginModule)"
    r"\s+required(?P<body>.*?);?\s*$",
    re.DOTALL,
)
_JAAS_FIELD = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class TranslatedSettings:
    """librdkafka settings, plus the Java settings the source itself uses instead of passing on.

    ``max_poll_records`` has no librdkafka twin; the executor reads in batches of that many
    records, which is what the Java setting means to a Spark user.
    """

    settings: Mapping[str, str]
    max_poll_records: int | None = None


def translate_kafka_settings(java_settings: Mapping[str, str]) -> TranslatedSettings:
    """Map Java client settings (without the ``kafka.`` prefix) to librdkafka settings.

    Raises
    ------
    UnsupportedKafkaSettingError
        For a setting that only exists inside a JVM, naming it as ``kafka.<name>`` and saying
        how to reach the same effect with librdkafka.
    """
    settings: dict[str, str] = {}
    max_poll_records: int | None = None
    for name, value in sorted(java_settings.items()):
        option = f"kafka.{name}"
        if name in _OWNED_BY_SOURCE:
            raise UnsupportedKafkaSettingError(option, _OWNED_BY_SOURCE[name])
        if name in _JAVA_CALLBACK_CLASSES:
            msg = login_handler_refusal(option, value) or (
                "it names a Java class, which librdkafka (the C client this source uses) "
                "cannot load"
            )
            raise UnsupportedKafkaSettingError(option, msg)
        if name == "max.poll.records":
            max_poll_records = _positive(option, value)
        elif name in ("ssl.truststore.location", "ssl.truststore.type"):
            continue  # handled with the pair below
        elif name in ("ssl.keystore.type",):
            _check_keystore_type(value)
        elif name == "ssl.truststore.password":
            continue  # a PEM CA file has no password; only JKS/PKCS12 truststores use it
        elif name == "sasl.jaas.config" and is_oauthbearer_jaas(value):
            settings.update(translate_oauthbearer_jaas(value))
        elif name == "sasl.jaas.config":
            settings.update(_translate_jaas(value))
        elif name in JAVA_OIDC_NAMES:
            settings[JAVA_OIDC_NAMES[name]] = value
        elif name == "sasl.mechanism":
            settings["sasl.mechanisms"] = value
        elif name == "ssl.endpoint.identification.algorithm" and value.strip() == "":
            settings[name] = "none"  # Java's empty string disables the check
        else:
            settings[name] = value
    settings.update(_translate_truststore(java_settings))
    check_oidc_method(settings)
    return TranslatedSettings(settings, max_poll_records)


def is_secret_setting(name: str) -> bool:
    """Whether a Kafka or registry setting's value must never be shown (passwords, keys, tokens)."""
    return _SECRET_NAME.search(name.lower()) is not None


def redacted_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """Return ``settings`` with every secret value replaced by ``'***'``, for messages."""
    return {k: "***" if is_secret_setting(k) else v for k, v in settings.items()}


def _positive(option: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise InvalidOptionError(option, f"{value!r} is not valid; use a positive integer")
    return number


def _check_keystore_type(value: str) -> None:
    if value.strip().upper() != "PKCS12":
        msg = (
            f"keystore type {value!r} is not readable by librdkafka; convert the keystore to "
            "PKCS12 (keytool -importkeystore -deststoretype PKCS12) and set "
            "'kafka.ssl.keystore.location' and 'kafka.ssl.keystore.password', or give PEM files "
            "with 'kafka.ssl.certificate.location' and 'kafka.ssl.key.location'"
        )
        raise UnsupportedKafkaSettingError("kafka.ssl.keystore.type", msg)


def _translate_truststore(java_settings: Mapping[str, str]) -> dict[str, str]:
    location = java_settings.get("ssl.truststore.location")
    kind = java_settings.get("ssl.truststore.type", "JKS" if location else "").strip().upper()
    if location is None:
        if kind:
            msg = "it is set without 'kafka.ssl.truststore.location'; set both, or neither"
            raise InvalidOptionError("kafka.ssl.truststore.type", msg)
        return {}
    if kind != "PEM":
        msg = (
            f"a {kind} truststore is a Java format librdkafka cannot read; export the CA "
            "certificates to PEM (keytool -exportcert -rfc) and set 'kafka.ssl.ca.location', or "
            "set 'kafka.ssl.truststore.type' to PEM if the file already is PEM"
        )
        raise UnsupportedKafkaSettingError("kafka.ssl.truststore.location", msg)
    return {"ssl.ca.location": location}


def _translate_jaas(value: str) -> dict[str, str]:
    match = _JAAS.match(value)
    if match is None:
        msg = (
            "only PlainLoginModule and ScramLoginModule with username and password, and "
            "OAuthBearerLoginModule with clientId, clientSecret and scope, can be translated; "
            "for other mechanisms set librdkafka's settings directly, e.g. "
            "'kafka.sasl.username', 'kafka.sasl.password' or 'kafka.sasl.oauthbearer.*'"
        )
        raise UnsupportedKafkaSettingError("kafka.sasl.jaas.config", msg)
    fields = dict(_JAAS_FIELD.findall(match.group("body")))
    if "username" not in fields or "password" not in fields:
        msg = 'it must contain username="..." and password="..."'
        raise InvalidOptionError("kafka.sasl.jaas.config", msg)
    return {"sasl.username": fields["username"], "sasl.password": fields["password"]}


def check_client_accepts(settings: Mapping[str, str]) -> None:
    """Ask librdkafka to parse the settings now, so a misspelt name fails on the driver.

    librdkafka validates names and values when a client is created; creating (and at once
    closing) a consumer that never connects is the cheapest way to run that validation.
    """
    from confluent_kafka import Consumer, KafkaException

    # Silent: with OAUTHBEARER/OIDC it starts fetching a token in the background, and would
    # print that attempt's lines to stderr; a bad setting raises here, it is not logged.
    config = {"group.id": "kafka-rescalable-validation", **settings, "log_level": 0}
    try:
        Consumer(config).close()
    except KafkaException as exc:
        text = str(exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else exc)
        for name, value in settings.items():
            if is_secret_setting(name) and value:
                text = text.replace(str(value), "***")
        name = _name_in_error(text, settings)
        option = f"kafka.{name}" if name else "kafka.*"
        msg = f"librdkafka refused it: {text}. See librdkafka's CONFIGURATION.md for valid names"
        raise InvalidOptionError(option, msg) from exc


def _name_in_error(text: str, settings: Mapping[str, str]) -> str | None:
    for name in sorted(settings, key=len, reverse=True):
        if f'"{name}"' in text or f" {name} " in text or f" {name}:" in text:
            return name
    return None
