"""The sink's options: defaults, and refusals that name the option."""

from __future__ import annotations

import pytest

from connector.errors import InvalidOptionError
from connector.sink.options import DeliveryGuarantee, parse

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
