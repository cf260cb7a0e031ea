"""``browser_download``'s command, run here with the host's curl and sh against a local server."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from inspect_gaia.web.download import download_script
from tests.helpers_stubs import serve_http

CHUNK = b"x" * 65536


class Endless(BaseHTTPRequestHandler):
    """``/endless``: chunks with no length until the client leaves; ``/small``: 1 KiB, sized."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if self.path == "/small":
            self.send_header("Content-Length", "1024")
            self.end_headers()
            self.wfile.write(b"y" * 1024)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for _ in range(2000):  # 125 MiB at most
                self.wfile.write(b"%x\r\n" % len(CHUNK) + CHUNK + b"\r\n")
        except OSError:
            pass

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def server() -> Iterator[str]:
    with serve_http(Endless) as url:
        yield url


def test_a_body_of_unknown_length_stops_at_the_limit(server: str, tmp_path: Path) -> None:
    # curl's --max-filesize holds only for a body that says its length (curl 7.88: bookworm's)
    target = tmp_path / "dl" / "endless.bin"
    done = subprocess.run(
        ["sh", "-c", download_script(f"{server}/endless", str(target), blocks=400)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 128 + 25, done.stderr
    assert target.stat().st_size <= 400 * 512
    small = tmp_path / "dl" / "small.bin"
    sized = subprocess.run(
        ["sh", "-c", download_script(f"{server}/small", str(small), blocks=400)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sized.returncode == 0 and sized.stdout.startswith("200 application/octet-stream 1024")
    assert small.read_bytes() == b"y" * 1024
