"""What travels to executors unpickles through the guard: intact here, explained where missing."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pyspark
from pyspark import cloudpickle

from kafka_rescalable import KafkaSource
from kafka_rescalable._executor_guard import missing_package_message
from kafka_rescalable.config.options import parse_options
from kafka_rescalable.driver.batch_reader import KafkaBatchReader
from kafka_rescalable.executor.tasks import read_input_partition

OPTIONS = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "orders"}


def test_the_source_and_a_reader_round_trip_through_cloudpickle() -> None:
    source = pickle.loads(cloudpickle.dumps(KafkaSource(OPTIONS)))
    assert type(source) is KafkaSource and source.options == OPTIONS
    reader = KafkaBatchReader(parse_options(OPTIONS, "batch"), read_input_partition)
    copy = pickle.loads(cloudpickle.dumps(reader))
    assert type(copy) is KafkaBatchReader and copy.__dict__ == reader.__dict__


def test_a_python_without_the_package_gets_our_message(tmp_path: Path) -> None:
    # A new virtualenv: no kafka_rescalable, no confluent_kafka, only pyspark's own zip files,
    # as an executor of a cluster whose Python lacks the package has them.
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    lib = Path(pyspark.__file__).parent / "python" / "lib"
    pickled = tmp_path / "source.pickle"
    pickled.write_bytes(cloudpickle.dumps(KafkaSource(OPTIONS)))
    load = f"import pickle; pickle.loads(open({str(pickled)!r}, 'rb').read())"
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", load],
        env={"PYTHONPATH": ":".join(str(p) for p in sorted(lib.glob("*.zip")))},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    expected = missing_package_message("kafka_rescalable", str(venv / "bin" / "python"), "HOST")
    head, tail = expected.split("HOST")
    assert last.startswith("ModuleNotFoundError: " + head), last
    assert last.endswith(tail), last
