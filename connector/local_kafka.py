"""Kept for compatibility: the embedded broker now lives in :mod:`connector.testing.local_kafka`.

``from connector.local_kafka import LocalKafka`` and ``python -m connector.local_kafka`` keep
working; new code imports from :mod:`connector.testing` or runs the console script
``kafka-rescalable-local-kafka``. The source itself never imports this module.
"""

import sys

from connector.testing.local_kafka import (
    DEFAULT_JVM_OPTIONS,
    BrokerStartError,
    LocalKafka,
    main,
)

__all__ = ["DEFAULT_JVM_OPTIONS", "BrokerStartError", "LocalKafka", "main"]

if __name__ == "__main__":
    sys.exit(main())
