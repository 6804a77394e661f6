"""pyproject.toml's explicit package list maps every package folder to the one import root.

setuptools is given the list by hand (``packages`` plus ``package-dir``: ``connector/`` is
``kafka_rescalable``, ``state/`` is ``kafka_rescalable.state``), so a new sub-package folder
that is not added there would be missing from the wheel while the tests, run from the
checkout's editable install, still pass. This checks the list against the folders.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def _packages_on_disk() -> set[str]:
    found = set()
    for root_name, folder in SETUPTOOLS["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base).parts
            found.add(".".join((root_name, *relative)))
    return found


def test_every_package_folder_is_listed_and_nothing_else() -> None:
    assert set(SETUPTOOLS["packages"]) == _packages_on_disk()


def test_the_repository_folders_install_under_one_root() -> None:
    assert SETUPTOOLS["package-dir"] == {
        "kafka_rescalable": "connector",
        "kafka_rescalable.state": "state",
    }
    assert all(name.split(".")[0] == "kafka_rescalable" for name in SETUPTOOLS["packages"])
