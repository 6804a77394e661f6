"""The typed-record options, shared by the source and the sink.

``keyFormat`` / ``valueFormat`` say what the bytes are; ``keySchema`` / ``valueSchema`` give a
schema inline, ``keySubject`` / ``valueSubject`` name a registry subject, ``keyMessage`` /
``valueMessage`` a Protobuf message, ``keyFraming`` / ``valueFraming`` whether payloads carry a
schema registry's framing; ``mode`` says what a record that does not decode does, and
``schema.registry.*`` configures confluent-kafka's own ``SchemaRegistryClient``. The option
table (:mod:`kafka_rescalable.config.table`) declares each; this module turns their values into
frozen,
picklable settings that travel to the executors.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kafka_rescalable.config.kafka_config import is_secret_setting, redacted_settings
from kafka_rescalable.config.table import REGISTRY_PREFIX
from kafka_rescalable.errors import InvalidOptionError

__all__ = [
    "Column",
    "DecodeMode",
    "Framing",
    "PayloadFormat",
    "PayloadOptions",
    "PayloadSettings",
    "RegistrySettings",
    "payload_settings",
    "schema_document",
    "url_without_credentials",
]

Column = Literal["key", "value"]


class PayloadFormat(enum.Enum):
    """What a key's or value's bytes hold."""

    BINARY = "binary"
    STRING = "string"
    JSON = "json"
    AVRO = "avro"
    PROTOBUF = "protobuf"


class Framing(enum.Enum):
    """Whether payloads start with a schema registry's magic byte and schema id."""

    NONE = "none"
    CONFLUENT = "confluent"


class DecodeMode(enum.Enum):
    """What a record whose key or value does not decode does (the ``mode`` option)."""

    FAILFAST = "failfast"
    """The task fails, naming the record: nothing is skipped silently."""
    PERMISSIVE = "permissive"
    """The column is null and the reason is in the record's ``decodeError`` column."""
    DEADLETTER = "deadletter"
    """The record goes, raw, to ``deadLetterTopic`` with the reason, and not to the output."""


@dataclass(frozen=True, repr=False)
class RegistrySettings:
    """``schema.registry.url`` and the other ``schema.registry.*`` settings, prefix removed.

    They are handed to confluent-kafka's ``SchemaRegistryClient`` as they are (``url``,
    ``basic.auth.user.info``, ``ssl.ca.location``, ...). Its ``repr``, :attr:`url` and
    :meth:`scrub` never show a credential: the user info of the URL (the client sends it as
    basic auth), ``basic.auth.user.info``, tokens and secrets, since settings reach logs,
    tracebacks and Spark's UI.
    """

    items: tuple[tuple[str, str], ...]
    """The settings, sorted: a tuple, so that settings can key a per-worker cache."""

    @property
    def config(self) -> dict[str, str]:
        """The settings as ``SchemaRegistryClient`` takes them, credentials included."""
        return dict(self.items)

    @property
    def url(self) -> str:
        """The registry's URL for messages: credentials in it replaced by ``'***'``."""
        return url_without_credentials(self.config["url"])

    def scrub(self, text: str) -> str:
        """Return ``text`` with every credential of these settings replaced by ``'***'``.

        For a library's error text, which may quote the URL or the user info it was given.
        """
        for secret in sorted(self._secrets(), key=len, reverse=True):
            text = text.replace(secret, "***")
        return text

    def _secrets(self) -> set[str]:
        found = set()
        for key, value in self.items:
            if key == "url":
                for match in _USER_INFO.finditer(value):
                    userinfo = match.group("userinfo")
                    found.update({userinfo, *userinfo.split(":", 1)[1:]})
            elif is_secret_setting(key):
                found.update({value, *value.split(":", 1)[1:]})  # user:password, password
        return {secret for secret in found if len(secret) >= _SHORTEST_SECRET}

    def __repr__(self) -> str:
        """Show the settings, with secret ones replaced by ``'***'``."""
        shown = redacted_settings(self.config)
        shown["url"] = self.url
        return f"RegistrySettings({shown!r})"


_SHORTEST_SECRET = 3
"""A credential shorter than this is not searched for in text: ``'a'`` would blank out every
``a`` of a message, and so short a password protects nothing anyway."""


_USER_INFO = re.compile(r"(?P<start>^|,|://)\s*(?P<userinfo>[^/,\s]*)@")
"""The ``user:password@`` of each URL in a comma-separated list, with or without a scheme; up to
the last ``@`` before the path, in case a password holds an unescaped ``@``."""


def url_without_credentials(url: str) -> str:
    """``url`` (or a comma-separated list of URLs) with any ``user:password@`` as ``***@``."""
    return _USER_INFO.sub(lambda match: f"{match.group('start')}***@", url)


@dataclass(frozen=True)
class PayloadOptions:
    """How one column (the key or the value) is decoded or encoded.

    ``schema`` is the option's text as given (an Avro schema, a DDL string or JSON Schema, or
    the path of a Protobuf descriptor set); :mod:`kafka_rescalable.formats.codec` resolves it.
    """

    column: Column
    format: PayloadFormat
    schema: str | None = None
    message: str | None = None
    subject: str | None = None
    framing: Framing = Framing.NONE

    @property
    def typed(self) -> bool:
        """Whether the column is anything but the raw bytes Spark's Kafka source gives."""
        return self.format is not PayloadFormat.BINARY

    def option(self, suffix: str) -> str:
        """Name this column's option ``suffix``: ``option("Schema")`` is ``valueSchema``."""
        return f"{self.column}{suffix}"


@dataclass(frozen=True)
class PayloadSettings:
    """The key's and the value's options, ``mode``, and the registry when one is configured."""

    key: PayloadOptions
    value: PayloadOptions
    mode: DecodeMode = DecodeMode.FAILFAST
    registry: RegistrySettings | None = None
    dead_letter_topic: str | None = None
    """Where records that do not decode go, under ``DecodeMode.DEADLETTER``."""
    dead_letter_prefix: str = "kafka-rescalable-deadletter"
    """``deadLetterTransactionalIdPrefix``: the producers' transactional ids and marker group."""

    @property
    def typed(self) -> bool:
        """Whether either column is decoded: the plain Kafka schema applies otherwise."""
        return self.key.typed or self.value.typed

    @property
    def columns(self) -> tuple[PayloadOptions, ...]:
        """The typed columns, key first."""
        return tuple(payload for payload in (self.key, self.value) if payload.typed)


PLAIN = PayloadSettings(
    PayloadOptions("key", PayloadFormat.BINARY), PayloadOptions("value", PayloadFormat.BINARY)
)
"""The settings when no typed-record option is given: Spark's Kafka schema, bytes."""

_NEED_SCHEMA = {
    PayloadFormat.JSON: (
        "give the reader schema inline: a Spark DDL string such as 'id BIGINT, name STRING', "
        "or a JSON Schema; or set 'schema.registry.url' to use the subject's latest version"
    ),
    PayloadFormat.PROTOBUF: (
        "give the path of a Protobuf descriptor set file (protoc --descriptor_set_out "
        "--include_imports) and the message's full name in '{column}Message'"
    ),
}


def schema_document(text: str, option: str, refusal: str, instead: str) -> Any:
    """Parse a schema given as JSON text in ``option`` (``valueSchema``, a registry's subject).

    Raises
    ------
    InvalidOptionError
        Naming ``option``: ``refusal`` says what the text is not, ``instead`` what to give.
    """
    try:
        return json.loads(text)
    except ValueError as error:
        raise InvalidOptionError(option, f"{refusal} ({error}); {instead}") from error


def payload_settings(values: Mapping[str, Any], raw: Mapping[str, str]) -> PayloadSettings:
    """Build the settings from the option table's parsed ``values`` and the raw options.

    Parameters
    ----------
    values
        :func:`kafka_rescalable.config.table.read_table`'s values, by option name.
    raw
        The options with lower-cased keys, for the ``schema.registry.*`` settings.

    Raises
    ------
    InvalidOptionError
        When a format needs a schema that neither an inline option nor a registry gives, or
        ``schema.registry.*`` is set without ``schema.registry.url``.
    """
    config = {
        key[len(REGISTRY_PREFIX) :]: value
        for key, value in raw.items()
        if key.startswith(REGISTRY_PREFIX)
    }
    registry = None
    if config:
        if not config.get("url", "").strip():
            first = REGISTRY_PREFIX + sorted(config)[0]
            msg = (
                "schema.registry.* settings need 'schema.registry.url', the registry's address "
                "(e.g. 'http://registry:8081')"
            )
            raise InvalidOptionError(first, msg)
        registry = RegistrySettings(tuple(sorted(config.items())))
    key, value = (_column(column, values, registry) for column in ("key", "value"))
    topic = values.get("deadLetterTopic")
    mode = _mode(values, "mode" in raw, topic, key.typed or value.typed)
    prefix = values.get("deadLetterTransactionalIdPrefix") or "kafka-rescalable-deadletter"
    return PayloadSettings(key, value, mode, registry, topic, prefix)


def _mode(values: Mapping[str, Any], given: bool, topic: str | None, typed: bool) -> DecodeMode:
    """``mode``, with ``deadLetterTopic`` implying ``DEADLETTER`` and refusing the others."""
    mode = DecodeMode(values.get("mode") or "failfast")
    if topic is None:
        if mode is DecodeMode.DEADLETTER:
            msg = "mode 'DEADLETTER' writes records that do not decode there: name the topic"
            raise InvalidOptionError("deadLetterTopic", msg)
        return mode
    if given and mode is not DecodeMode.DEADLETTER:
        msg = (
            f"'{mode.value.upper()}' contradicts 'deadLetterTopic': a record that does not "
            "decode either fails the query (FAILFAST), is kept with its reason in "
            "'decodeError' (PERMISSIVE) or goes to the dead-letter topic (DEADLETTER). "
            "Remove 'mode' or 'deadLetterTopic'"
        )
        raise InvalidOptionError("mode", msg)
    if not typed:
        msg = (
            "only a typed key or value can fail to decode: set 'valueFormat' or 'keyFormat' "
            "(string, json, avro, protobuf), or remove 'deadLetterTopic'"
        )
        raise InvalidOptionError("deadLetterTopic", msg)
    return DecodeMode.DEADLETTER


def _column(
    column: Column, values: Mapping[str, Any], registry: RegistrySettings | None
) -> PayloadOptions:
    fmt = PayloadFormat(values.get(f"{column}Format") or "binary")
    framing_text = values.get(f"{column}Framing")
    if framing_text is None:
        framed = registry is not None and fmt in (
            PayloadFormat.AVRO,
            PayloadFormat.JSON,
            PayloadFormat.PROTOBUF,
        )
        framing = Framing.CONFLUENT if framed else Framing.NONE
    else:
        framing = Framing(framing_text)
    payload = PayloadOptions(
        column,
        fmt,
        schema=values.get(f"{column}Schema"),
        message=values.get(f"{column}Message"),
        subject=values.get(f"{column}Subject"),
        framing=framing,
    )
    _check(payload, registry)
    return payload


def _check(payload: PayloadOptions, registry: RegistrySettings | None) -> None:
    fmt = payload.format
    if not payload.typed or fmt is PayloadFormat.STRING:
        for suffix in ("Schema", "Message", "Subject"):
            if getattr(payload, suffix.lower()) is not None:
                msg = (
                    f"it applies to typed formats only; '{payload.option('Format')}' is "
                    f"{fmt.value!r}"
                )
                raise InvalidOptionError(payload.option(suffix), msg)
        return
    if payload.subject is not None and registry is None:
        # Before the schema checks: the subject was meant to give the schema.
        msg = "a subject is looked up in a schema registry; set 'schema.registry.url' too"
        raise InvalidOptionError(payload.option("Subject"), msg)
    if fmt is PayloadFormat.AVRO and payload.schema is None and registry is None:
        msg = (
            "'avro' needs a reader schema: give the Avro schema (JSON text) here, or set "
            "'schema.registry.url' to use the subject's latest version"
        )
        raise InvalidOptionError(payload.option("Schema"), msg)
    from_registry = fmt is PayloadFormat.JSON and registry is not None  # subject's latest
    if fmt in _NEED_SCHEMA and payload.schema is None and not from_registry:
        hint = _NEED_SCHEMA[fmt].format(column=payload.column)
        raise InvalidOptionError(payload.option("Schema"), f"{fmt.value!r} needs it: {hint}")
    if fmt is PayloadFormat.PROTOBUF and payload.message is None:
        msg = "'protobuf' needs the full name of the message to decode, e.g. 'shop.Order'"
        raise InvalidOptionError(payload.option("Message"), msg)
