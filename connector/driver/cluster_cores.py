"""``parallelism=auto``: how many cores the Spark application has right now.

The stream reader runs in a Python worker that the driver JVM starts, with no SparkContext to
ask. It asks the driver's REST API instead (``/api/v1/applications/<id>/executors``), the
same numbers the Spark UI shows. To find that API without guessing among the drivers that
may share a host, it looks at the TCP ports the parent JVM (our own driver) listens on, and
asks each until one answers as a Spark UI. ``parallelismUiUrl`` gives the address explicitly
when that lookup cannot work (not Linux, the UI behind a proxy).

What counts: the sum of ``totalCores`` over active executors, or the driver's own cores in
local mode, where the driver is the only executor. When the UI is disabled or does not
answer, :func:`application_cores` returns ``None`` and the caller keeps its slot count.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["application_cores", "driver_ui_urls"]

_TIMEOUT_S = 2.0


_found_ui: str | None = None  # the driver UI that answered last; the process serves one query


def application_cores(ui_url: str | None = None) -> int | None:
    """Total executor cores of the application whose driver serves ``ui_url``.

    With ``ui_url`` ``None``, the driver JVM's own UI is looked up (see module doc) and
    remembered, so later batch boundaries cost one request, not a scan.
    """
    global _found_ui
    candidates = [ui_url] if ui_url else ([_found_ui] if _found_ui else []) + driver_ui_urls()
    for url in candidates:
        cores = _cores_from(url.rstrip("/"))
        if cores is not None:
            if not ui_url:
                _found_ui = url
            return cores
    return None


def _cores_from(base: str) -> int | None:
    applications = _get_json(f"{base}/api/v1/applications")
    if not isinstance(applications, list) or len(applications) != 1:
        return None  # not a driver UI (a history server lists many applications)
    app_id = applications[0].get("id")
    executors = _get_json(f"{base}/api/v1/applications/{app_id}/executors")
    if not isinstance(executors, list):
        return None
    active = [e for e in executors if e.get("isActive", True)]
    workers = [e for e in active if e.get("id") != "driver"]
    counted = workers or active  # local mode: the driver is the only executor
    total = sum(int(e.get("totalCores", 0)) for e in counted)
    return total or None


def _get_json(url: str) -> object:
    # Imported here: only parallelism=auto asks the UI, and urllib.request (with http.client,
    # ssl and email) would add ~18 ms to every streaming query's driver-side start-up.
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:  # noqa: S310
            return json.load(response)
    except Exception:  # a port that is not an HTTP server fails in many ways: not a UI
        return None


def driver_ui_urls() -> list[str]:
    """``http://<address>:<port>`` for each TCP port the driver JVM listens on (Linux).

    The driver is the nearest ``java`` ancestor of this process (the stream reader's parent;
    a batch planner may sit under PySpark's worker daemon). Sockets are matched to it through
    ``/proc/<pid>/fd`` inodes, so only ports of our own driver are tried. Elsewhere the list is
    empty and ``parallelismUiUrl`` is needed.
    """
    driver = _driver_pid()
    if driver is None:
        return []
    try:
        inodes = {
            link[len("socket:[") : -1]
            for link in (os.readlink(fd) for fd in Path(f"/proc/{driver}/fd").iterdir())
            if link.startswith("socket:[")
        }
    except OSError:
        return []
    endpoints: set[tuple[int, str]] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{driver}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            address, port = fields[1].rsplit(":", 1)
            endpoints.add((int(port, 16), _host_of(address)))
    # Spark's UI starts at 4040; trying nearby ports first saves probing RPC ports.
    ordered = sorted(endpoints, key=lambda e: (abs(e[0] - 4040), e[0]))
    return [f"http://{host}:{port}" for port, host in ordered]


def _driver_pid() -> int | None:
    pid = os.getppid()
    for _ in range(4):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            if command.endswith(b"java"):
                return pid
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return None


def _host_of(hex_address: str) -> str:
    """Return a connectable host for a /proc/net address: wildcard binds are reached on loopback."""
    if len(hex_address) != 8:
        return "127.0.0.1"  # IPv6: wildcard or mapped; loopback reaches a dual-stack socket
    octets = [str(int(hex_address[i : i + 2], 16)) for i in (6, 4, 2, 0)]
    host = ".".join(octets)
    return "127.0.0.1" if host == "0.0.0.0" else host
