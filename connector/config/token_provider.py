"""``kafkaTokenProvider``: a Python function, named by import path, that gives OAUTHBEARER tokens.

Some clouds sign in with tokens no OIDC client-credentials flow gives: AWS MSK with IAM signs
a token with the AWS credentials of the process (``aws-msk-iam-sasl-signer-python``), and a
company may have its own token service. librdkafka takes such tokens from a callback,
confluent-kafka's ``oauth_cb``. A callback cannot travel in a string option, so the option
names it (``my_pkg.tokens:provide``) and every process that opens a Kafka client, the driver
and each Python worker, imports it.

The path is checked on the driver when the options are parsed (the module imports, the
attribute exists and is callable), so a typo fails at ``load()`` naming the option rather than
in a task. The callable is not called here: the runtime side,
:mod:`kafka_rescalable.token_callback`, calls it when a client needs a token.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kafka_rescalable.errors import InvalidOptionError

__all__ = ["OPTION", "TokenProvider", "check_token_provider_settings", "parse_token_provider"]

OPTION: Final = "kafkaTokenProvider"

_PATH: Final = re.compile(
    r"^(?P<module>[A-Za-z_]\w*(\.[A-Za-z_]\w*)*):(?P<attribute>[A-Za-z_]\w*)$"
)


@dataclass(frozen=True)
class TokenProvider:
    """Where a token provider lives: ``module:attribute``; picklable, it travels to executors.

    Attributes
    ----------
    module
        The dotted module name, imported on the driver and in every Python worker.
    attribute
        The name of the callable in that module.
    """

    module: str
    attribute: str

    def __str__(self) -> str:
        """Spell the path as the option does, ``module:attribute``: every message uses it."""
        return f"{self.module}:{self.attribute}"

    def load(self) -> Callable[..., Any]:
        """Import the module and return the callable.

        Raises
        ------
        ImportError
            If the module cannot be imported here (not shipped to this process).
        AttributeError
            If the module has no such attribute.
        TypeError
            If the attribute is not callable.
        """
        found = getattr(importlib.import_module(self.module), self.attribute)
        if not callable(found):
            msg = f"{self} is a {type(found).__name__}, not a function"
            raise TypeError(msg)
        return found


def parse_token_provider(name: str, text: str) -> TokenProvider | None:
    """Read ``kafkaTokenProvider`` and import it now, so a bad path fails at ``load()``.

    Raises
    ------
    InvalidOptionError
        Naming the option, when the text is not ``module:function``, the module does not
        import, or the attribute is missing or not callable.
    """
    if not text.strip():
        return None
    match = _PATH.match(text.strip())
    if match is None:
        msg = (
            f"{text!r} is not an import path; write it as 'package.module:function', e.g. "
            "'my_tokens.msk:provide'"
        )
        raise InvalidOptionError(name, msg)
    provider = TokenProvider(match.group("module"), match.group("attribute"))
    try:
        provider.load()
    except ImportError as error:
        msg = (
            f"module {provider.module!r} cannot be imported on the driver ({error}); install "
            "it, or put it on the path, on the driver and the executors (see the deployment "
            "page: it ships like the rest of the job's Python code)"
        )
        raise InvalidOptionError(name, msg) from error
    except AttributeError as error:
        msg = f"module {provider.module!r} has no attribute {provider.attribute!r}"
        raise InvalidOptionError(name, msg) from error
    except TypeError as error:
        msg = f"{error}; it must be called with the 'kafka.sasl.oauthbearer.config' string"
        raise InvalidOptionError(name, msg) from error
    return provider


def check_token_provider_settings(
    provider: TokenProvider | None, settings: Mapping[str, str]
) -> None:
    """Refuse a provider the clients would not call, or one that competes with OIDC.

    Parameters
    ----------
    provider
        The parsed ``kafkaTokenProvider``, or ``None``.
    settings
        The librdkafka settings translated from ``kafka.*``.

    Raises
    ------
    InvalidOptionError
        Naming ``kafkaTokenProvider``.
    """
    if provider is None:
        return
    mechanism = settings.get("sasl.mechanisms", "").strip().upper()
    if mechanism != "OAUTHBEARER":
        msg = (
            f"{provider} gives OAUTHBEARER tokens, but 'kafka.sasl.mechanism' is "
            f"{mechanism or 'unset'}; set it to 'OAUTHBEARER' (and 'kafka.security.protocol' to "
            "SASL_SSL or SASL_PLAINTEXT)"
        )
        raise InvalidOptionError(OPTION, msg)
    if settings.get("sasl.oauthbearer.method", "").strip().lower() == "oidc":
        msg = (
            "it cannot be combined with 'kafka.sasl.oauthbearer.method' = 'oidc': both would "
            "give the tokens. Keep one: the provider, or librdkafka's own OIDC sign-in"
        )
        raise InvalidOptionError(OPTION, msg)
