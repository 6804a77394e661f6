"""Security: SASL/OAUTHBEARER, with librdkafka's OIDC settings or a named token provider.

Run by integration_tests/test_oauthbearer.py against a broker that validates the tokens of a
real OIDC provider (Keycloak): ``KAFKA_BOOTSTRAP_SERVERS`` is its SASL_PLAINTEXT listener,
``DOCS_TOKEN_URL`` the provider's token endpoint, ``DOCS_CLIENT_ID`` / ``DOCS_CLIENT_SECRET``
a client allowed the client-credentials grant, ``DOCS_TOKEN_PROVIDER`` a provider's path and
``DOCS_PROVIDER_CONFIG`` what it is called with.
"""

import os

from pyspark.sql import SparkSession

bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "broker:9093")
topic = os.environ.get("DOCS_TOPIC", "orders")
token_url = os.environ.get("DOCS_TOKEN_URL", "https://idp.example.com/oauth2/token")
client_id = os.environ.get("DOCS_CLIENT_ID", "spark-orders")
client_secret = os.environ.get("DOCS_CLIENT_SECRET", "from-your-secret-store")
protocol = os.environ.get("DOCS_SECURITY_PROTOCOL", "SASL_SSL")
provider = os.environ.get("DOCS_TOKEN_PROVIDER", "my_tokens:client_credentials")
provider_config = os.environ.get("DOCS_PROVIDER_CONFIG", "clientId=spark-orders")
spark = SparkSession.builder.master("local[2]").getOrCreate()

# --8<-- [start:oidc]
with_oidc = (
    spark.read.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("kafka.security.protocol", protocol)  # SASL_SSL outside a test
    .option("kafka.sasl.mechanism", "OAUTHBEARER")
    .option("kafka.sasl.oauthbearer.method", "oidc")  # librdkafka fetches and renews tokens
    .option("kafka.sasl.oauthbearer.token.endpoint.url", token_url)
    .option("kafka.sasl.oauthbearer.client.id", client_id)
    .option("kafka.sasl.oauthbearer.client.secret", client_secret)
    .option("subscribe", topic)
    .load()
)
# --8<-- [end:oidc]
oidc_count = with_oidc.count()

# --8<-- [start:token-provider]
with_provider = (
    spark.read.format("kafka-rescalable")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("kafka.security.protocol", protocol)
    .option("kafka.sasl.mechanism", "OAUTHBEARER")
    .option("kafkaTokenProvider", provider)  # "module:function", imported in every process
    .option("kafka.sasl.oauthbearer.config", provider_config)  # the function's argument
    .option("subscribe", topic)
    .load()
)
# --8<-- [end:token-provider]
provided_count = with_provider.count()
