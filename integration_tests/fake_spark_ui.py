"""A stand-in for a Spark driver's REST API, serving a chosen set of executors.

``parallelism=auto`` sizes the reader slots from the executors' cores that the driver UI
reports; answering with cores the real application does not have is how a test tells that
``parallelismUiUrl`` was the address asked.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["FakeSparkUi"]


class FakeSparkUi:
    """Serve ``/api/v1/applications`` and its ``/executors`` on a free loopback port.

    ``executor_cores`` gives one entry per executor (the driver is listed too, with no cores,
    as a real cluster's UI lists it); ``applications`` more than one makes it look like a
    history server, which ``auto`` must not take for the driver.
    """

    def __init__(self, executor_cores: Sequence[int], applications: int = 1) -> None:
        apps = [{"id": f"app-{k}", "name": "fake"} for k in range(applications)]
        executors = [{"id": "driver", "isActive": True, "totalCores": 0}] + [
            {"id": str(k), "isActive": True, "totalCores": cores}
            for k, cores in enumerate(executor_cores)
        ]
        routes = {"/api/v1/applications": apps}
        routes.update({f"/api/v1/applications/{app['id']}/executors": executors for app in apps})

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API's name
                body = routes.get(self.path.rstrip("/"))
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps(body).encode() if body is not None else b"{}")

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                """Keep the test output quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base address, as ``parallelismUiUrl`` takes it."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeSparkUi:
        """Start serving."""
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
