"""Token providers for ``kafkaTokenProvider``: a module of functions, ``config -> (token, expiry)``.

``client_credentials`` is run by integration_tests/test_oauthbearer.py against a real OIDC
provider (Keycloak). ``msk_iam`` is the AWS MSK IAM recipe: it is not run by any test (the
tests cannot reach AWS).
"""

# --8<-- [start:client-credentials]
import json
import time
import urllib.parse
import urllib.request
from pathlib import Path


def client_credentials(config: str) -> tuple[str, float]:
    """Fetch a token with the OAuth client-credentials grant.

    ``config`` is ``kafka.sasl.oauthbearer.config``: here ``tokenUrl=... clientId=...
    secretFile=...``, the secret read from a file (a mounted secret), not an option.
    """
    fields = dict(pair.split("=", 1) for pair in config.split())
    form = {
        "grant_type": "client_credentials",
        "client_id": fields["clientId"],
        "client_secret": Path(fields["secretFile"]).read_text().strip(),
    }
    request = urllib.request.Request(fields["tokenUrl"], urllib.parse.urlencode(form).encode())
    with urllib.request.urlopen(request, timeout=30) as answer:
        body = json.loads(answer.read())
    # Seconds since the epoch: librdkafka renews the token at 80% of its lifetime.
    return body["access_token"], time.time() + float(body["expires_in"])


# --8<-- [end:client-credentials]


# --8<-- [start:msk-iam]
def msk_iam(config: str) -> tuple[str, float]:
    """Sign an AWS MSK IAM token with this process's AWS credentials (untested here).

    Needs ``pip install aws-msk-iam-sasl-signer-python`` on the driver and the executors;
    ``config`` is the cluster's region, e.g. ``kafka.sasl.oauthbearer.config=eu-west-1``.
    """
    from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

    token, expiry_ms = MSKAuthTokenProvider.generate_auth_token(config.strip())
    return token, expiry_ms / 1000  # the signer gives milliseconds; the contract is seconds


# --8<-- [end:msk-iam]
