"""librdkafka validation of pass-through settings happens on the driver, naming the option."""

from __future__ import annotations

import pytest

from connector.errors import InvalidOptionError
from connector.kafka_config import check_client_accepts, translate_kafka_settings


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
