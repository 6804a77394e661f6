"""A real OpenID Connect provider on loopback, for SASL/OAUTHBEARER tests: Keycloak.

:class:`LocalOidcProvider` starts Keycloak (built once into the cache by
:mod:`kafka_rescalable.testing._keycloak`) on a free port with an in-memory database, then
creates through Keycloak's own admin REST API one realm with confidential clients allowed the
client-credentials grant, and a short token lifespan so that tests see tokens expire. A
broker validates the tokens against :attr:`LocalOidcProvider.jwks_url`; librdkafka (or a token
provider) fetches them from :attr:`LocalOidcProvider.token_endpoint_url`.

>>> with LocalOidcProvider(clients={"spark": "s3cret"}) as idp:  # doctest: +SKIP
...     idp.token_endpoint_url
'http://127.0.0.1:41234/realms/kafka/protocol/openid-connect/token'

A provider that cannot be downloaded, built or started raises
:class:`~kafka_rescalable.testing.errors.OidcProviderStartError`: tests fail, never skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from kafka_rescalable.testing._broker.process import last_lines
from kafka_rescalable.testing._broker.readiness import free_ports
from kafka_rescalable.testing._keycloak import java_home, keycloak_home
from kafka_rescalable.testing.errors import OidcProviderStartError

__all__ = ["LocalOidcProvider"]

_LOOPBACK: Final = "127.0.0.1"
# Keycloak's defaults (G1, C2) spend the 2 cores the tests share with Spark and a broker; a
# test provider serves a few hundred requests.
_JAVA_OPTS: Final = (
    "-Xms64m -Xmx384m -XX:MaxMetaspaceSize=256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "
    "-XX:-UsePerfData -XX:+ExitOnOutOfMemoryError -Dfile.encoding=UTF-8"
)
_ADMIN: Final = "admin"


class LocalOidcProvider:
    """Keycloak on ``127.0.0.1`` with one realm of client-credentials clients.

    Parameters
    ----------
    clients
        ``client id -> secret`` of the confidential clients to create.
    realm
        The realm's name; the URLs below are the realm's.
    token_lifespan_s
        How long an access token is valid (Keycloak's ``accessTokenLifespan``).
    start_timeout_s
        How long to wait for Keycloak to answer; its start takes 45-70 s on a busy 2-core
        machine.
    cache_root
        Where the built distribution is cached (see :mod:`kafka_rescalable.testing._keycloak`).
    """

    def __init__(
        self,
        clients: Mapping[str, str],
        *,
        realm: str = "kafka",
        token_lifespan_s: int = 300,
        start_timeout_s: float = 300.0,
        cache_root: Path | None = None,
    ) -> None:
        if not clients:
            msg = "clients must name at least one client id and its secret"
            raise ValueError(msg)
        self._clients = dict(clients)
        self._realm = realm
        self._lifespan_s = token_lifespan_s
        self._timeout_s = start_timeout_s
        self._cache_root = cache_root
        self._process: subprocess.Popen[bytes] | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._port = 0

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> LocalOidcProvider:
        """Start; see :meth:`start`."""
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Stop; see :meth:`stop`."""
        self.stop()

    def start(self) -> str:
        """Start Keycloak, wait until it answers, and create the realm and its clients.

        Returns
        -------
        str
            The realm's issuer URL.

        Raises
        ------
        OidcProviderStartError
            If Keycloak exits, does not answer within ``start_timeout_s``, or refuses the realm.
        """
        if self._process is not None:
            msg = f"the provider is already running at {self.issuer}"
            raise RuntimeError(msg)
        home = keycloak_home(self._cache_root)
        self._folder = tempfile.TemporaryDirectory(prefix="local-oidc-")
        self._port = free_ports(1)[0]
        admin_password = secrets.token_urlsafe(12)
        command = [
            str(home / "bin" / "kc.sh"),
            "start",
            "--optimized",
            "--http-enabled=true",
            f"--http-host={_LOOPBACK}",
            f"--http-port={self._port}",
            "--hostname-strict=false",
            # No cluster discovery on the network: a second Keycloak must not join this one.
            "--cache=local",
        ]
        env = {
            **os.environ,
            "JAVA_HOME": str(java_home()),
            "JAVA_OPTS": _JAVA_OPTS,
            "KC_BOOTSTRAP_ADMIN_USERNAME": _ADMIN,
            "KC_BOOTSTRAP_ADMIN_PASSWORD": admin_password,
        }
        with open(self.log_path, "wb") as log:
            # kc.sh starts Java as its child instead of exec-ing it: a session of their own
            # lets stop() signal both, where signalling the shell would orphan the JVM.
            self._process = subprocess.Popen(
                command,
                cwd=home,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        try:
            self._wait_answering(command)
            self._create_realm(self._admin_token(admin_password))
        except BaseException:
            self.stop()
            raise
        return self.issuer

    def stop(self) -> None:
        """Stop Keycloak (SIGTERM, then SIGKILL) and delete its log; again does nothing."""
        if self._process is not None:
            _stop_group(self._process, 20.0)
            self._process = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    # -- where -------------------------------------------------------------------------------

    @property
    def log_path(self) -> Path:
        """Keycloak's output, for failure messages."""
        if self._folder is None:
            msg = "the provider is not running: call start() or use 'with LocalOidcProvider()'"
            raise RuntimeError(msg)
        return Path(self._folder.name) / "keycloak.log"

    @property
    def issuer(self) -> str:
        """The realm's URL, the ``iss`` of its tokens."""
        return f"http://{_LOOPBACK}:{self._port}/realms/{self._realm}"

    @property
    def token_endpoint_url(self) -> str:
        """Where a client trades its id and secret for a token (client-credentials grant)."""
        return f"{self.issuer}/protocol/openid-connect/token"

    @property
    def jwks_url(self) -> str:
        """The realm's public keys, which a broker checks token signatures against."""
        return f"{self.issuer}/protocol/openid-connect/certs"

    # -- internals ---------------------------------------------------------------------------

    def _wait_answering(self, command: list[str]) -> None:
        url = f"http://{_LOOPBACK}:{self._port}/realms/master/.well-known/openid-configuration"
        deadline = time.monotonic() + self._timeout_s
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                self._fail(f"Keycloak exited with {self._process.returncode}", command)
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 - loopback
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        self._fail(f"Keycloak did not answer at {url} within {self._timeout_s:.0f} s", command)

    def _fail(self, what: str, command: list[str]) -> None:
        tail = "\n".join(last_lines(self.log_path.read_bytes(), 40))
        raise OidcProviderStartError(f"{what}; its last lines:\n{tail}", tail, command)

    def _admin_token(self, password: str) -> str:
        form = {
            "grant_type": "password",
            "client_id": "admin-cli",
            "username": _ADMIN,
            "password": password,
        }
        url = f"http://{_LOOPBACK}:{self._port}/realms/master/protocol/openid-connect/token"
        return str(self._request(url, form=form)["access_token"])

    def _create_realm(self, admin_token: str) -> None:
        realm = {
            "realm": self._realm,
            "enabled": True,
            "accessTokenLifespan": self._lifespan_s,
            "clients": [
                {
                    "clientId": client_id,
                    "secret": secret,
                    "enabled": True,
                    "publicClient": False,
                    "clientAuthenticatorType": "client-secret",
                    "serviceAccountsEnabled": True,
                    "standardFlowEnabled": False,
                    "directAccessGrantsEnabled": False,
                    "protocol": "openid-connect",
                }
                for client_id, secret in self._clients.items()
            ],
        }
        url = f"http://{_LOOPBACK}:{self._port}/admin/realms"
        self._request(url, body=realm, token=admin_token)

    def _request(
        self,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        body: Any = None,
        token: str | None = None,
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
        else:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - loopback
                text = answer.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:500]
            msg = f"Keycloak refused POST {url}: HTTP {error.code} {detail}"
            raise OidcProviderStartError(msg) from error
        return json.loads(text) if text else {}


def _stop_group(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    """SIGTERM the process group ``process`` leads (kc.sh and its JVM), then SIGKILL it."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sent)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            continue
        # The shell is gone; its JVM may take a moment more to leave the group.
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and _group_alive(process.pid):
            time.sleep(0.1)
        if not _group_alive(process.pid):
            return


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True
