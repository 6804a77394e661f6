"""Every text a query leaves behind, to grep for secrets: output, logs, plan, progress, files.

A query with the given source options runs in its own Spark process (so its stderr holds the
driver's and the Python workers' log lines) with the event log on; it prints its
``explain(extended=True)``, its query progress and its query execution. :func:`query_texts`
returns all of that with every file the query wrote (checkpoint, event log) but its Parquet
data, by name, for tests that check no secret appears in any of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from integration_tests.query_process import ROOT

__all__ = ["query_texts"]

_QUERY = """
import json, sys
from integration_tests.query_process import query_session
options = json.loads(sys.argv[1])
out = sys.argv[2]
spark = query_session("local[2]", "secrets", {
    "spark.eventLog.enabled": "true", "spark.eventLog.dir": out + "/events",
})
frame = spark.readStream.format("kafka-rescalable").options(**options).load()
frame.explain(extended=True)
query = (frame.selectExpr("CAST(value AS STRING) AS v").writeStream.format("parquet")
    .option("path", out + "/data").option("checkpointLocation", out + "/checkpoint")
    .trigger(availableNow=True).start())
query.awaitTermination()
print(json.dumps(query.recentProgress, default=str))
print(repr(frame._jdf.queryExecution().toString()))
spark.stop()
"""


def query_texts(options: dict[str, str], out: Path) -> dict[str, str]:
    """Run an AvailableNow query reading with ``options`` into ``out``; return its texts.

    Fails the test if the query fails or writes no Parquet file: a query that read nothing
    would leave nothing for a secret to hide in.
    """
    (out / "events").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _QUERY, json.dumps(options), str(out)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **_java_env()},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert list((out / "data").glob("*.parquet")), "the query read the topic"
    texts = {"stdout": done.stdout, "stderr": done.stderr}
    for path in out.rglob("*"):
        if path.is_file() and path.suffix != ".parquet":
            texts[str(path)] = path.read_text(errors="replace")
    assert any("checkpoint/offsets" in name for name in texts)
    assert any("events" in name for name in texts)
    return texts


def _java_env() -> dict[str, str]:
    keep = ("JAVA_HOME", "HOME", "PYSPARK_PYTHON", "SPARK_LOCAL_IP", "TMPDIR")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env
