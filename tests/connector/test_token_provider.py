"""``kafkaTokenProvider``: the path checked at parse time, the callback's contract and errors."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer

from kafka_rescalable.config.options import parse_options
from kafka_rescalable.config.token_provider import TokenProvider
from kafka_rescalable.errors import InvalidOptionError, TokenProviderError
from kafka_rescalable.sink.options import parse as parse_sink
from kafka_rescalable.token_callback import TokenCallback, open_client

PROVIDERS = """
import time
calls = []

def good(config):
    calls.append(config)
    return ("header.payload.signature", time.time() + 60, "spark", {})

def broken(config):
    raise RuntimeError("the token service is down")

def in_millis(config):
    return ("t", time.time() * 1000)

def not_a_tuple(config):
    return "just-a-token"

NOT_CALLABLE = 3
"""

SASL = {
    "kafka.bootstrap.servers": "127.0.0.1:9",
    "kafka.security.protocol": "SASL_PLAINTEXT",
    "kafka.sasl.mechanism": "OAUTHBEARER",
    "subscribe": "t",
}


@pytest.fixture
def providers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Put a provider module on the path, under a unique name; yield the name."""
    name = f"token_providers_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(PROVIDERS))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_a_good_path_is_parsed_on_both_sides(providers: str) -> None:
    path = f"{providers}:good"
    source = parse_options({**SASL, "kafkaTokenProvider": path}, "batch")
    sink_options = {k: v for k, v in SASL.items() if k != "subscribe"}
    sink = parse_sink({**sink_options, "kafkaTokenProvider": path, "topic": "t"})
    assert str(source.token_provider) == path
    assert sink.client_settings["oauth_cb"] == TokenProvider(providers, "good")


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("no_such_module_4b1e:provide", "cannot be imported on the driver"),
        ("{m}:missing", "has no attribute 'missing'"),
        ("{m}:NOT_CALLABLE", "not a function"),
        ("not a path", "is not an import path"),
    ],
)
def test_a_bad_path_is_refused_at_load_naming_the_option(
    providers: str, path: str, says: str
) -> None:
    options = {**SASL, "kafkaTokenProvider": path.format(m=providers)}
    with pytest.raises(InvalidOptionError) as caught:
        parse_options(options, "batch")
    assert "kafkaTokenProvider" in str(caught.value) and says in str(caught.value)


def test_a_provider_needs_oauthbearer_and_excludes_librdkafka_oidc(providers: str) -> None:
    plain = {**SASL, "kafka.sasl.mechanism": "PLAIN", "kafkaTokenProvider": f"{providers}:good"}
    with pytest.raises(InvalidOptionError, match="set it to 'OAUTHBEARER'"):
        parse_options(plain, "batch")
    both = {
        **SASL,
        "kafkaTokenProvider": f"{providers}:good",
        "kafka.sasl.oauthbearer.method": "oidc",
        "kafka.sasl.oauthbearer.client.id": "c",
        "kafka.sasl.oauthbearer.client.secret": "s",
        "kafka.sasl.oauthbearer.token.endpoint.url": "http://127.0.0.1:9/token",
    }
    with pytest.raises(InvalidOptionError, match="Keep one"):
        parse_options(both, "batch")


def test_the_callback_checks_what_the_provider_returns(providers: str) -> None:
    token, expiry, principal, extensions = TokenCallback(TokenProvider(providers, "good"))("a=b")
    assert (token, principal, extensions) == ("header.payload.signature", "spark", {})
    assert sys.modules[providers].calls == ["a=b"]
    for name, says in (("in_millis", "looks like milliseconds"), ("not_a_tuple", "returned a str")):
        callback = TokenCallback(TokenProvider(providers, name))
        with pytest.raises(TokenProviderError, match=says):
            callback("")
        assert isinstance(callback.failure, TokenProviderError)


def test_a_client_whose_provider_raises_fails_naming_the_provider(providers: str) -> None:
    config = {
        "bootstrap.servers": "127.0.0.1:9",
        "group.id": "g",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "OAUTHBEARER",
        "oauth_cb": TokenProvider(providers, "broken"),
    }
    with pytest.raises(TokenProviderError) as caught:
        open_client(Consumer, config)
    assert f"token provider {providers}:broken" in str(caught.value)
    assert "the token service is down" in str(caught.value)
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_provider_missing_in_a_worker_says_to_ship_it() -> None:
    with pytest.raises(TokenProviderError, match="Ship its module to the executors"):
        TokenCallback(TokenProvider("no_such_module_4b1e", "provide"))
