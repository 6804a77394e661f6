"""The option table itself: complete, consistent with both options objects and with the docs."""

from __future__ import annotations

import importlib.util
from dataclasses import fields
from pathlib import Path
from typing import get_args

import pytest

import kafka_rescalable.config.options as options_module
from kafka_rescalable.config.options import KafkaSourceOptions, parse_options
from kafka_rescalable.config.table import (
    IGNORED_KEYS,
    OPTIONS,
    OPTIONS_BY_KEY,
    SINK_OPTIONS,
    SPARKS_OWN,
    TABLE,
    TABLE_BY_KEY,
    WRONG_MODE,
    WRONG_SIDE,
    reject_unknown,
)
from kafka_rescalable.config.values import Mode
from kafka_rescalable.errors import InvalidOptionError
from kafka_rescalable.sink.options import KafkaSinkOptions
from kafka_rescalable.sink.options import parse as parse_sink

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "orders"}
MODES: tuple[Mode, ...] = get_args(Mode)
# Fields parse_options fills from the kafka.* settings or from rules, not from one table entry.
NOT_FROM_ONE_OPTION = {
    "subscription",
    "bootstrap_servers",
    "kafka_settings",
    "starting",
    "ending",
    "group_id",
    "batch_size",
    "payloads",
}
DOCS_HOOKS = Path(__file__).resolve().parents[3] / "docs" / "_hooks"


def test_names_are_unique_whatever_their_case() -> None:
    assert len(OPTIONS_BY_KEY) == len(OPTIONS)
    assert all(not option.key.startswith("kafka.") for option in OPTIONS)
    assert not set(IGNORED_KEYS) & set(OPTIONS_BY_KEY)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.name)
def test_every_option_has_a_parser_and_a_default_it_accepts(option) -> None:
    assert callable(option.parse)
    for mode in MODES:
        default = option.default_text(mode)
        if default is not None:
            assert option.parse(option.name, default) is not None, (option.name, mode)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.name)
def test_every_option_names_real_modes_and_winners(option) -> None:
    assert option.modes and option.modes <= set(MODES)
    for refused in set(MODES) - option.modes:
        assert refused in WRONG_MODE, f"no message refusing {option.name} in a {refused}"
    assert all(winner.lower() in OPTIONS_BY_KEY for winner in option.overridden_by)
    if isinstance(option.default, dict):
        assert set(option.default) <= option.modes


def test_the_table_and_the_options_object_have_the_same_fields() -> None:
    filled = [option.field for option in OPTIONS if option.field is not None]
    assert len(filled) == len(set(filled)), "two options fill one field"
    assert set(filled) | NOT_FROM_ONE_OPTION == {item.name for item in fields(KafkaSourceOptions)}
    assert not set(filled) & NOT_FROM_ONE_OPTION


@pytest.mark.parametrize("mode", MODES)
def test_an_option_left_out_takes_its_tables_default(mode: Mode) -> None:
    parsed = parse_options(BASE, mode)
    for option in OPTIONS:
        if option.field is None:
            continue
        default = option.default_text(mode)
        expected = option.absent if default is None else option.parse(option.name, default)
        assert getattr(parsed, option.field) == expected, option.name


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.name)
def test_every_option_of_the_table_is_known(option) -> None:
    reject_unknown({option.key: "x"})


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.name)
def test_a_near_miss_is_answered_with_the_tables_spelling(option) -> None:
    typo = option.key[:-1]
    with pytest.raises(InvalidOptionError) as caught:
        reject_unknown({typo: "x"})
    assert caught.value.option == typo
    assert f"Did you mean '{option.name}'?" in str(caught.value)


def test_a_catalog_tables_properties_are_refused_saying_what_works() -> None:
    # What Spark 4.3 hands schema() for CREATE TABLE t USING `kafka-rescalable` OPTIONS (...).
    properties = {
        **BASE,
        "option.kafka.bootstrap.servers": BASE["kafka.bootstrap.servers"],
        "option.subscribe": BASE["subscribe"],
        "provider": "kafka-rescalable",
        "owner": "someone",
    }
    with pytest.raises(InvalidOptionError) as caught:
        parse_options(properties, "stream")
    assert caught.value.option == "option.kafka.bootstrap.servers"
    assert "CREATE TEMPORARY VIEW" in str(caught.value)


def test_a_catalog_table_without_options_is_refused_saying_what_works() -> None:
    # What Spark 4.3 hands schema() for CREATE TABLE t USING `kafka-rescalable`: its own two.
    with pytest.raises(InvalidOptionError) as caught:
        parse_options({"owner": "someone", "provider": "kafka-rescalable"}, "stream")
    assert caught.value.option == "provider"
    message = str(caught.value)
    assert "CREATE TABLE ... USING `kafka-rescalable` is not supported" in message
    assert "CREATE TEMPORARY VIEW name USING `kafka-rescalable` OPTIONS (" in message
    assert "does not know it" not in message


def test_no_options_at_all_says_what_a_sql_table_read_needs_instead() -> None:
    # What Spark 4.3 hands reader() for SELECT from a table created with columns and OPTIONS.
    with pytest.raises(InvalidOptionError) as caught:
        parse_options({}, "batch")
    assert caught.value.option == "kafka.bootstrap.servers"
    assert "CREATE TEMPORARY VIEW name USING `kafka-rescalable` OPTIONS (" in str(caught.value)
    with pytest.raises(InvalidOptionError) as caught:
        parse_options({"subscribe": "orders"}, "batch")
    assert "CREATE TEMPORARY VIEW" not in str(caught.value), "options were given: no SQL hint"


def test_a_batch_only_option_is_refused_in_a_stream() -> None:
    for option in OPTIONS:
        if "stream" in option.modes:
            continue
        with pytest.raises(InvalidOptionError) as caught:
            parse_options({**BASE, option.key: "1"}, "stream")
        assert caught.value.option == option.name
        assert WRONG_MODE["stream"] in str(caught.value)


def test_repr_hides_an_option_the_table_marks_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = parse_options({**BASE, "commitoffsetstogroup": "team-x"}, "stream")
    assert "commit_offsets_to_group='team-x'" in repr(parsed)
    monkeypatch.setattr(options_module, "_SECRET_FIELDS", frozenset({"commit_offsets_to_group"}))
    assert "team-x" not in repr(parsed)
    assert "commit_offsets_to_group='***'" in repr(parsed)


def documented_options(side: str) -> set[str]:
    """Name every option the documentation's option reference describes for ``side``.

    The reference (docs/reference/options.md) is generated from :data:`TABLE` when the site
    is built; only each option's sentence is written by hand, in docs/_hooks/option_meanings.py.
    """
    path = DOCS_HOOKS / "option_meanings.py"
    spec = importlib.util.spec_from_file_location("docs_option_meanings", path)
    assert spec is not None and spec.loader is not None
    meanings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(meanings)
    return set({"source": meanings.SOURCE, "sink": meanings.SINK}[side])


def test_the_docs_describe_every_option_of_the_table_and_no_other() -> None:
    assert documented_options("source") == {option.name for option in OPTIONS}
    assert documented_options("sink") == {option.name for option in SINK_OPTIONS}


# The sink's side of the table: the same mechanism, its own entries.
SINK_BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092"}
# KafkaSinkOptions fields parse fills from the kafka.* settings or the payload rules.
SINK_NOT_FROM_ONE_OPTION = {"bootstrap_servers", "kafka_settings", "payloads"}


def test_every_entry_names_real_sides() -> None:
    for option in TABLE:
        assert option.sides and option.sides <= {"source", "sink"}, option.name
    assert {o.name for o in OPTIONS} | {o.name for o in SINK_OPTIONS} == {o.name for o in TABLE}
    assert len(TABLE_BY_KEY) == len(TABLE)


@pytest.mark.parametrize("option", SINK_OPTIONS, ids=lambda option: option.name)
def test_a_sink_option_takes_both_modes_and_one_default(option) -> None:
    # The sink writes the same way from df.write and df.writeStream: no per-mode rule.
    assert option.modes == set(MODES)
    assert not option.overridden_by
    assert option.default is None or isinstance(option.default, str)
    if option.default is not None:
        assert option.parse(option.name, option.default) is not None


def test_the_sink_table_and_the_sink_options_object_have_the_same_fields() -> None:
    filled = [option.field for option in SINK_OPTIONS if option.field is not None]
    assert len(filled) == len(set(filled)), "two options fill one field"
    assert set(filled) | SINK_NOT_FROM_ONE_OPTION == {
        item.name for item in fields(KafkaSinkOptions)
    }


def test_a_sink_option_left_out_takes_its_tables_default() -> None:
    parsed = parse_sink(SINK_BASE)
    for option in SINK_OPTIONS:
        if option.field is None:
            continue
        expected = (
            option.absent if option.default is None else option.parse(option.name, option.default)
        )
        assert getattr(parsed, option.field) == expected, option.name


@pytest.mark.parametrize("option", SINK_OPTIONS, ids=lambda option: option.name)
def test_every_sink_option_is_known_to_the_sink(option) -> None:
    reject_unknown({option.key: "x"}, "sink")


@pytest.mark.parametrize("option", SINK_OPTIONS, ids=lambda option: option.name)
def test_a_sink_near_miss_is_answered_with_the_tables_spelling(option) -> None:
    typo = option.key[:-1]
    with pytest.raises(InvalidOptionError) as caught:
        reject_unknown({typo: "x"}, "sink")
    assert caught.value.option == typo
    assert f"Did you mean '{option.name}'?" in str(caught.value)
    assert "Known: " in str(caught.value)


@pytest.mark.parametrize(
    ("side", "other"),
    [("sink", option) for option in OPTIONS if "sink" not in option.sides]
    + [("source", option) for option in SINK_OPTIONS if "source" not in option.sides],
    ids=lambda item: item if isinstance(item, str) else item.name,
)
def test_the_other_sides_option_is_refused_with_the_reason(side, other) -> None:
    with pytest.raises(InvalidOptionError) as caught:
        reject_unknown({other.key: "x"}, side)
    assert caught.value.option == other.name
    assert (other.elsewhere or WRONG_SIDE[side]) in str(caught.value)
    assert "does not know" not in str(caught.value)


def test_spark_s_own_keys_are_left_to_spark_on_each_side() -> None:
    for side, names in SPARKS_OWN.items():
        reject_unknown({name.lower(): "x" for name in names}, side)
    assert IGNORED_KEYS == tuple(name.lower() for name in SPARKS_OWN["source"])
