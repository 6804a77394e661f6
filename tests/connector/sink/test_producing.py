"""``produce_all``: what a task raises when its producer refuses a record at once."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka import KafkaError, KafkaException

from kafka_rescalable.sink.producing import DeliveryFailures, produce_all
from kafka_rescalable.sink.rows import SinkColumns

FENCED = KafkaError(
    KafkaError._FENCED, "transactional producer fenced by newer producer instance", fatal=True
)


class RefusingProducer:
    """Takes ``accepted`` records, then refuses each with ``refusal``; ``poll`` raises ``on_poll``.

    librdkafka's own behaviour is checked against a broker in
    ``integration_tests/test_sink.py``; this stands in for it to pin what the task raises.
    """

    def __init__(self, accepted: int, refusal: KafkaError, on_poll: KafkaError | None) -> None:
        self.produced: list[bytes] = []
        self.polls = 0
        self._accepted = accepted
        self._refusal = refusal
        self._on_poll = on_poll

    def produce(self, topic: str, value: Any, key: Any = None, *_: Any, **__: Any) -> None:
        """Queue the record, or refuse it as librdkafka does: by raising."""
        if len(self.produced) >= self._accepted:
            raise KafkaException(self._refusal)
        self.produced.append(value)

    def poll(self, _timeout: float) -> int:
        """Serve callbacks; a fatal producer raises its fatal error here."""
        self.polls += 1
        if self._on_poll is not None:
            raise KafkaException(self._on_poll)
        return 0


def _rows(count: int) -> list[pa.RecordBatch]:
    text = [str(v) for v in range(count)]
    return [pa.RecordBatch.from_pydict({"value": text, "key": text})]


def _produce(producer: RefusingProducer) -> None:
    produce_all(producer, _rows(5), SinkColumns(has_key=True, topic="out"), DeliveryFailures())


def test_a_fatal_refusal_raises_what_made_the_producer_fatal() -> None:
    producer = RefusingProducer(2, KafkaError(KafkaError._FATAL), on_poll=FENCED)
    with pytest.raises(KafkaException) as raised:
        _produce(producer)
    assert raised.value.args[0].code() == KafkaError._FENCED
    assert "fenced" in str(raised.value)
    assert isinstance(raised.value.__cause__, KafkaException)
    assert raised.value.__cause__.args[0].code() == KafkaError._FATAL
    assert len(producer.produced) == 2


def test_a_fatal_refusal_without_a_cause_to_poll_is_raised_as_it_is() -> None:
    producer = RefusingProducer(0, KafkaError(KafkaError._FATAL), on_poll=None)
    with pytest.raises(KafkaException) as raised:
        _produce(producer)
    assert raised.value.args[0].code() == KafkaError._FATAL
    assert producer.polls == 1


def test_any_other_refusal_is_raised_as_it_is_without_polling() -> None:
    too_large = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE)
    producer = RefusingProducer(1, too_large, on_poll=FENCED)
    with pytest.raises(KafkaException) as raised:
        _produce(producer)
    assert raised.value.args[0].code() == KafkaError.MSG_SIZE_TOO_LARGE
    assert producer.polls == 0
