"""The sink's options: defaults, and refusals that name the option."""

from __future__ import annotations

import pytest

from kafka_rescalable.config.options import parse_options
from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.sink.options import DeliveryGuarantee, parse

SERVERS = {"kafka.bootstrap.servers": "127.0.0.1:9"}


def test_defaults_are_spark_s_at_least_once() -> None:
    options = parse({**SERVERS, "checkpointLocation": "/tmp/x"})
    assert options.guarantee is DeliveryGuarantee.AT_LEAST_ONCE
    assert not options.exactly_once
    assert options.topic is None
    assert options.transactional_id_prefix == "kafka-rescalable-sink"


def test_options_are_read_in_any_case() -> None:
    options = parse(
        {**SERVERS, "deliveryguarantee": "Exactly-Once", "TOPIC": "out", "kafka.linger.ms": "20"}
    )
    assert options.exactly_once
    assert options.topic == "out"
    assert options.kafka_settings == {"linger.ms": "20"}


@pytest.mark.parametrize(
    ("extra", "option", "message"),
    [
        ({"deliveryGuarantee": "exactly_once"}, "deliveryGuarantee", "'exactly-once'"),
        ({"deliveryGuarante": "x"}, "deliveryguarante", "Did you mean 'deliveryGuarantee'"),
        ({"kafka.transactional.id": "x"}, "kafka.transactional.id", "transactionalIdPrefix"),
        ({"kafka.enable.idempotence": "false"}, "kafka.enable.idempotence", "idempotent"),
        ({"kafka.acks": "1"}, "kafka.acks", "needs 'all'"),
        ({"topic": " "}, "topic", "empty"),
        ({"kafka.no.such.setting": "1"}, "kafka.no.such.setting", "librdkafka refused"),
    ],
)
def test_a_bad_option_is_refused_by_name(extra, option, message) -> None:
    with pytest.raises(InvalidOptionError, match=message) as refused:
        parse({**SERVERS, **extra})
    assert refused.value.option == option


def test_the_brokers_are_required() -> None:
    with pytest.raises(InvalidOptionError, match="kafka.bootstrap.servers"):
        parse({"topic": "t"})


REGISTRY = {"schema.registry.url": "http://registry:8081"}
AVRO = '{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}'


def test_the_typed_record_options_are_the_source_s() -> None:
    options = parse(
        {**SERVERS, "topic": "out", "VALUEFORMAT": "avro", "valueSchema": AVRO, **REGISTRY}
    )
    value, key = options.payloads.value, options.payloads.key
    assert (value.format.value, value.schema, value.framing.value) == ("avro", AVRO, "confluent")
    assert (key.format.value, key.typed) == ("binary", False)
    assert options.payloads.registry.url == "http://registry:8081"
    plain = parse({**SERVERS, "topic": "out", "keyFormat": "string"}).payloads
    assert (plain.key.format.value, plain.value.format.value, plain.registry) == (
        "string",
        "binary",
        None,
    )


def test_a_named_subject_stands_in_for_the_topic_option() -> None:
    options = parse({**SERVERS, "valueFormat": "avro", "valueSubject": "orders-value", **REGISTRY})
    assert options.payloads.value.subject == "orders-value"
    assert options.topic is None


@pytest.mark.parametrize(
    ("extra", "option", "message"),
    [
        ({"mode": "PERMISSIVE"}, "mode", "source option"),
        ({"valueFormt": "avro"}, "valueformt", "Did you mean 'valueFormat'"),
        ({"valueFormat": "xml"}, "valueFormat", "'avro'"),
        ({"valueSchema": "a INT"}, "valueSchema", "typed formats only"),
        ({"valueFormat": "avro"}, "valueSchema", "schema.registry.url"),
        (
            {"schema.registry.basic.auth.user.info": "u:p"},
            "schema.registry.basic.auth.user.info",
            "schema.registry.url",
        ),
        (
            {"valueFormat": "avro", "valueSchema": AVRO, "valueFraming": "confluent"},
            "valueFraming",
            "schema.registry.url",
        ),
        ({"valueFormat": "avro", **REGISTRY}, "valueSubject", "'topic' option"),
        (
            {"keyFormat": "json", "keySchema": "id INT", "keyFraming": "confluent", **REGISTRY},
            "keySubject",
            "<topic>-key",
        ),
    ],
)
def test_a_bad_typed_option_is_refused_by_name(extra, option, message) -> None:
    with pytest.raises(InvalidOptionError, match=message) as refused:
        parse({**SERVERS, **extra})
    assert refused.value.option == option


def test_plain_payloads_with_an_inline_schema_need_no_subject() -> None:
    options = parse(
        {**SERVERS, "valueFormat": "avro", "valueSchema": AVRO, "valueFraming": "none", **REGISTRY}
    )
    assert options.payloads.value.framing.value == "none"


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        ({"startingoffsets": "earliest"}, "startingOffsets"),
        ({"subscribe": "orders"}, "subscribe"),
        ({"maxOffsetsPerTrigger": "10"}, "maxOffsetsPerTrigger"),
    ],
)
def test_a_source_option_is_refused_as_one(extra, option) -> None:
    with pytest.raises(InvalidOptionError, match="it is a source option") as refused:
        parse({**SERVERS, **extra})
    assert refused.value.option == option
    assert "Remove it from the sink's options" in str(refused.value)


def test_the_source_refuses_a_sink_option_as_one() -> None:
    read = {**SERVERS, "subscribe": "orders", "deliveryguarantee": "exactly-once"}
    with pytest.raises(InvalidOptionError, match="it is a sink option") as refused:
        parse_options(read, "stream")
    assert refused.value.option == "deliveryGuarantee"


def test_spark_s_own_options_and_surrounding_spaces() -> None:
    options = parse(
        {**SERVERS, "path": "p", "queryName": "q", "transactionalIdPrefix": " shop ", "topic": "t"}
    )
    assert (options.transactional_id_prefix, options.topic) == ("shop", "t")
    with pytest.raises(InvalidOptionError, match="empty") as refused:
        parse({**SERVERS, "transactionalIdPrefix": "  "})
    assert refused.value.option == "transactionalIdPrefix"


def test_the_repr_hides_kafka_and_registry_secrets() -> None:
    options = parse(
        {
            **SERVERS,
            "topic": "out",
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "PLAIN",
            "kafka.sasl.username": "alice",
            "kafka.sasl.password": "sasl-secret-1",
            "valueFormat": "avro",
            "schema.registry.url": "https://bob:url-secret-2@registry:8081",
            "schema.registry.basic.auth.user.info": "carol:user-info-secret-3",
        }
    )
    text = repr(options)
    for secret in ("sasl-secret-1", "url-secret-2", "user-info-secret-3"):
        assert secret not in text
    assert "'sasl.username': 'alice'" in text
    assert options.kafka_settings["sasl.password"] == "sasl-secret-1"  # only the repr hides it
