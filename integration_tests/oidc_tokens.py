"""Token providers for ``kafkaTokenProvider`` tests: real tokens from the real OIDC provider.

:func:`provide` is what a user's provider is: a function of the ``kafka.sasl.oauthbearer.config``
string that returns ``(token, expiry in epoch seconds, principal, extensions)``. It fetches a
client-credentials token from the token endpoint the config names, with ``urllib``, reading
the client secret from a file (as a mounted secret would be), and appends one line per call,
``<pid> <epoch seconds>``, to the config's ``calls`` file, so a test can see renewals.

The config is space-separated ``key=value`` pairs, as librdkafka's own
``sasl.oauthbearer.config`` is: ``tokenUrl=... clientId=... secretFile=... calls=...``.
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any


def _fields(config: str) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in config.split())


def provide(config: str) -> tuple[str, float, str, dict[str, str]]:
    """Fetch a token with the client-credentials grant; return it with its expiry."""
    fields = _fields(config)
    form = {
        "grant_type": "client_credentials",
        "client_id": fields["clientId"],
        "client_secret": Path(fields["secretFile"]).read_text().strip(),
    }
    request = urllib.request.Request(
        fields["tokenUrl"], data=urllib.parse.urlencode(form).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - the test's URL
        body: dict[str, Any] = json.loads(answer.read())
    with open(fields["calls"], "a") as calls:
        calls.write(f"{os.getpid()} {time.time():.3f}\n")
    return body["access_token"], time.time() + float(body["expires_in"]), fields["clientId"], {}


def broken(config: str) -> tuple[str, float]:
    """Fail as a provider whose token service is down does."""
    msg = "the token service answered 503"
    raise ConnectionError(msg)
