"""Stand-ins for the network: local HTTP stubs and the hub's snapshot download."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# -- local HTTP stubs ------------------------------------------------------------------------------


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on an ephemeral 127.0.0.1 port; yields ``http://127.0.0.1:<port>``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class RecordingHandler(BaseHTTPRequestHandler):
    """A request handler that remembers the paths it was asked for."""

    seen: list[str] = []


def quiet_handler(routes: dict[str, tuple[int, str, bytes]]) -> type[RecordingHandler]:
    """A GET/HEAD handler answering ``path -> (status, content type, body)``; 404 elsewhere."""

    class Handler(RecordingHandler):
        seen: list[str] = []

        def _answer(self) -> None:
            self.seen.append(self.path)
            status, kind, body = routes.get(self.path, (404, "text/plain", b"not found"))
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = _answer
        do_HEAD = _answer

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


# -- hub stand-ins --------------------------------------------------------------------------------


class StandInDownload:
    """Stands in for a hub client's snapshot download: copies gaia-tiny's files that match."""

    def __init__(self, source: Path, fail_after: int | None = None) -> None:
        self.source = source
        self.fail_after = fail_after
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        target = Path(kwargs["local_dir"])
        (pattern,) = kwargs["allow_patterns"]
        split_dir = pattern.removesuffix("/*")
        files = sorted((self.source / split_dir).iterdir())
        for count, path in enumerate(files):
            if self.fail_after is not None and count == self.fail_after:
                raise ConnectionError("connection reset by peer")
            (target / split_dir).mkdir(parents=True, exist_ok=True)
            if not (target / split_dir / path.name).exists():  # resume: keep what is there
                shutil.copy(path, target / split_dir / path.name)
        return str(target)
