"""The driver's warning that the executors will run the driver's Python, not PYSPARK_PYTHON."""

from __future__ import annotations

from pathlib import Path

from kafka_rescalable.driver.interpreter import executor_python_warning


def python_in(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    return folder


def test_spark_chose_the_drivers_python_while_pyspark_python_names_another(tmp_path: Path) -> None:
    venv = python_in(tmp_path / "venv" / "bin", "python")
    packed = "./environment/bin/python"  # Spark's guide: the archive's Python, for executors
    env = {"PYSPARK_DRIVER_PYTHON": str(venv / "python"), "PYSPARK_PYTHON": packed}
    message = executor_python_warning(env, [str(venv / "python"), "-m", "pyspark.daemon"])
    assert message is not None
    assert f"will run PYSPARK_DRIVER_PYTHON ({venv / 'python'}), not PYSPARK_PYTHON" in message
    assert "docs/deploy/cluster.md" in message


def test_nothing_to_say_for_one_environment_or_a_registered_source(tmp_path: Path) -> None:
    venv = python_in(tmp_path / "venv" / "bin", "python", "python3")
    path = {"PATH": str(venv)}
    same = {**path, "PYSPARK_DRIVER_PYTHON": "python", "PYSPARK_PYTHON": "python3"}
    assert executor_python_warning(same, ["python", "-m", "pyspark.daemon"]) is None
    other = {"PYSPARK_DRIVER_PYTHON": "ipython", "PYSPARK_PYTHON": "python3"}
    # Registered by hand: Spark ran PYSPARK_PYTHON, as the user meant.
    assert executor_python_warning(other, ["python3", "-m", "pyspark.daemon"]) is None
    assert executor_python_warning({"PYSPARK_PYTHON": "python3"}, ["python3"]) is None
    assert executor_python_warning({}, ["python3"]) is None
