"""``kafka-rescalable-compile-pyspark``: the bytecode it adds is what a fresh Python imports.

Each import runs in a new interpreter with the archive alone on its path, as Spark's Python
processes import PySpark, and reports which entry the module came from: zipimport sets
``__file__`` to the ``.pyc`` entry when it used the bytecode, to the ``.py`` when it compiled.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kafka_rescalable.pyspark_zip import (
    PysparkZipError,
    bytecode_state,
    compile_archive,
    main,
    pyspark_zip_path,
)


def _archive(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return _archive(
        tmp_path / "small.zip",
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": "VALUE = 1\r\n",
            "pkg/data.json": "{}",
            "pkg/newer.py": "match = (\n",  # not Python at all: left as source
        },
    )


def _run_with_path(archive: Path, module: str) -> tuple[str, str]:
    """``(__file__, repr(VALUE))`` of ``module`` imported by a new Python from ``archive``."""
    code = f"import {module} as m; print(m.__file__); print(repr(getattr(m, 'VALUE', None)))"
    env = {**os.environ, "PYTHONPATH": str(archive)}
    done = subprocess.run(
        [sys.executable, "-s", "-c", code], env=env, capture_output=True, text=True, check=True
    )
    where, value = done.stdout.splitlines()
    return where, value


def test_a_compiled_archive_is_imported_from_its_bytecode(small: Path, tmp_path: Path) -> None:
    assert _run_with_path(small, "pkg.mod")[0].endswith("mod.py")
    done = compile_archive(small, tmp_path / "out.zip")
    assert done.compiled == 2
    assert done.left_as_source == ("pkg/newer.py",)
    where, value = _run_with_path(done.path, "pkg.mod")
    assert where == f"{done.path}{os.sep}pkg{os.sep}mod.pyc"
    assert value == "1"
    with zipfile.ZipFile(done.path) as archive:
        assert archive.read("pkg/data.json") == b"{}"


def test_an_edited_source_is_compiled_again_not_read_from_stale_bytecode(
    small: Path, tmp_path: Path
) -> None:
    compiled = compile_archive(small, tmp_path / "compiled.zip").path
    edited = tmp_path / "edited.zip"
    with zipfile.ZipFile(compiled) as old, zipfile.ZipFile(edited, "w") as new:
        for info in old.infolist():
            data = b"VALUE = 2\n" if info.filename == "pkg/mod.py" else old.read(info)
            new.writestr(info, data)
    where, value = _run_with_path(edited, "pkg.mod")
    assert (where.endswith("mod.py"), value) == (True, "2")


def test_running_it_again_replaces_its_bytecode_in_place(small: Path) -> None:
    first = compile_archive(small)
    with zipfile.ZipFile(small) as archive:
        before = sorted(archive.namelist())
    again = compile_archive(small)
    with zipfile.ZipFile(small) as archive:
        after = sorted(archive.namelist())
    assert (first.compiled, again.compiled) == (2, 2)
    assert before == after
    assert len(after) == len(set(after)) == 6
    assert bytecode_state(small).startswith("bytecode for this Python")


def test_bytecode_of_another_python_is_reported_and_skipped(small: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(small) as old, zipfile.ZipFile(foreign, "w") as new:
        for info in old.infolist():
            new.writestr(info, old.read(info))
        new.writestr("pkg/mod.pyc", b"\x00\x00\r\n" + bytes(12) + b"not code")
    assert bytecode_state(foreign).startswith("bytecode for another Python")
    assert _run_with_path(foreign, "pkg.mod")[0].endswith("mod.py")
    assert bytecode_state(small) == "sources only"


def test_pysparks_own_archive_compiles_and_its_streaming_runner_loads_from_bytecode(
    tmp_path: Path,
) -> None:
    installed = pyspark_zip_path()
    py4j = next(installed.parent.glob("py4j-*.zip"))
    done = compile_archive(installed, tmp_path / "pyspark.zip")
    assert done.compiled > 500
    code = (
        "import pyspark.sql.streaming.python_streaming_source_runner as m; print(m.__file__)\n"
        "from kafka_rescalable.driver.pyspark_origin import compiled_pyspark_hint\n"
        "import pyspark; print(compiled_pyspark_hint(pyspark))"
    )

    def run(archive: Path) -> list[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(py4j), str(archive)])}
        ran = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return ran.stdout.splitlines()

    runner, hint = run(done.path)
    assert runner == str(
        done.path / "pyspark" / "sql" / "streaming" / "python_streaming_source_runner.pyc"
    )
    assert hint == "None"
    runner, hint = run(installed)
    assert runner.endswith("python_streaming_source_runner.py")
    assert f"compiled PySpark from the sources in {installed} before" in hint
    assert "kafka-rescalable-compile-pyspark" in hint
    assert bytecode_state(installed) == "sources only"


def test_the_command_checks_compiles_and_names_a_missing_installation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "spark"
    (home / "python" / "lib").mkdir(parents=True)
    _archive(home / "python" / "lib" / "pyspark.zip", {"pyspark/__init__.py": "VALUE = 3\n"})
    assert main(["--spark-home", str(home), "--check"]) == 1
    assert "sources only" in capsys.readouterr().out
    assert main(["--spark-home", str(home)]) == 0
    assert "1 modules compiled" in capsys.readouterr().out
    assert main(["--spark-home", str(home), "--check"]) == 0
    assert main(["--spark-home", str(tmp_path / "nowhere")]) == 2
    error = capsys.readouterr().err
    assert "nowhere/python/lib/pyspark.zip does not exist" in error
    assert "--spark-home" in error
    with pytest.raises(PysparkZipError, match="Give a readable zip archive"):
        compile_archive(home / "python" / "lib" / "pyspark.zip.missing")


def _printed(archive: Path, code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(archive)}
    done = subprocess.run(
        [sys.executable, "-s", "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_code_names_the_path_spark_imports_from_and_keeps_asserts_and_docstrings(
    tmp_path: Path,
) -> None:
    source = _archive(
        tmp_path / "source.zip",
        {"pkg/__init__.py": "", "pkg/where.py": '"""kept"""\nVALUE = __doc__\ndef f(): pass\n'},
    )
    staged = tmp_path / "staged.zip"
    imported_as = str(tmp_path / "spark" / "python" / "lib" / "pyspark.zip")
    # compiled by an interpreter running -OO: the bytecode must still be level 0
    script = (
        "import sys; from pathlib import Path; "
        "from kafka_rescalable.pyspark_zip import compile_archive; "
        "compile_archive(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])"
    )
    subprocess.run(
        [sys.executable, "-OO", "-c", script, str(source), str(staged), imported_as], check=True
    )
    printed = _printed(
        staged, "import pkg.where as m; print(m.__file__[-3:], m.VALUE, m.f.__code__.co_filename)"
    )
    assert printed == f"pyc kept {os.path.join(imported_as, 'pkg', 'where.py')}"


def test_an_archive_behind_a_symbolic_link_is_compiled_where_the_link_points(
    small: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link.zip"
    link.symlink_to(small)
    done = compile_archive(link)
    assert link.is_symlink() and done.path == link
    assert bytecode_state(small).startswith("bytecode for this Python")
    where, _ = _run_with_path(link, "pkg.mod")
    assert where == f"{link}{os.sep}pkg{os.sep}mod.pyc"


def test_unwritable_targets_and_broken_archives_fail_with_the_path_and_exit_2(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(PysparkZipError, match="a folder this user may write"):
        compile_archive(small, tmp_path / "no-such-folder" / "out.zip")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.zip"]  # nothing left behind
    home = tmp_path / "spark"
    (home / "python" / "lib").mkdir(parents=True)
    (home / "python" / "lib" / "pyspark.zip").write_bytes(b"not a zip")
    assert main(["--spark-home", str(home), "--check"]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["--spark-home", str(home)]) == 2
    assert f"cannot compile {home}/python/lib/pyspark.zip" in capsys.readouterr().err
