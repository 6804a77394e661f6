"""SASL/OAUTHBEARER settings: what a Spark user writes (Java names) to what librdkafka reads.

A Java client signs in to an OIDC provider through a login callback class
(``OAuthBearerLoginCallbackHandler``) and a JAAS line carrying the client's id and secret;
librdkafka runs the same client-credentials flow itself once ``sasl.oauthbearer.method`` is
``oidc``. The class is refused (a Java class cannot run in librdkafka) with the librdkafka
setting that replaces it; the JAAS line's ``clientId``, ``clientSecret`` and ``scope``, and
Kafka 4.1's ``sasl.oauthbearer.client.credentials.client.*``, become librdkafka's
``sasl.oauthbearer.client.id``, ``.client.secret`` and ``.scope``. The token endpoint's setting,
``sasl.oauthbearer.token.endpoint.url``, has the same name in both clients.

librdkafka accepts a client id and secret without ``method=oidc`` and then quietly signs in
with an unsecured token the broker refuses, so that combination fails here, naming the setting.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from kafka_rescalable.errors import InvalidOptionError, UnsupportedKafkaSettingError

__all__ = [
    "JAVA_LOGIN_HANDLER",
    "JAVA_OIDC_NAMES",
    "check_oidc_method",
    "is_oauthbearer_jaas",
    "login_handler_refusal",
    "translate_oauthbearer_jaas",
]

JAVA_LOGIN_HANDLER: Final = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
)
"""The Java client's OIDC login class (``.secured.`` before Kafka 3.4 moved it)."""

JAVA_OIDC_NAMES: Final[Mapping[str, str]] = {
    "sasl.oauthbearer.client.credentials.client.id": "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.credentials.client.secret": "sasl.oauthbearer.client.secret",
}
"""Kafka 4.1's client-credentials settings and their librdkafka names."""

_OIDC_SETTINGS: Final = (
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.token.endpoint.url",
)

_MODULE: Final = re.compile(
    r"^\s*org\.apache\.kafka\.common\.security\.oauthbearer\.OAuthBearerLoginModule"
    r"\s+required(?P<body>.*?);?\s*$",
    re.DOTALL,
)
_FIELD: Final = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
_JAAS_FIELDS: Final = {
    "clientId": "sasl.oauthbearer.client.id",
    "clientSecret": "sasl.oauthbearer.client.secret",
    "scope": "sasl.oauthbearer.scope",
}

_OIDC_WAY: Final = (
    "set 'kafka.sasl.oauthbearer.method' to 'oidc' with 'kafka.sasl.oauthbearer.client.id', "
    "'kafka.sasl.oauthbearer.client.secret' and 'kafka.sasl.oauthbearer.token.endpoint.url' "
    "(and 'kafka.sasl.oauthbearer.scope' if the provider wants one): librdkafka then fetches "
    "and renews the tokens itself; or name a Python token provider with 'kafkaTokenProvider'"
)


def is_oauthbearer_jaas(value: str) -> bool:
    """Whether a ``sasl.jaas.config`` value is the Java client's OAUTHBEARER login module."""
    return _MODULE.match(value) is not None


def translate_oauthbearer_jaas(value: str) -> dict[str, str]:
    """Turn ``OAuthBearerLoginModule required clientId=... clientSecret=... scope=...;``.

    Returns librdkafka's client-credentials settings for the fields present; an empty line
    (``OAuthBearerLoginModule required;``) gives none.

    Raises
    ------
    UnsupportedKafkaSettingError
        For a field librdkafka has no setting for (the Java client's unsecured test tokens,
        ``unsecuredLoginStringClaim_sub`` and the like), naming the fields.
    """
    match = _MODULE.match(value)
    if match is None:
        msg = "it is not an OAuthBearerLoginModule line"
        raise InvalidOptionError("kafka.sasl.jaas.config", msg)
    fields = dict(_FIELD.findall(match.group("body")))
    unknown = sorted(set(fields) - set(_JAAS_FIELDS))
    if unknown:
        msg = (
            f"its fields {', '.join(unknown)} have no librdkafka equivalent; only clientId, "
            f"clientSecret and scope are translated. To sign in through an OIDC provider, "
            f"{_OIDC_WAY}"
        )
        raise UnsupportedKafkaSettingError("kafka.sasl.jaas.config", msg)
    return {_JAAS_FIELDS[name]: text for name, text in fields.items()}


def login_handler_refusal(option: str, value: str) -> str | None:
    """Say what replaces the Java OIDC login class, or ``None`` for another class."""
    if value.strip().split(".")[-1] != JAVA_LOGIN_HANDLER.split(".")[-1]:
        return None
    return (
        f"{value.strip()} is a Java class, which librdkafka (the C client this source uses) "
        f"cannot load; remove {option} and {_OIDC_WAY}"
    )


def check_oidc_method(settings: Mapping[str, str]) -> None:
    """Refuse client-credentials settings librdkafka would silently not use.

    Parameters
    ----------
    settings
        The translated librdkafka settings.

    Raises
    ------
    InvalidOptionError
        Naming ``kafka.sasl.oauthbearer.method`` when OIDC settings are given without it set
        to ``oidc``.
    """
    given = [name for name in _OIDC_SETTINGS if name in settings]
    method = settings.get("sasl.oauthbearer.method", "default").strip().lower()
    if given and method != "oidc":
        msg = (
            f"it is {method!r} while {', '.join('kafka.' + name for name in given)} "
            "is set: librdkafka uses those only with 'oidc', and would otherwise sign in with "
            "an unsecured token the brokers refuse. Set it to 'oidc'"
        )
        raise InvalidOptionError("kafka.sasl.oauthbearer.method", msg)
