"""Secured listeners for the local cluster: SASL users, TLS certificates and ACLs.

:class:`SecurityConfig` says what a test wants (which listeners, which mechanisms, which users,
an authorizer or not); it turns that into broker properties, storage-tool arguments (SCRAM
credentials are written into the cluster's first metadata when it is formatted) and librdkafka
client settings. :func:`write_tls_files` makes a throwaway CA and a server certificate for
``127.0.0.1`` and ``localhost`` with the ``cryptography`` package, imported only when a
``SASL_SSL`` listener is asked for.

The PLAINTEXT listener always stays, and inter-broker and controller traffic use it: its
principal, ``User:ANONYMOUS``, is therefore a super user under the authorizer. Tests of
authorization connect through a SASL listener; setup (topics, ACLs) may use PLAINTEXT.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from kafka_rescalable.errors import MissingExtraError

__all__ = [
    "LISTENERS",
    "MECHANISMS",
    "Listener",
    "Mechanism",
    "SecurityConfig",
    "TlsFiles",
    "write_tls_files",
]

Listener = Literal["PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL"]
Mechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]

LISTENERS: tuple[str, ...] = ("SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS: tuple[str, ...] = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")

# Names and passwords go unquoted into the storage tool's "[name=...,password=...]" and quoted
# into a JAAS line: keep out what either syntax would read as structure.
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_PASSWORD = re.compile(r"^[^\s,\[\]=\"\\;]+$")
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
# Checks a token's signature (the provider's JWKS) and expiry; the principal is its "sub".
_OAUTH_VALIDATOR = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
)
# Kafka 4 fetches only the URLs this JVM system property lists.
_ALLOWED_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# The principal of PLAINTEXT connections: our brokers and controllers talk to each other so.
_INTERNAL_PRINCIPAL = "User:ANONYMOUS"


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of a throwaway certificate authority and the brokers' certificate.

    Attributes
    ----------
    ca_path
        The CA certificate: a client's ``ssl.ca.location``.
    keystore_path
        The server's private key (PKCS#8, unencrypted) then its certificate chain, as
        Kafka's ``ssl.keystore.type=PEM`` reads it.
    """

    ca_path: Path
    keystore_path: Path


@dataclass(frozen=True)
class SecurityConfig:
    """What a secured local cluster offers besides its PLAINTEXT listener.

    Every user, the admin included, can log in with every mechanism on every listener asked
    for: PLAIN users are listed in the listeners' JAAS configuration, SCRAM credentials are
    added when the storage is formatted.

    Parameters
    ----------
    users
        ``name -> password`` of the ordinary users.
    admin_user, admin_password
        A user that is also a super user under the authorizer.
    listeners
        Extra client listeners, among :data:`LISTENERS`. ``SASL_SSL`` makes the cluster
        generate TLS files (see :func:`write_tls_files`).
    mechanisms
        SASL mechanisms, among :data:`MECHANISMS`.
    authorizer
        Run KRaft's ``StandardAuthorizer`` with ``allow.everyone.if.no.acl.found=false``:
        ordinary users can do nothing they were not granted.
    jwks_url
        For ``OAUTHBEARER``: the OpenID Connect provider's JWKS endpoint, whose keys the
        brokers check tokens against (see
        :class:`kafka_rescalable.testing.oidc_provider.LocalOidcProvider`); the brokers' JVMs
        also need :meth:`jvm_options`. Users and passwords play no part in it.

    Raises
    ------
    ValueError
        On an unknown listener or mechanism, an empty choice, a name or password the
        broker's configuration syntax cannot carry, or ``OAUTHBEARER`` without ``jwks_url``.
    """

    users: Mapping[str, str] = field(default_factory=dict)
    admin_user: str = "admin"
    admin_password: str = "admin-secret"
    listeners: tuple[str, ...] = LISTENERS
    mechanisms: tuple[str, ...] = ("PLAIN", "SCRAM-SHA-512")
    authorizer: bool = False
    jwks_url: str | None = None

    def __post_init__(self) -> None:
        """Check every choice now, naming the bad value and the valid ones."""
        # A private read-only copy: the caller's dict may change, this value must not.
        object.__setattr__(self, "users", MappingProxyType(dict(self.users)))
        object.__setattr__(self, "listeners", tuple(self.listeners))
        object.__setattr__(self, "mechanisms", tuple(self.mechanisms))
        _check_choices("listeners", self.listeners, LISTENERS)
        _check_choices("mechanisms", self.mechanisms, MECHANISMS)
        if ("OAUTHBEARER" in self.mechanisms) != (self.jwks_url is not None):
            msg = "OAUTHBEARER needs jwks_url, and jwks_url is only for OAUTHBEARER"
            raise ValueError(msg)
        if self.admin_user in self.users:
            msg = f"user {self.admin_user!r} is the admin user: do not list it in users too"
            raise ValueError(msg)
        for name, password in self.all_users().items():
            if not _NAME.match(name):
                msg = f"user name {name!r} must match {_NAME.pattern}"
                raise ValueError(msg)
            if not _PASSWORD.match(password):
                msg = (
                    f"the password of {name!r} must be non-empty, without spaces or any of "
                    "',[]=\"\\;'"
                )
                raise ValueError(msg)

    def __hash__(self) -> int:
        """Hash what identifies the configuration; ``users`` as its sorted items."""
        return hash(
            (
                tuple(sorted(self.users.items())),
                self.admin_user,
                self.admin_password,
                self.listeners,
                self.mechanisms,
                self.authorizer,
                self.jwks_url,
            )
        )

    @property
    def uses_tls(self) -> bool:
        """Whether a listener needs certificates."""
        return "SASL_SSL" in self.listeners

    def all_users(self) -> dict[str, str]:
        """Return ``name -> password`` of every user, the admin first."""
        return {self.admin_user: self.admin_password, **self.users}

    def password_of(self, user: str) -> str:
        """Return ``user``'s password, or raise :class:`KeyError` naming the known users."""
        users = self.all_users()
        if user not in users:
            msg = f"no user {user!r}; the cluster has {sorted(users)}"
            raise KeyError(msg)
        return users[user]

    def broker_properties(self, tls: TlsFiles | None) -> dict[str, str]:
        """Return the ``server.properties`` entries for the SASL listeners and the authorizer.

        Parameters
        ----------
        tls
            The certificate files; required when a listener is ``SASL_SSL``.
        """
        if self.uses_tls and tls is None:
            msg = "a SASL_SSL listener needs TLS files"
            raise ValueError(msg)
        mechanisms = ",".join(self.mechanisms)
        properties = {"sasl.enabled.mechanisms": mechanisms}
        plain_users = " ".join(
            f'user_{name}="{password}"' for name, password in self.all_users().items()
        )
        for listener in self.listeners:
            prefix = f"listener.name.{listener.lower()}"
            properties[f"{prefix}.sasl.enabled.mechanisms"] = mechanisms
            for mechanism in self.mechanisms:
                if mechanism == "PLAIN":
                    jaas = f"{_PLAIN_MODULE} required {plain_users};"
                elif mechanism == "OAUTHBEARER":
                    jaas = f"{_OAUTH_MODULE} required;"
                    handler = f"{prefix}.oauthbearer.sasl.server.callback.handler.class"
                    properties[handler] = _OAUTH_VALIDATOR
                else:  # SCRAM checks against the credentials in the cluster metadata.
                    jaas = f"{_SCRAM_MODULE} required;"
                properties[f"{prefix}.{mechanism.lower()}.sasl.jaas.config"] = jaas
            if listener == "SASL_SSL" and tls is not None:
                properties[f"{prefix}.ssl.keystore.type"] = "PEM"
                properties[f"{prefix}.ssl.keystore.location"] = str(tls.keystore_path)
        if self.jwks_url is not None:
            properties["sasl.oauthbearer.jwks.endpoint.url"] = self.jwks_url
        if self.authorizer:
            properties.update(
                {
                    "authorizer.class.name": _AUTHORIZER,
                    "super.users": f"User:{self.admin_user};{_INTERNAL_PRINCIPAL}",
                    "allow.everyone.if.no.acl.found": "false",
                }
            )
        return properties

    def jvm_options(self) -> tuple[str, ...]:
        """Return the brokers' extra JVM flags: Kafka 4 reads only JWKS URLs listed in one."""
        if self.jwks_url is None:
            return ()
        return (f"-D{_ALLOWED_URLS}={self.jwks_url}",)

    def format_arguments(self) -> list[str]:
        """Return ``--add-scram`` arguments that give every user its SCRAM credentials."""
        arguments: list[str] = []
        for mechanism in self.mechanisms:
            if not mechanism.startswith("SCRAM-"):
                continue
            for name, password in self.all_users().items():
                arguments += ["--add-scram", f"{mechanism}=[name={name},password={password}]"]
        return arguments

    def client_config(
        self,
        listener: str,
        *,
        user: str | None = None,
        mechanism: str | None = None,
        password: str | None = None,
        tls: TlsFiles | None = None,
    ) -> dict[str, str]:
        """Return librdkafka security settings for ``user`` on ``listener`` (no bootstrap).

        Parameters
        ----------
        listener
            ``PLAINTEXT`` or one of :attr:`listeners`.
        user
            Defaults to the admin user; ignored on PLAINTEXT.
        mechanism
            Defaults to the first of :attr:`mechanisms`.
        password
            Overrides the user's password, to test a failed login.
        tls
            The cluster's TLS files, for ``ssl.ca.location``.
        """
        if listener == "PLAINTEXT":
            return {"security.protocol": "PLAINTEXT"}
        _check_choices("listener", (listener,), self.listeners)
        chosen = mechanism if mechanism is not None else self.mechanisms[0]
        _check_choices("mechanism", (chosen,), self.mechanisms)
        if chosen == "OAUTHBEARER":
            msg = "OAUTHBEARER clients sign in with the OIDC provider's tokens, not a password"
            raise ValueError(msg)
        name = user if user is not None else self.admin_user
        config = {
            "security.protocol": listener,
            "sasl.mechanism": chosen,
            "sasl.username": name,
            "sasl.password": password if password is not None else self.password_of(name),
        }
        if listener == "SASL_SSL":
            if tls is None:
                msg = "SASL_SSL client settings need the cluster's TLS files"
                raise ValueError(msg)
            config["ssl.ca.location"] = str(tls.ca_path)
        return config


def write_tls_files(folder: Path, valid_days: int = 7) -> TlsFiles:
    """Create a CA and a server certificate for ``127.0.0.1`` and ``localhost`` in ``folder``.

    EC P-256 keys: generated in microseconds, where RSA would add a noticeable pause to every
    cluster start, and both Java and librdkafka accept them. The certificates are backdated by
    an hour so that a clock a little behind does not reject them.

    Parameters
    ----------
    folder
        An existing folder; ``ca.pem`` and ``server.pem`` are written in it.
    valid_days
        How long the certificates stay valid.

    Returns
    -------
    TlsFiles
        The paths of the two files.
    """
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError as error:
        msg = (
            "a SASL_SSL listener needs TLS certificates, made with the 'cryptography' package: "
            "pip install 'kafka-rescalable[testing]'"
        )
        raise MissingExtraError(msg, "testing") from error

    now = datetime.datetime.now(datetime.UTC)
    not_before = now - datetime.timedelta(hours=1)
    not_after = now + datetime.timedelta(days=valid_days)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "local-kafka test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )

    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )

    pem = serialization.Encoding.PEM
    ca_path = folder / "ca.pem"
    ca_path.write_bytes(ca_cert.public_bytes(pem))
    keystore_path = folder / "server.pem"
    keystore_path.write_bytes(
        server_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        + server_cert.public_bytes(pem)
        + ca_cert.public_bytes(pem)
    )
    keystore_path.chmod(0o600)
    return TlsFiles(ca_path=ca_path, keystore_path=keystore_path)


def _check_choices(name: str, chosen: tuple[str, ...], valid: tuple[str, ...]) -> None:
    if not chosen:
        msg = f"{name} must name at least one of {', '.join(valid)}"
        raise ValueError(msg)
    for value in chosen:
        if value not in valid:
            msg = f"{name}: {value!r} is not one of {', '.join(valid)}"
            raise ValueError(msg)
