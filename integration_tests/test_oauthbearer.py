"""SASL/OAUTHBEARER: signing in with a real OIDC provider's tokens, both ways the source offers.

One Keycloak and one broker that checks its tokens (``oidc_fixtures``) for the module. Two
streams run at once for longer than two token lifetimes, under a broker that makes every
connection sign in again within 10 s: one signs in with librdkafka's own OIDC settings
(``kafka.sasl.oauthbearer.*``) on its source and on its exactly-once sink, the other with a
``kafkaTokenProvider`` that fetches tokens with ``urllib``. Both read every record exactly
once. A wrong client secret and a provider that raises fail at once, naming the cause; no
secret appears in any exception, log line, progress report, plan or checkpoint.
"""

from __future__ import annotations

import collections
import json
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from integration_tests.docs_snippets import run_snippet
from integration_tests.kafka_helpers import (
    BackgroundProducer,
    Record,
    create_topic,
    produce,
    read_all,
)
from integration_tests.oidc_fixtures import (
    PROVIDED,
    PROVIDED_SECRET,
    READER,
    READER_SECRET,
    TOKEN_LIFESPAN_S,
    OidcKafka,
)
from integration_tests.secret_scan import query_texts
from integration_tests.spark_helpers import (
    OUR_FORMAT,
    kafka_stream,
    read_positions,
    start_parquet_stream,
    wait_until,
)

PROVIDER = "integration_tests.oidc_tokens:provide"


def _without_bootstrap(options: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in options.items() if k != "kafka.bootstrap.servers"}


def _renewed(calls: Path) -> bool:
    """Whether one process called the provider twice, a token lifetime's part apart."""
    if not calls.exists():
        return False
    times: dict[str, list[float]] = collections.defaultdict(list)
    for line in calls.read_text().splitlines():
        pid, at = line.split()
        times[pid].append(float(at))
    return any(max(t) - min(t) > TOKEN_LIFESPAN_S / 2 for t in times.values())


def test_streams_renew_their_tokens_and_read_and_write_every_record_once(
    spark: SparkSession, oidc_kafka: OidcKafka, topic_name: str, tmp_path: Path
) -> None:
    source, written = topic_name, f"{topic_name}-written"
    for topic in (source, written):
        create_topic(oidc_kafka.plaintext, topic, partitions=2)
    secret_file, calls = tmp_path / "secret", tmp_path / "calls"
    secret_file.write_text(PROVIDED_SECRET)
    oidc = oidc_kafka.oidc_options()
    provided = oidc_kafka.provider_options(PROVIDER, str(secret_file), str(calls))
    sasl = oidc["kafka.bootstrap.servers"]

    with BackgroundProducer(oidc_kafka.plaintext, source, 2, batch=10, interval_s=0.2) as feed:
        # librdkafka's OIDC sign-in, on the source and on the exactly-once sink.
        through_oidc = (
            kafka_stream(spark, sasl, source, **_without_bootstrap(oidc))
            .select("key", "value")
            .writeStream.format(OUR_FORMAT)
            .options(**oidc)
            .option("topic", written)
            .option("deliveryGuarantee", "exactly-once")
            .option("checkpointLocation", str(tmp_path / "oidc-checkpoint"))
            .trigger(processingTime="1 second")
            .start()
        )
        # The named token provider, on the source.
        through_provider = start_parquet_stream(
            spark,
            sasl,
            source,
            tmp_path / "provided",
            tmp_path / "provided-checkpoint",
            **_without_bootstrap(provided),
        )
        started = time.monotonic()
        queries = (through_oidc, through_provider)

        def outlived_two_tokens() -> bool:
            for query in queries:
                assert query.isActive, f"a query stopped: {query.exception()}"
            return time.monotonic() - started > 2 * TOKEN_LIFESPAN_S and _renewed(calls)

        wait_until(outlived_two_tokens, "two token lifetimes and a provider renewal", 180)
        produced = feed.stop()

    def caught_up() -> bool:
        for query in queries:
            assert query.isActive, f"a query stopped: {query.exception()}"
        if not list((tmp_path / "provided").glob("*.parquet")):
            return False
        out = read_all(oidc_kafka.plaintext, written)
        return len(read_positions(spark, tmp_path / "provided")) >= len(produced) and len(
            out
        ) >= len(produced)

    try:
        wait_until(caught_up, "both queries to read every record", 120)
        texts = [json.dumps(q.recentProgress, default=str) for q in queries]
        texts += [q._jsq.explainInternal(True) for q in queries]  # what explain(True) prints
    finally:
        for query in queries:
            query.stop()

    assert read_positions(spark, tmp_path / "provided") == produced
    sent = collections.Counter(b"bg-%d" % i for i in range(len(produced)))
    assert collections.Counter(r.value for r in read_all(oidc_kafka.plaintext, written)) == sent
    pids = {line.split()[0] for line in calls.read_text().splitlines()}
    assert len(pids) >= 2, "the provider ran in the driver's and the workers' processes"
    for text in texts:
        assert READER_SECRET not in text and PROVIDED_SECRET not in text


def _error_of(spark: SparkSession, options: dict[str, str], topic: str) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(Exception) as caught:
        spark.read.format(OUR_FORMAT).options(**options).option("subscribe", topic).load().collect()
    return str(caught.value), time.monotonic() - started


def test_a_wrong_secret_and_a_broken_provider_fail_at_once_naming_the_cause(
    spark: SparkSession, oidc_kafka: OidcKafka, topic_name: str
) -> None:
    create_topic(oidc_kafka.plaintext, topic_name, partitions=1)
    wrong = "not-" + READER_SECRET
    text, took_s = _error_of(spark, oidc_kafka.oidc_options(wrong), topic_name)
    assert "KafkaAuthenticationError" in text
    assert "Invalid client or Invalid client credentials" in text  # Keycloak's own answer
    assert "kafka.sasl.oauthbearer.client.secret" in text
    assert wrong not in text and READER_SECRET not in text
    assert took_s < 60, f"a refused secret took {took_s:.0f} s to fail"

    for guarantee in ("exactly-once", "at-least-once"):
        started = time.monotonic()
        with pytest.raises(Exception) as caught:
            (
                spark.range(3)
                .selectExpr("CAST(id AS STRING) AS value")
                .write.format(OUR_FORMAT)
                .options(**oidc_kafka.oidc_options(wrong))
                .option("topic", topic_name)
                .option("deliveryGuarantee", guarantee)
                .mode("append")
                .save()
            )
        took_s, text = time.monotonic() - started, str(caught.value)
        assert "KafkaWriteError" in text and "Invalid client or Invalid client credentials" in text
        assert wrong not in text
        assert took_s < 60, f"the {guarantee} sink took {took_s:.0f} s to fail"

    broken = oidc_kafka.provider_options("integration_tests.oidc_tokens:broken", "-", "-")
    text, took_s = _error_of(spark, broken, topic_name)
    assert "TokenProviderError" in text
    assert "token provider integration_tests.oidc_tokens:broken" in text
    assert "the token service answered 503" in text
    assert took_s < 60, f"a failing provider took {took_s:.0f} s to fail"


def test_no_client_secret_appears_anywhere(
    oidc_kafka: OidcKafka, topic_name: str, tmp_path: Path
) -> None:
    create_topic(oidc_kafka.plaintext, topic_name, partitions=2)
    with BackgroundProducer(oidc_kafka.plaintext, topic_name, 2, max_records=40) as feed:
        wait_until(lambda: len(feed.positions) >= 40, "40 records")
    options = {**oidc_kafka.oidc_options(), "subscribe": topic_name, "startingOffsets": "earliest"}
    for name, text in query_texts(options, tmp_path).items():
        assert READER_SECRET not in text, f"the client secret appears in {name}"


def test_the_pages_snippets_sign_in_both_ways(
    spark: SparkSession, oidc_kafka: OidcKafka, topic_name: str, tmp_path: Path
) -> None:
    """docs/snippets/oauthbearer.py and token_provider.py, the security page's code."""
    create_topic(oidc_kafka.plaintext, topic_name, partitions=2)
    positions = produce(
        oidc_kafka.plaintext, topic_name, [Record(value=b"o%d" % i) for i in range(12)]
    )
    secret_file = tmp_path / "secret"
    secret_file.write_text(PROVIDED_SECRET)
    config = (
        f"tokenUrl={oidc_kafka.idp.token_endpoint_url} clientId={PROVIDED} "
        f"secretFile={secret_file} calls={tmp_path / 'calls'}"
    )
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": oidc_kafka.cluster.bootstrap_for("SASL_PLAINTEXT"),
        "DOCS_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "DOCS_TOPIC": topic_name,
        "DOCS_TOKEN_URL": oidc_kafka.idp.token_endpoint_url,
        "DOCS_CLIENT_ID": READER,
        "DOCS_CLIENT_SECRET": READER_SECRET,
        "DOCS_TOKEN_PROVIDER": PROVIDER,
        "DOCS_PROVIDER_CONFIG": config,
    }
    counts = run_snippet("oauthbearer.py", env)
    assert counts["oidc_count"] == counts["provided_count"] == len(positions)

    token, expiry = run_snippet("token_provider.py", {})["client_credentials"](config)
    assert token.count(".") == 2, "a signed JWT: header.payload.signature"
    assert 0 < expiry - time.time() <= TOKEN_LIFESPAN_S
