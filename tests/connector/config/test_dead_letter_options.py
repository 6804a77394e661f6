"""``deadLetterTopic`` and ``mode``: which mode does what, and the combinations refused."""

from __future__ import annotations

import pytest

from kafka_rescalable.config.options import parse_options
from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.formats.options import DecodeMode
from kafka_rescalable.task import read_settings

JSON = {
    "kafka.bootstrap.servers": "127.0.0.1:9092",
    "subscribe": "orders",
    "valueFormat": "json",
    "valueSchema": "id BIGINT",
}


def lower(options: dict[str, str]) -> dict[str, str]:
    """Spark lower-cases option keys before the data source sees them."""
    return {key.lower(): value for key, value in options.items()}


@pytest.mark.parametrize(
    ("extra", "mode"),
    [
        ({}, DecodeMode.FAILFAST),
        ({"mode": "PERMISSIVE"}, DecodeMode.PERMISSIVE),
        ({"deadLetterTopic": "orders-dlq"}, DecodeMode.DEADLETTER),
        ({"deadLetterTopic": "orders-dlq", "mode": "deadLetter"}, DecodeMode.DEADLETTER),
    ],
)
def test_dead_letter_topic_implies_its_mode(extra: dict[str, str], mode: DecodeMode) -> None:
    payloads = parse_options(lower({**JSON, **extra}), "stream").payloads
    assert payloads.mode is mode
    assert payloads.dead_letter_topic == extra.get("deadLetterTopic")


@pytest.mark.parametrize(
    ("extra", "mode", "option", "words"),
    [
        ({"mode": "DEADLETTER"}, "stream", "deadLetterTopic", "name the topic"),
        ({"deadLetterTopic": "d", "mode": "PERMISSIVE"}, "stream", "mode", "contradicts"),
        ({"deadLetterTopic": "d", "mode": "FAILFAST"}, "stream", "mode", "Remove 'mode'"),
        ({"deadLetterTopic": "orders"}, "stream", "deadLetterTopic", "outside the subscription"),
        ({"deadLetterTopic": " "}, "stream", "deadLetterTopic", "empty"),
        ({"deadLetterTopic": "d"}, "batch", "deadLetterTopic", "spark.readStream"),
        (
            {"deadLetterTopic": "d", "valueFormat": "binary", "valueSchema": None},
            "stream",
            "deadLetterTopic",
            "typed key or value",
        ),
        ({"mode": "skip"}, "stream", "mode", "'DEADLETTER'"),
    ],
)
def test_contradictions_are_refused_naming_the_option(
    extra: dict[str, str | None], mode: str, option: str, words: str
) -> None:
    options = {k: v for k, v in {**JSON, **extra}.items() if v is not None}
    with pytest.raises(InvalidOptionError) as caught:
        parse_options(lower(options), mode)  # type: ignore[arg-type]
    assert caught.value.option == option
    assert words in str(caught.value)


def test_a_pattern_that_takes_the_topic_is_refused() -> None:
    options = {
        **JSON,
        "subscribe": None,
        "subscribePattern": "orders.*",
        "deadLetterTopic": "orders-dlq",
    }
    with pytest.raises(InvalidOptionError, match="subscribePattern=orders"):
        parse_options(lower({k: v for k, v in options.items() if v is not None}), "stream")


def test_the_target_carries_the_sources_settings_without_consumer_ones() -> None:
    options = {
        **JSON,
        "deadLetterTopic": "orders-dlq",
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "PLAIN",
        "kafka.sasl.password": "hunter2-secret",
        "kafka.isolation.level": "read_committed",
        "kafka.fetch.min.bytes": "10",
    }
    settings = read_settings(parse_options(lower(options), "stream"))
    target = settings.dead_letters
    assert target is not None
    assert target.topic == "orders-dlq" and target.prefix == "kafka-rescalable-deadletter"
    assert target.kafka_settings["security.protocol"] == "SASL_SSL"
    assert "isolation.level" not in target.kafka_settings
    assert not any(key.startswith("fetch.") for key in target.kafka_settings)
    assert settings.include_headers, "a dead letter carries its headers: they are read"
    assert not target.keep_headers
    assert "hunter2-secret" not in repr(settings)
    plain = read_settings(parse_options(lower(JSON), "stream"))
    assert plain.dead_letters is None and not plain.include_headers
