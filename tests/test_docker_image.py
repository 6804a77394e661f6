"""The Docker image's file list builds the right wheel, checked without a Docker engine.

docker/Dockerfile copies a list of files into the image and runs ``pip install .`` there. A
file missing from that list (as ``pyspark_kafka_rescalable.py`` once was) builds an image
where ``format("kafka-rescalable")`` is not found by name. The test reads the Dockerfile's
``COPY`` lines, copies exactly those files from the build context (the repository root, as
docker/compose.yaml sets it), builds the wheel there, and checks what it holds.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "docker" / "Dockerfile"
# What .dockerignore keeps out of the context that these folders could hold.
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


def copy_lines(dockerfile: Path) -> list[tuple[list[str], str]]:
    """Return ``(sources, destination)`` of every ``COPY`` instruction, continuations joined."""
    text = dockerfile.read_text(encoding="utf-8").replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        if not line.strip().upper().startswith("COPY "):
            continue  # a comment may hold an apostrophe that shlex would refuse
        words = shlex.split(line.strip())
        if words:
            arguments = [w for w in words[1:] if not w.startswith("--")]
            found.append((arguments[:-1], arguments[-1]))
    return found


def copy_as_docker_would(dockerfile: Path, context: Path, workdir: Path) -> None:
    for sources, destination in copy_lines(dockerfile):
        for source in sources:
            origin = context / source
            assert origin.exists(), f"{dockerfile.name} copies {source}, which does not exist"
            if origin.is_dir():
                shutil.copytree(origin, workdir / destination, ignore=IGNORED, dirs_exist_ok=True)
            elif destination.endswith("/"):
                shutil.copy2(origin, workdir / destination / origin.name)
            else:
                shutil.copy2(origin, workdir / destination)


def test_the_dockerfile_copies_what_the_wheel_needs(tmp_path: Path) -> None:
    lines = copy_lines(DOCKERFILE)
    copied = {source for sources, _ in lines for source in sources}
    assert {"pyproject.toml", "pyspark_kafka_rescalable.py", "LICENSE"} <= copied, lines
    workdir = tmp_path / "image"
    workdir.mkdir()
    copy_as_docker_would(DOCKERFILE, ROOT, workdir)
    wheels = tmp_path / "wheels"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), "."],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = wheels.glob("kafka_rescalable-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names if not name.split("/")[0].endswith("-info")}
    assert "pyspark_kafka_rescalable.py" in names
    assert "kafka_rescalable/source.py" in names and "kafka_rescalable/state/rebalancer.py" in names
    assert not {"connector", "state"} & top_level, sorted(top_level)
    assert top_level == {"kafka_rescalable", "pyspark_kafka_rescalable.py"}, sorted(top_level)
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names), names[-10:]
    (entry_points,) = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
    scripts = zipfile.ZipFile(wheel).read(entry_points).decode()
    ran = set(re.findall(r"\b(kafka-rescalable-[a-z-]+)", DOCKERFILE.read_text(encoding="utf-8")))
    assert ran and all(f"{command} =" in scripts for command in ran), (ran, scripts)
