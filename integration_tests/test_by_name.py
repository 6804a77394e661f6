"""``format("kafka-rescalable")`` with no register call, from the built wheel, installed.

How the package is installed, and why: the wheel is built from this checkout (``pip wheel
--no-deps``) and installed with pip into a new virtualenv made without pip (well under a
second), whose one ``.pth`` line puts the test run's own site-packages behind it for the
dependencies (pyspark, confluent-kafka, pyarrow), so nothing is downloaded but the build's
setuptools. A ``.pth`` line adds a directory without reading the ``.pth`` files in it, so the
test run's editable install of this checkout stays out of sight: the new Python finds
``kafka_rescalable`` and ``pyspark_kafka_rescalable`` only where pip put the wheel, as a user's
Python does after ``pip install kafka-rescalable``. The query runs in a fresh process with
its own Spark session (PySpark looks the module up when a session first needs a Python data
source, so the suite's session, which found this checkout's install, cannot stand in), from a
scratch directory so the checkout is not on its path either.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

from integration_tests.kafka_helpers import Record, create_topic, produce, read_all

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "integration_tests" / "by_name_query.py"


def install_wheel(tmp_path: Path) -> Path:
    """Build the wheel, install it into a new pip-less virtualenv and return its Python."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("kafka_rescalable-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "pyspark_kafka_rescalable.py" in names
    assert "kafka_rescalable/py.typed" in names
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"kafka_rescalable", "pyspark_kafka_rescalable.py"}, sorted(tops)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = {sysconfig.get_path("purelib"), *site.getsitepackages()}
    Path(purelib, "test_run_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    install = ["install", "-q", "--no-deps", "--no-index", str(wheel)]
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), *install],
        check=True,
        capture_output=True,
    )
    return python


JOB_MODULE = """\"\"\"The job's own {name} module: a name the package's folder once had.\"\"\"

OWNER = "the job"
"""


def test_an_installed_package_is_found_by_name_in_code_and_sql(
    kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    """Found by name from a job directory that holds its own ``state.py`` and ``connector.py``.

    Before 0.2 the package installed the top-level names ``connector`` and ``state``; a job
    directory's modules of those names, first on the driver's and executors' path, shadowed
    them, and the source failed. Now they are the job's own business.
    """
    create_topic(kafka_bootstrap, topic_name, partitions=2)
    produced = produce(
        kafka_bootstrap,
        topic_name,
        [Record(value=f"v{i}".encode(), partition=i % 2) for i in range(20)],
    )
    expected = sorted([p, o, f"v{i}"] for i, (p, o) in enumerate(produced))
    out_topic = f"{topic_name}-out"
    create_topic(kafka_bootstrap, out_topic, partitions=1)
    python = install_wheel(tmp_path)
    workdir = tmp_path / "work"
    workdir.mkdir()
    job = workdir / SCRIPT.name
    shutil.copy(SCRIPT, job)
    for name in ("state", "connector"):
        (workdir / f"{name}.py").write_text(JOB_MODULE.format(name=name))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "PYTHONPATH"))}
    done = subprocess.run(
        [str(python), str(job), kafka_bootstrap, topic_name, out_topic, str(workdir)],
        cwd=workdir,
        env={**env, "PYSPARK_PYTHON": str(python), "SPARK_LOCAL_IP": "127.0.0.1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    venv = str(tmp_path / "venv")
    assert seen["prefix"] == venv
    assert seen["module"].startswith(venv) and seen["connector"].startswith(venv), seen
    assert seen["generic_names"] == [], seen
    assert seen["batch"] == expected
    job_modules = [str(workdir / "connector.py"), str(workdir / "state.py")]
    assert seen["job_modules"] == job_modules
    assert seen["job_modules_on_executor"] == job_modules
    assert seen["stream"] == expected
    assert seen["sql_view"] == expected
    assert "CREATE TEMPORARY VIEW" in seen["sql_table"], seen["sql_table"]
    # No OPTIONS: Spark's own properties only, which used to be refused as an unknown 'owner'.
    assert "Invalid option 'provider': CREATE TABLE" in seen["sql_table_bare"]
    assert "CREATE TEMPORARY VIEW name USING" in seen["sql_table_bare"]
    # Created with columns and OPTIONS, read with SELECT: the source is handed no option.
    assert "No option was given at all" in seen["sql_table_select"], seen["sql_table_select"]
    assert "CREATE TEMPORARY VIEW name USING" in seen["sql_table_select"]
    assert seen["after_register"] == expected
    written = sorted((r.key, r.value) for r in read_all(kafka_bootstrap, out_topic))
    assert written == [(f"k{i}".encode(), f"w{i}".encode()) for i in range(5)]
