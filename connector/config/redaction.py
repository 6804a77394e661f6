"""Which secret options Spark itself prints in full, and the warning that says so.

Spark prints a streaming DataFrame's options in its logical plan (``explain(True)``,
``explain("extended")``) and hides a value only when the option's name or value matches
``spark.sql.redaction.options.regex`` (default ``(?i)url``) or ``spark.redaction.regex``
(default ``(?i)secret|password|token|access[.]?key|credential``). A Python data source gets a
copy of the options and cannot change what the JVM prints, and those defaults miss a few secret
settings: ``schema.registry.basic.auth.user.info``, ``kafka.ssl.key.pem``, the private keys and
passphrases of ``kafka.sasl.oauthbearer.assertion.*``. The way out that needs no session
setting is another spelling of the same secret, one Spark hides: credentials in the registry's
URL, a key in a file (``kafka.ssl.key.location``). The connector's own reprs, errors and logs
hide every secret whatever its name (see ``kafka_config.is_secret_setting``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from kafka_rescalable._logging import logger
from kafka_rescalable.config.kafka_config import is_secret_setting

__all__ = ["SPARK_DEFAULT_REDACTION", "shown_by_spark", "warn_shown_by_spark"]

SPARK_DEFAULT_REDACTION: Final = re.compile(
    r"(?i)url|secret|password|token|access[.]?key|credential"
)
"""Spark's two default patterns in one: an option whose name or value matches is hidden."""

_PREFIXES: Final = ("kafka.", "schema.registry.")

_SAFER: Final = {
    "schema.registry.basic.auth.user.info": (
        "give the credentials in 'schema.registry.url' instead "
        "(https://user:password@registry:8081), which Spark hides"
    ),
    "kafka.ssl.key.pem": "give the key as a file in 'kafka.ssl.key.location' instead",
}

_warned: set[str] = set()


def shown_by_spark(options: Mapping[str, str]) -> list[str]:
    """Name the secret options (``kafka.*``, ``schema.registry.*``) Spark's defaults print.

    Parameters
    ----------
    options
        The options as the data source gets them (any case).
    """
    shown = []
    for key, value in options.items():
        name = key.lower()
        setting = next((name[len(p) :] for p in _PREFIXES if name.startswith(p)), None)
        if setting is None or not is_secret_setting(setting):
            continue
        if not (SPARK_DEFAULT_REDACTION.search(name) or SPARK_DEFAULT_REDACTION.search(value)):
            shown.append(name)
    return sorted(shown)


def warn_shown_by_spark(options: Mapping[str, str]) -> None:
    """Log a warning, once per option and Python process, for each option Spark would print."""
    for name in shown_by_spark(options):
        if name in _warned:
            continue
        _warned.add(name)
        safer = _SAFER.get(name, "give the secret under a setting Spark hides, if there is one")
        logger.warning(
            "option '%s' holds a secret that Spark prints in full in a streaming DataFrame's "
            "plan (explain(True)): its default redaction hides only options whose name or "
            "value matches 'url', 'secret', 'password', 'token', 'access key' or 'credential'. "
            "%s; or add the option's name to the session's spark.sql.redaction.options.regex",
            name,
            safer[0].upper() + safer[1:],
        )
