"""``kafka_rescalable.testing`` without its extra: a clear error, not a bare ImportError."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kafka_rescalable.errors import MissingExtraError
from kafka_rescalable.testing.security import write_tls_files


def test_certificates_without_cryptography_name_the_testing_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry in sys.modules makes `import cryptography` fail as if it were not installed.
    monkeypatch.setitem(sys.modules, "cryptography", None)
    with pytest.raises(MissingExtraError, match=r"kafka-rescalable\[testing\]") as raised:
        write_tls_files(tmp_path)
    assert raised.value.extra == "testing"
    assert not list(tmp_path.iterdir())


def test_certificates_with_cryptography_are_written(tmp_path: Path) -> None:
    files = write_tls_files(tmp_path)
    assert files.ca_path.read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")
