"""One root for every error the library raises: ``except KafkaRescalableError`` catches all."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import kafka_rescalable
import kafka_rescalable.state as state
from kafka_rescalable import KafkaRescalableError


def library_error_classes() -> list[type[BaseException]]:
    """Every exception class defined in a module of ``kafka_rescalable`` (``state`` included)."""
    found: dict[str, type[BaseException]] = {}
    for package in (kafka_rescalable,):  # kafka_rescalable.state is inside it
        for module_info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(module_info.name)
            for _, value in inspect.getmembers(module, inspect.isclass):
                if issubclass(value, BaseException) and value.__module__ == module.__name__:
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


ERRORS = library_error_classes()


def test_the_library_defines_errors_in_both_packages() -> None:
    modules = {error.__module__.split(".")[1] == "state" for error in ERRORS}
    assert modules == {True, False}
    assert len(ERRORS) >= 15


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: f"{e.__module__}.{e.__qualname__}")
def test_every_error_class_derives_from_the_one_root(error: type[BaseException]) -> None:
    assert issubclass(error, KafkaRescalableError)
    assert state.KafkaRescalableError is KafkaRescalableError
