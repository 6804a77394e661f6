"""The spark-protobuf jar builder's pure part: finding the module's sources in a checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.spark_protobuf_jar import MODULE, SparkSourcesError, main, module_sources


def _checkout(root: Path, *files: str) -> Path:
    for name in files:
        path = root / MODULE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("// source\n")
    return root


def test_sources_are_the_modules_scala_files_sorted_with_its_resources(tmp_path: Path) -> None:
    root = _checkout(
        tmp_path,
        "scala/org/apache/spark/sql/protobuf/utils/ProtobufUtils.scala",
        "scala/org/apache/spark/sql/protobuf/ProtobufDeserializer.scala",
        "scala/org/apache/spark/sql/protobuf/README.md",
        "resources/META-INF/services/org.apache.spark.sql.SparkSessionExtensionsProvider",
    )
    scala, resources = module_sources(root)
    package = root / MODULE / "scala/org/apache/spark/sql/protobuf"
    assert scala == [package / "ProtobufDeserializer.scala", package / "utils/ProtobufUtils.scala"]
    assert resources == root / MODULE / "resources"


def test_a_module_without_resources_has_none(tmp_path: Path) -> None:
    root = _checkout(tmp_path, "scala/A.scala")
    assert module_sources(root) == ([root / MODULE / "scala/A.scala"], None)


def test_a_folder_that_is_not_a_spark_checkout_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(SparkSourcesError, match="checkout of apache/spark") as caught:
        module_sources(tmp_path)
    assert str(tmp_path) in str(caught.value)


def test_the_command_line_says_why_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path), "--out", str(tmp_path / "x.jar")]) == 2
    assert "connector/protobuf/src/main/scala" in capsys.readouterr().err
    assert not (tmp_path / "x.jar").exists()
