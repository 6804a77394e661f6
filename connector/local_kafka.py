"""Kept for compatibility: the embedded broker lives in ``kafka_rescalable.testing``.

``from kafka_rescalable.local_kafka import LocalKafka`` and
``python -m kafka_rescalable.local_kafka`` keep
working; new code imports from :mod:`kafka_rescalable.testing` or runs the console script
``kafka-rescalable-local-kafka``. The source itself never imports this module.
"""

import sys

from kafka_rescalable.testing.local_kafka import (
    DEFAULT_JVM_OPTIONS,
    BrokerStartError,
    LocalKafka,
    main,
)

__all__ = ["DEFAULT_JVM_OPTIONS", "BrokerStartError", "LocalKafka", "main"]

if __name__ == "__main__":
    sys.exit(main())
