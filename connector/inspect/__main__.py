"""``python -m kafka_rescalable.inspect CHECKPOINT``: run the inspector's command line."""

import sys

from kafka_rescalable.inspect.cli import main

# Guarded because tools that walk the package (pkgutil, the error hierarchy test) import
# every module, this one included, and must not run the command.
if __name__ == "__main__":
    sys.exit(main())
