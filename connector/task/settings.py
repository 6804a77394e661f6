"""What an executor needs to read a task, built on the driver from the options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_rescalable.config.kafka_config import redacted_settings
from kafka_rescalable.config.options import KafkaSourceOptions
from kafka_rescalable.consumer_pool import IDLE_TIMEOUT_S
from kafka_rescalable.formats.decoding import DecodePlan
from kafka_rescalable.kafka_clients import executor_config
from kafka_rescalable.task.dead_letters import DeadLetterTarget, dead_letter_target

__all__ = ["RangeReadSettings", "read_settings"]


@dataclass(frozen=True, repr=False)
class RangeReadSettings:
    """What an executor needs to read: picklable, it travels with the pickled reader.

    Its ``repr`` hides secret consumer settings, as the options' does.
    """

    consumer_config: Mapping[str, str]
    include_headers: bool
    fail_on_data_loss: bool
    poll_timeout_ms: int
    batch_size: int
    consumer_idle_timeout_s: float = IDLE_TIMEOUT_S
    """How long the worker's pool keeps a consumer no task uses (``consumer_pool``)."""
    decode: DecodePlan | None = None
    """How typed keys and values are decoded (``valueFormat``, ...); ``None``: raw bytes."""
    dead_letters: DeadLetterTarget | None = None
    """Where records that do not decode go (``deadLetterTopic``); ``None``: not written."""

    def __repr__(self) -> str:
        """Every field, with secret consumer settings replaced by ``'***'``."""
        return (
            f"RangeReadSettings(consumer_config={redacted_settings(self.consumer_config)!r}, "
            f"include_headers={self.include_headers!r}, "
            f"fail_on_data_loss={self.fail_on_data_loss!r}, "
            f"poll_timeout_ms={self.poll_timeout_ms!r}, batch_size={self.batch_size!r}, "
            f"consumer_idle_timeout_s={self.consumer_idle_timeout_s!r}, "
            f"decode={self.decode!r}, dead_letters={self.dead_letters!r})"
        )


def read_settings(
    options: KafkaSourceOptions, decode: DecodePlan | None = None
) -> RangeReadSettings:
    """Return what executors need to read ranges; it travels with the pickled reader.

    ``decode`` says how typed keys and values are decoded (see :mod:`kafka_rescalable.formats`).
    """
    dead_letters = dead_letter_target(options)
    return RangeReadSettings(
        consumer_config=executor_config(options),
        include_headers=options.reads_headers,
        fail_on_data_loss=options.fail_on_data_loss,
        poll_timeout_ms=options.poll_timeout_ms,
        batch_size=options.batch_size,
        decode=decode,
        dead_letters=dead_letters,
    )
