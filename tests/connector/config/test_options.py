"""Option parsing: Spark's names and meanings, and errors that name the option."""

from __future__ import annotations

import pytest

from kafka_rescalable.config.options import (
    AssignPartitions,
    OffsetBound,
    Parallelism,
    SubscribePattern,
    SubscribeTopics,
    include_headers,
    parse_options,
)
from kafka_rescalable.errors import InvalidOptionError, UnsupportedKafkaSettingError
from kafka_rescalable.state import TopicPartition

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "orders"}


def lower(options: dict[str, str]) -> dict[str, str]:
    """Spark lower-cases option keys before the data source sees them."""
    return {key.lower(): value for key, value in options.items()}


def test_defaults_follow_spark() -> None:
    stream = parse_options(lower(BASE), "stream")
    batch = parse_options(lower(BASE), "batch")
    assert stream.subscription == SubscribeTopics(("orders",))
    assert stream.starting == OffsetBound.latest()
    assert stream.ending is None
    assert batch.starting == OffsetBound.earliest()
    assert batch.ending == OffsetBound.latest()
    assert stream.fail_on_data_loss is True
    assert stream.include_headers is False
    assert stream.parallelism == Parallelism.unset()
    assert stream.min_records_per_partition == 10_000


def test_subscription_kinds() -> None:
    options = {"kafka.bootstrap.servers": "b:1", "subscribePattern": "orders-.*"}
    parsed = parse_options(lower(options), "stream")
    assert parsed.subscription == SubscribePattern("orders-.*")
    assert parsed.subscription.matches("orders-eu")
    assert not parsed.subscription.matches("xorders-eu")
    options = {"kafka.bootstrap.servers": "b:1", "assign": '{"a":[0,2],"b":[1]}'}
    parsed = parse_options(lower(options), "batch")
    assert parsed.subscription == AssignPartitions(
        frozenset({TopicPartition("a", 0), TopicPartition("a", 2), TopicPartition("b", 1)})
    )


def test_specific_offsets_keep_markers() -> None:
    options = {**BASE, "startingOffsets": '{"orders":{"0":23,"1":-2}}'}
    parsed = parse_options(lower(options), "stream")
    assert parsed.starting.specific == {
        TopicPartition("orders", 0): 23,
        TopicPartition("orders", 1): -2,
    }


def test_kafka_settings_are_translated() -> None:
    options = {
        **BASE,
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "PLAIN",
        "kafka.sasl.jaas.config": (
            'org.apache.kafka.common.security.plain.PlainLoginModule required '
            'username="alice" password="s3cret";'
        ),
        "kafka.ssl.truststore.location": "/etc/ca.pem",
        "kafka.ssl.truststore.type": "PEM",
        "kafka.max.poll.records": "500",
        "kafka.group.id": "my-group",
    }
    parsed = parse_options(lower(options), "stream")
    assert parsed.kafka_settings == {
        "bootstrap.servers": "127.0.0.1:9092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "PLAIN",
        "sasl.username": "alice",
        "sasl.password": "s3cret",
        "ssl.ca.location": "/etc/ca.pem",
    }
    assert parsed.batch_size == 500
    assert parsed.group_id == "my-group"


def test_include_headers_alone() -> None:
    assert include_headers({"includeheaders": "TRUE"}) is True
    assert include_headers({}) is False


BAD_OPTIONS = [
    # (options, mode, option named, words the message must contain)
    ({"subscribe": "t"}, "stream", "kafka.bootstrap.servers", "host1:9092"),
    ({"kafka.bootstrap.servers": "b:1"},
     "stream", "subscribe/subscribePattern/assign", "exactly one"),
    ({**BASE, "assign": '{"t":[0]}'},
     "stream", "subscribe/subscribePattern/assign", "subscribe, assign"),
    ({**BASE, "subscribe": " , "}, "stream", "subscribe", "comma-separated"),
    ({"kafka.bootstrap.servers": "b:1", "subscribePattern": "("},
     "stream", "subscribePattern", "regular expression"),
    ({"kafka.bootstrap.servers": "b:1", "assign": "t:0"}, "batch", "assign", '{"topicA":[0,1]'),
    ({"kafka.bootstrap.servers": "b:1", "assign": '{"t":[-1]}'}, "batch", "assign", ">= 0"),
    ({**BASE, "startingOffsets": "newest"}, "stream", "startingOffsets", "'earliest', 'latest'"),
    ({**BASE, "startingOffsets": '{"orders":{"0":-3}}'}, "stream", "startingOffsets", "-2 or -1"),
    ({**BASE, "startingOffsets": '{"other":{"0":1}}'},
     "stream", "startingOffsets", "not part of the subscription"),
    ({**BASE, "startingOffsets": "latest"}, "batch", "startingOffsets", "'earliest'"),
    ({**BASE, "endingOffsets": "earliest"}, "batch", "endingOffsets", "'latest'"),
    ({**BASE, "endingOffsets": '{"orders":{"0":-2}}'}, "batch", "endingOffsets", "'latest'"),
    ({**BASE, "endingOffsets": "latest"}, "stream", "endingOffsets", "batch"),
    ({**BASE, "failOnDataLoss": "yes"}, "stream", "failOnDataLoss", "'true' or 'false'"),
    ({**BASE, "includeHeaders": "1"}, "stream", "includeHeaders", "'true' or 'false'"),
    ({**BASE, "parallelism": "0"}, "stream", "parallelism", "positive integer"),
    ({**BASE, "minPartitions": "many"}, "batch", "minPartitions", "positive integer"),
    ({**BASE, "minRecordsPerPartition": "0"},
     "stream", "minRecordsPerPartition", "positive integer"),
    ({**BASE, "maxOffsetsPerTrigger": "-5"}, "stream", "maxOffsetsPerTrigger", "positive integer"),
    ({**BASE, "maxBytesPerTrigger": "lots"}, "stream", "maxBytesPerTrigger", "'64m'"),
    ({**BASE, "maxBytesPerTrigger": "0"}, "stream", "maxBytesPerTrigger", "positive size"),
    ({**BASE, "maxBytesPerTrigger": "64m"}, "batch", "maxBytesPerTrigger", "spark.readStream"),
    ({**BASE, "startingOffset": "earliest"},
     "stream", "startingoffset", "Did you mean 'startingOffsets'"),
    ({**BASE, "kafka.auto.offset.reset": "earliest"},
     "stream", "kafka.auto.offset.reset", "startingOffsets"),
    ({**BASE, "kafka.enable.auto.commit": "true"},
     "stream", "kafka.enable.auto.commit", "checkpoint"),
    ({**BASE, "kafka.key.deserializer": "x"}, "stream", "kafka.key.deserializer", "cast('string')"),
    ({**BASE, "kafka.value.deserializer": "x"}, "stream", "kafka.value.deserializer", "from_json"),
    ({**BASE, "kafka.interceptor.classes": "com.X"},
     "stream", "kafka.interceptor.classes", "librdkafka"),
    ({**BASE, "kafka.ssl.truststore.location": "/x.jks"},
     "stream", "kafka.ssl.truststore.location", "ssl.ca.location"),
    ({**BASE, "kafka.ssl.keystore.type": "JKS"}, "stream", "kafka.ssl.keystore.type", "PKCS12"),
    ({**BASE, "kafka.sasl.jaas.config": "com.Custom required;"},
     "stream", "kafka.sasl.jaas.config", "kafka.sasl.username"),
    ({**BASE, "kafka.sasl.login.callback.handler.class": "c"},
     "stream", "kafka.sasl.login.callback.handler.class", "Java class"),
    ({**BASE, "kafka.max.poll.records": "0"},
     "stream", "kafka.max.poll.records", "positive integer"),
    ({**BASE, "valueFormat": "avro", "valueSubject": "orders-value"},
     "stream", "valueSubject", "schema.registry.url"),
    ({**BASE, "keyFormat": "avro", "keySubject": "orders-key"},
     "stream", "keySubject", "schema.registry.url"),
    ({**BASE, "valueFormat": "json", "valueSubject": "orders-value"},
     "stream", "valueSubject", "schema.registry.url"),
]


@pytest.mark.parametrize(("options", "mode", "option", "words"), BAD_OPTIONS)
def test_bad_options_name_the_option(options: dict, mode: str, option: str, words: str) -> None:
    with pytest.raises(InvalidOptionError) as caught:
        parse_options(lower(options), mode)  # type: ignore[arg-type]
    assert caught.value.option == option
    assert f"'{option}'" in str(caught.value)
    assert words in str(caught.value)


def test_java_only_settings_have_their_own_class() -> None:
    with pytest.raises(UnsupportedKafkaSettingError):
        parse_options(lower({**BASE, "kafka.auto.offset.reset": "latest"}), "stream")


def test_parallelism_auto() -> None:
    parsed = parse_options(lower({**BASE, "parallelism": "AUTO"}), "stream")
    assert parsed.parallelism == Parallelism.auto()
    parsed = parse_options(lower({**BASE, "parallelism": "6"}), "stream")
    assert parsed.parallelism == Parallelism.fixed(6)
    with pytest.raises(InvalidOptionError, match="positive integer or 'auto'"):
        parse_options(lower({**BASE, "parallelism": "lots"}), "stream")


def test_durations_take_sparks_forms() -> None:
    for text, millis in [("500ms", 500), ("30s", 30_000), ("30 seconds", 30_000),
                         ("5 minutes", 300_000), ("15m", 900_000), ("1h", 3_600_000), ("250", 250)]:
        parsed = parse_options(lower({**BASE, "maxTriggerDelay": text}), "stream")
        assert parsed.max_trigger_delay_ms == millis, text
    assert parse_options(lower(BASE), "stream").max_trigger_delay_ms == 15 * 60_000
    with pytest.raises(InvalidOptionError, match="'maxEventTimeDrift'.*'30 seconds'"):
        parse_options(lower({**BASE, "maxEventTimeDrift": "soon"}), "stream")


def test_byte_sizes_take_sparks_forms() -> None:
    for text, size in [("1048576", 1 << 20), ("512k", 512 << 10), ("64m", 64 << 20),
                       ("64 MB", 64 << 20), ("1g", 1 << 30), ("2GiB", 2 << 30)]:
        parsed = parse_options(lower({**BASE, "maxBytesPerTrigger": text}), "stream")
        assert parsed.max_bytes_per_trigger == size, text
    assert parse_options(lower(BASE), "stream").max_bytes_per_trigger is None


def test_alignment_and_group_options() -> None:
    parsed = parse_options(
        lower({**BASE, "maxEventTimeDrift": "20 seconds", "idleTimeout": "2m",
               "commitOffsetsToGroup": "etl-lag"}),
        "stream",
    )
    assert parsed.max_event_time_drift_ms == 20_000
    assert parsed.idle_timeout_ms == 120_000
    assert parsed.commit_offsets_to_group == "etl-lag"
    assert parse_options(lower(BASE), "stream").max_event_time_drift_ms is None
    with pytest.raises(InvalidOptionError, match="'commitOffsetsToGroup'"):
        parse_options(lower({**BASE, "commitOffsetsToGroup": " "}), "stream")


@pytest.mark.parametrize("mode", ["stream", "batch"])
def test_starting_offsets_from_group_keeps_starting_offsets_as_the_fallback(mode: str) -> None:
    options = {**BASE, "startingOffsetsFromGroup": " legacy-etl ",
               "startingOffsets": '{"orders":{"2":-2}}'}
    parsed = parse_options(lower(options), mode)  # type: ignore[arg-type]
    assert parsed.starting_offsets_from_group == "legacy-etl"
    assert parsed.starting.specific == {TopicPartition("orders", 2): -2}
    assert parse_options(lower(BASE), mode).starting_offsets_from_group is None  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="'startingOffsetsFromGroup': it is empty"):
        parse_options(lower({**BASE, "startingOffsetsFromGroup": ""}), mode)  # type: ignore[arg-type]


def test_time_bounds_and_their_precedence() -> None:
    tp0 = TopicPartition("orders", 0)
    options = {
        **BASE,
        "startingOffsets": "earliest",
        "startingOffsetsByTimestamp": '{"orders":{"0":1700000000000}}',
    }
    parsed = parse_options(lower(options), "batch")
    assert parsed.starting.keyword == "timestamp"
    assert parsed.starting.by_timestamp == {tp0: 1_700_000_000_000}
    parsed = parse_options(lower({**options, "startingTimestamp": "1700000000001"}), "batch")
    assert parsed.starting.timestamp == 1_700_000_000_001 and parsed.starting.by_timestamp is None
    ending = parse_options(lower({**BASE, "endingTimestamp": "5"}), "batch").ending
    assert ending.keyword == "timestamp" and ending.no_match == "latest"
    strategy = parse_options(
        lower({**BASE, "startingTimestamp": "5", "startingOffsetsByTimestampStrategy": "LATEST"}),
        "stream",
    )
    assert strategy.starting.no_match == "latest"


@pytest.mark.parametrize(
    ("options", "option", "words"),
    [
        ({"startingTimestamp": "yesterday"}, "startingTimestamp", "milliseconds since the epoch"),
        ({"startingOffsetsByTimestamp": "{"}, "startingOffsetsByTimestamp", "not JSON"),
        ({"startingOffsetsByTimestamp": '{"orders":{"0":-5}}'},
         "startingOffsetsByTimestamp", ">= 0"),
        ({"startingOffsetsByTimestamp": '{"x":{"0":5}}'},
         "startingOffsetsByTimestamp", "subscription"),
        ({"startingOffsetsByTimestampStrategy": "skip"},
         "startingOffsetsByTimestampStrategy", "'error'"),
        ({"endingTimestamp": "5"}, "endingTimestamp", "only valid for batch"),
        ({"endingOffsetsByTimestamp": '{"orders":{"0":5}}'},
         "endingOffsetsByTimestamp", "only valid for batch"),
    ],
)
def test_bad_time_options(options: dict, option: str, words: str) -> None:
    with pytest.raises(InvalidOptionError) as caught:
        parse_options(lower({**BASE, **options}), "stream")
    assert caught.value.option == option and words in str(caught.value)


def test_the_options_repr_hides_registry_secrets() -> None:
    options = parse_options(
        lower(
            {
                **BASE,
                "valueFormat": "avro",
                "schema.registry.url": "https://bob:pw-in-url@registry:8081",
                "schema.registry.basic.auth.user.info": "alice:user-info-secret",
                "schema.registry.bearer.auth.token": "token-secret",
            }
        ),
        "stream",
    )
    text = repr(options)
    for secret in ("user-info-secret", "pw-in-url", "token-secret"):
        assert secret not in text
    assert "https://***@registry:8081" in text
    registry = options.payloads.registry
    assert registry is not None
    assert registry.config["basic.auth.user.info"] == "alice:user-info-secret"  # the client's
