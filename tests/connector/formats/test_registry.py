"""The registry as the codecs meet it: an outage is not a bad record, and no secret is shown.

The registry at ``127.0.0.1:9`` (the discard port, where nothing listens) refuses every
connection at once: a real outage, no fake client. The answers of a running registry (a schema
id it does not know, a new subject version) are tested against the real one in
``integration_tests/test_avro_records.py`` and ``test_json_records.py``.
"""

from __future__ import annotations

import json

import pytest
from pyspark.sql.types import LongType, StructField, StructType

from kafka_rescalable.errors import InvalidOptionError, PayloadDecodeError, SchemaRegistryError
from kafka_rescalable.formats.codec import codec_for
from kafka_rescalable.formats.decoding import DecodePlan, decode_batch
from kafka_rescalable.formats.options import (
    DecodeMode,
    Framing,
    PayloadFormat,
    PayloadOptions,
    RegistrySettings,
    payload_settings,
)
from kafka_rescalable.formats.registry import frame
from tests.connector.formats.avro_batches import batch

AVRO_SCHEMA = json.dumps(
    {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}
)
SPARK_TYPE = StructType([StructField("id", LongType())])
DOWN = "http://127.0.0.1:9"
DOWN_WITH_CREDENTIALS = "http://alice:url-secret@127.0.0.1:9"


def _registry(url: str = DOWN, **more: str) -> RegistrySettings:
    # No retries: the client would wait for each of an outage's three by default (seconds).
    settings = {"url": url, "max.retries": "0", **more}
    return RegistrySettings(tuple(sorted(settings.items())))


def _reader(fmt: PayloadFormat, schema: str, registry: RegistrySettings) -> object:
    payload = PayloadOptions("value", fmt, schema=schema, framing=Framing.CONFLUENT)
    return codec_for(fmt).resolve(payload, registry, ["orders"])


@pytest.mark.parametrize(
    ("fmt", "schema"), [(PayloadFormat.AVRO, AVRO_SCHEMA), (PayloadFormat.JSON, "id BIGINT")]
)
def test_an_unreachable_registry_fails_a_permissive_batch_instead_of_nulls(
    fmt: PayloadFormat, schema: str
) -> None:
    registry = _registry()
    reader = _reader(fmt, schema, registry)
    plan = DecodePlan((reader,), (SPARK_TYPE.json(),), DecodeMode.PERMISSIVE, registry)  # type: ignore[arg-type]
    body = b"\x02" if fmt is PayloadFormat.AVRO else b'{"id": 1}'
    with pytest.raises(SchemaRegistryError) as failed:
        decode_batch(batch([frame(7, body), frame(7, body)]), plan)
    message = str(failed.value)
    assert "http://127.0.0.1:9" in message
    assert "schema id 7" in message
    assert "schema.registry.url" in message  # what to check


@pytest.mark.parametrize(
    ("fmt", "schema"), [(PayloadFormat.AVRO, AVRO_SCHEMA), (PayloadFormat.JSON, "id BIGINT")]
)
def test_an_outage_is_not_a_payload_decode_error(fmt: PayloadFormat, schema: str) -> None:
    registry = _registry()
    reader = _reader(fmt, schema, registry)
    decode = codec_for(fmt).decoder(reader, SPARK_TYPE, registry)  # type: ignore[arg-type]
    with pytest.raises(SchemaRegistryError) as failed:
        decode(frame(11, b"\x02"))
    assert not isinstance(failed.value, PayloadDecodeError)


def test_registry_errors_name_the_url_without_its_credentials() -> None:
    registry = _registry(DOWN_WITH_CREDENTIALS)
    avro = PayloadOptions("value", PayloadFormat.AVRO, framing=Framing.CONFLUENT)
    with pytest.raises(SchemaRegistryError) as on_the_driver:
        codec_for(PayloadFormat.AVRO).resolve(avro, registry, ["orders"])
    reader = _reader(PayloadFormat.AVRO, AVRO_SCHEMA, registry)
    decode = codec_for(PayloadFormat.AVRO).decoder(reader, SPARK_TYPE, registry)  # type: ignore[arg-type]
    with pytest.raises(SchemaRegistryError) as on_an_executor:
        decode(frame(3, b"\x02"))
    for failed in (on_the_driver, on_an_executor):
        message = str(failed.value)
        assert "url-secret" not in message
        assert "alice" not in message
        assert "127.0.0.1:9" in message


def test_the_settings_repr_hides_user_info_tokens_and_url_credentials() -> None:
    registry = _registry(
        "https://bob:pw-in-url@registry:8081,https://registry2:8081",
        **{
            "basic.auth.user.info": "alice:user-info-secret",
            "bearer.auth.token": "token-secret",
            "ssl.ca.location": "/etc/ca.pem",
        },
    )
    shown = repr(registry)
    for secret in ("user-info-secret", "alice", "token-secret", "pw-in-url", "bob"):
        assert secret not in shown
    assert "https://***@registry:8081,https://registry2:8081" in shown
    assert "/etc/ca.pem" in shown  # a path is no secret
    assert "'max.retries': '0'" in shown
    assert registry.url == "https://***@registry:8081,https://registry2:8081"
    assert registry.config["url"].startswith("https://bob:pw-in-url@")  # the client's copy


def test_parsed_options_hide_registry_secrets() -> None:
    settings = payload_settings(
        {"valueFormat": "avro"},
        {
            "schema.registry.url": "http://carol:pw-in-url@registry:8081",
            "schema.registry.basic.auth.user.info": "alice:user-info-secret",
        },
    )
    for shown in (repr(settings), repr(settings.registry)):
        assert "user-info-secret" not in shown
        assert "pw-in-url" not in shown


@pytest.mark.parametrize(
    ("fmt", "schema"), [(PayloadFormat.AVRO, AVRO_SCHEMA), (PayloadFormat.JSON, "id BIGINT")]
)
def test_settings_the_client_refuses_fail_when_the_decoder_is_built_not_per_record(
    fmt: PayloadFormat, schema: str
) -> None:
    # Credentials twice (in the URL and as user info): confluent-kafka refuses the settings.
    registry = _registry(DOWN_WITH_CREDENTIALS, **{"basic.auth.user.info": "bob:info-secret"})
    reader = _reader(fmt, schema, registry)
    with pytest.raises(InvalidOptionError) as refused:
        codec_for(fmt).decoder(reader, SPARK_TYPE, registry)  # type: ignore[arg-type]
    assert refused.value.option == "schema.registry.*"
    assert "url-secret" not in str(refused.value) and "info-secret" not in str(refused.value)


def test_numeric_settings_given_as_text_reach_the_client_as_numbers() -> None:
    from kafka_rescalable.formats.registry import registry_client

    client = registry_client(_registry(**{"retries.wait.ms": "5", "timeout": "2.5"}))
    assert client._rest_client.max_retries == 0
    assert client._rest_client.retries_wait_ms == 5
    with pytest.raises(InvalidOptionError) as refused:
        registry_client(_registry(**{"max.retries": "three"}))
    assert refused.value.option == "schema.registry.max.retries"
