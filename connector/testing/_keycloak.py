"""Keycloak's distribution, downloaded from Maven Central and built once into the cache.

The OAUTHBEARER tests need a real OpenID Connect provider: a token endpoint that signs JWTs
and a JWKS endpoint the broker checks them against. Keycloak is one, and its distribution is
a plain zip on Maven Central (``org.keycloak:keycloak-quarkus-dist``), about 160 MB, so a
machine that fetches Kafka's jars can fetch it too; it runs on the Java 17 the tests already
need. Measured on the project's 2-core machine: the download takes about a second from Maven
Central, the build about a minute, each start 45-70 s (busy machine).

Keycloak is a Quarkus application that is "built" for its configuration before it starts
optimized; :func:`keycloak_home` does that once, for an in-memory database (``dev-mem``:
nothing on disk outlives a start), and
records it in a marker, as :mod:`kafka_rescalable.testing.jars` records Kafka's jars. Later
calls only read the marker: no network, no build.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
import zipfile
from pathlib import Path
from typing import Final

from kafka_rescalable.testing._broker.process import last_lines, run_captured
from kafka_rescalable.testing._cache import exclusive_lock, write_marker
from kafka_rescalable.testing.errors import OidcProviderStartError
from kafka_rescalable.testing.jars import default_cache_root, find_java

__all__ = ["KEYCLOAK_VERSION", "java_home", "keycloak_home"]

KEYCLOAK_VERSION: Final = "26.4.0"
"""Runs on Java 17 (checked); later 26.x releases are on Maven Central too."""

_URL: Final = (
    "https://repo1.maven.org/maven2/org/keycloak/keycloak-quarkus-dist/{v}/"
    "keycloak-quarkus-dist-{v}.zip"
)
_MARKER: Final = "installed.json"
_BUILD_OPTIONS: Final = ("--db=dev-mem", "--health-enabled=false")
_DOWNLOAD_TIMEOUT_S: Final = 600.0
_BUILD_TIMEOUT_S: Final = 600.0


def java_home() -> Path:
    """Return the Java installation ``find_java`` picks, as ``JAVA_HOME`` for ``kc.sh``."""
    return Path(os.path.realpath(find_java())).parent.parent


def keycloak_home(cache_root: Path | None = None) -> Path:
    """Return a built Keycloak distribution, downloading and building it on first use.

    Parameters
    ----------
    cache_root
        Where caches live; default :func:`kafka_rescalable.testing.jars.default_cache_root`.

    Raises
    ------
    OidcProviderStartError
        If the zip cannot be downloaded or checked, or the build fails, with its last lines.
    """
    folder = (cache_root or default_cache_root()) / "keycloak" / KEYCLOAK_VERSION
    folder.parent.mkdir(parents=True, exist_ok=True)
    home = folder / f"keycloak-{KEYCLOAK_VERSION}"
    with exclusive_lock(folder.parent / f"{KEYCLOAK_VERSION}.lock"):
        if (folder / _MARKER).is_file() and (home / "bin" / "kc.sh").is_file():
            return home
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        _download_and_unpack(folder)
        _build(home)
        write_marker(folder / _MARKER, {"version": KEYCLOAK_VERSION, "build": _BUILD_OPTIONS})
    return home


def _download_and_unpack(folder: Path) -> None:
    url = _URL.format(v=KEYCLOAK_VERSION)
    with tempfile.TemporaryDirectory(dir=folder) as temp:
        archive = Path(temp) / "keycloak.zip"
        try:
            with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as answer:  # noqa: S310
                archive.write_bytes(answer.read())
            with urllib.request.urlopen(url + ".sha1", timeout=60) as answer:  # noqa: S310
                expected = answer.read().decode().split()[0].strip()
        except OSError as error:
            msg = f"could not download Keycloak {KEYCLOAK_VERSION} from {url}: {error}"
            raise OidcProviderStartError(msg) from error
        actual = hashlib.sha1(archive.read_bytes()).hexdigest()  # noqa: S324 - Maven's checksum
        if actual != expected:
            msg = f"{url} has SHA-1 {actual}, Maven Central says {expected}: a corrupt download"
            raise OidcProviderStartError(msg)
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(folder)
    for script in (folder / f"keycloak-{KEYCLOAK_VERSION}" / "bin").glob("*.sh"):
        script.chmod(0o755)  # zipfile drops the execute bit


def _build(home: Path) -> None:
    command = [str(home / "bin" / "kc.sh"), "build", *_BUILD_OPTIONS]
    env = {**os.environ, "JAVA_HOME": str(java_home())}
    done = run_captured(command, cwd=home, timeout_s=_BUILD_TIMEOUT_S, env=env)
    if done.returncode != 0:
        tail = "\n".join(last_lines(done.output, 40))
        what = "did not finish in time" if done.timed_out else f"failed (exit {done.returncode})"
        msg = f"Keycloak's build {what}"
        raise OidcProviderStartError(f"{msg}:\n{tail}", tail, command)
