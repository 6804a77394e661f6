"""The executors' consumer group: ``kafka.group.id`` as given, else ``groupIdPrefix`` + a UUID."""

from __future__ import annotations

import re

from kafka_rescalable.config.options import parse_options
from kafka_rescalable.task import read_settings

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "events"}


def _group(**extra: str) -> str:
    options = {key.lower(): value for key, value in {**BASE, **extra}.items()}
    return str(read_settings(parse_options(options, "stream")).consumer_config["group.id"])


def test_the_generated_group_follows_spark_naming_with_the_prefix() -> None:
    pattern = r"etl-orders-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}-executor"
    assert re.fullmatch(pattern, _group(groupIdPrefix="etl-orders"))
    assert _group().startswith("spark-kafka-source-")


def test_each_query_gets_its_own_generated_group() -> None:
    assert _group(groupIdPrefix="etl") != _group(groupIdPrefix="etl")


def test_kafka_group_id_wins_over_the_prefix() -> None:
    assert _group(groupIdPrefix="etl", **{"kafka.group.id": "billing"}) == "billing"
