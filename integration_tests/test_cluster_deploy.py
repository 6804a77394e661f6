"""docs/deploy/cluster.md on a real standalone cluster: workers whose Python lacks the package.

One master and one 1-core worker, started with pyspark's own ``bin/spark-class``, for the
whole module. The worker's daemons have a ``PATH`` whose ``python3`` is a new virtualenv with
nothing installed (``bare``), so executors that run ``python3`` have neither pyarrow nor
kafka-rescalable. The driver's side is this test run's virtualenv, "activated": its ``bin``
first on the ``PATH``, no ``PYSPARK_*`` variables, as the guide asks.

The recipe is not copied here: :func:`guide_recipe` takes the bash block from the guide
itself, and the test runs it, so the page and the test cannot drift apart.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow
import pytest

from integration_tests.cluster import StandaloneCluster
from integration_tests.kafka_helpers import Record, create_topic, produce

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "deploy" / "cluster.md"
JOB = Path(__file__).with_name("cluster_job.py")
RECIPE_MARKER = "<!-- recipe: workers without the package"
# The test run's virtualenv, not resolved: its bin/ is what "activated" puts first on PATH.
VENV_BIN = Path(sys.executable).parent


def guide_recipe() -> str:
    """Return the bash block that follows the recipe marker in the guide."""
    text = GUIDE.read_text(encoding="utf-8")
    after = text[text.index(RECIPE_MARKER) :]
    match = re.search(r"```bash\n(.*?)```", after, re.DOTALL)
    assert match is not None, f"no bash block after the recipe marker in {GUIDE}"
    return match.group(1)


def make_python(where: Path, *packages: Path) -> Path:
    """Make a pip-less virtualenv whose only packages are links to ``packages``; return bin/."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    if packages:
        links = where / "linked"
        links.mkdir()
        for package in packages:
            (links / package.name).symlink_to(package)
        where_packages = "import sysconfig; print(sysconfig.get_path('purelib'))"
        purelib = subprocess.run(
            [str(where / "bin" / "python3"), "-c", where_packages],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        Path(purelib, "linked.pth").write_text(f"{links}\n")
    return where / "bin"


def can_import(bin_dir: Path, module: str) -> bool:
    done = subprocess.run([str(bin_dir / "python3"), "-c", f"import {module}"], check=False)
    return done.returncode == 0


@pytest.fixture(scope="module")
def bare_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """Start a master and a 1-core worker whose ``python3`` has no package at all."""
    work = tmp_path_factory.mktemp("standalone")
    bare = make_python(work / "bare-python")
    assert not can_import(bare, "pyarrow") and not can_import(bare, "kafka_rescalable")
    cluster = StandaloneCluster(
        work,
        env={"PATH": f"{bare}:{os.environ['PATH']}", "PYSPARK_PYTHON": str(bare / "python3")},
    )
    try:
        cluster.start_master()
        cluster.start_worker("w1", cores=1)
        yield cluster
    finally:
        cluster.stop()


def run_job(
    cluster: StandaloneCluster, workdir: Path, script: str, bootstrap: str, topic: str
) -> dict:
    """Run ``script`` with bash in ``workdir`` (holding ``job.py``), as the guide's user does."""
    shutil.copy(JOB, workdir / "job.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "PYTHONPATH"))}
    env.update(
        PATH=f"{VENV_BIN}:{os.environ['PATH']}",
        SPARK_MASTER=cluster.url,
        SPARK_LOCAL_IP="127.0.0.1",
        KAFKA_BOOTSTRAP=bootstrap,
        TOPIC=topic,
        ARROW_ONLY_BIN=str(workdir / "arrow-only" / "bin"),
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def small_topic(bootstrap: str, topic: str) -> list[list]:
    create_topic(bootstrap, topic, partitions=2)
    produced = produce(
        bootstrap, topic, [Record(value=f"v{i}".encode(), partition=i % 2) for i in range(10)]
    )
    return sorted([p, o, f"v{i}"] for i, (p, o) in enumerate(produced))


def test_the_guides_recipe_reads_by_name_on_workers_without_the_package(
    bare_cluster: StandaloneCluster, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    expected = small_topic(kafka_bootstrap, topic_name)
    recipe = guide_recipe()
    assert "kafka-rescalable-pack" in recipe and "spark-submit" in recipe
    seen = run_job(bare_cluster, tmp_path, recipe, kafka_bootstrap, topic_name)
    assert seen == {"rows": expected}
    archive = tmp_path / "kafka-rescalable-env.tar.gz"
    # Small: pyspark (hundreds of MB) is not in it; the workers' Spark gives its Python code.
    assert archive.stat().st_size < 120e6, archive.stat().st_size


def test_workers_without_the_package_fail_with_a_message_that_says_what_to_do(
    bare_cluster: StandaloneCluster, kafka_bootstrap: str, topic_name: str, tmp_path: Path
) -> None:
    """``spark.pyspark.python`` alone: the executors run their own ``python3``, which lacks us.

    That ``python3`` has pyarrow (as a cluster's pyspark[sql] install would) but not
    kafka-rescalable, so the failure is ours to explain, not PySpark's.
    """
    small_topic(kafka_bootstrap, topic_name)
    arrow_only = make_python(tmp_path / "arrow-only", Path(pyarrow.__file__).parent)
    assert can_import(arrow_only, "pyarrow") and not can_import(arrow_only, "kafka_rescalable")
    script = (
        'spark-submit --master "$SPARK_MASTER" '
        f"--conf spark.pyspark.python={sys.executable} "
        '--conf spark.executorEnv.PATH="$ARROW_ONLY_BIN:/usr/bin:/bin" '
        "--conf spark.task.maxFailures=1 job.py"
    )
    seen = run_job(bare_cluster, tmp_path, script, kafka_bootstrap, topic_name)
    error = seen["error"]
    assert "kafka-rescalable cannot run on executor host" in error, error[-3000:]
    assert f"its Python, {arrow_only / 'python3'}, has no module 'kafka_rescalable'" in error
    assert "spark.pyspark.python alone does not choose it" in error
    assert "kafka-rescalable-pack" in error and "docs/deploy/cluster.md" in error
