"""Stand-in web pages for the answer-source tests, and the scripted agent that fetches them.

The pages: a leaked "mirror", an innocent-named page that lists a question with its answer, and an
innocent page.

Nothing here is GAIA's: the questions are gaia-leak's (``tests/fixtures/make_gaia_leak.py``).
The pages are served by a host-side server bound to an address sandboxes reach, or (with the
egress proxy) by a stand-in container that Docker network aliases give the names of real hosts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from support.scripted_model import Entry

GAIA_LEAK = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gaia-leak"

MIRROR_HOST = "huggingface.co"
MIRROR_PATH = "/datasets/gaia-benchmark/GAIA/resolve/main/2023/validation/metadata.jsonl"
NOTES_HOST = "orrindale-notes.example"
NOTES_PATH = "/bridges.html"
WEATHER_HOST = "weather.example"
WEATHER_PATH = "/today.txt"
WEATHER = "Fog over the harbour at dawn, 9 degrees, wind from the west."

SALTMERE = "Saltmere Reach"
ORRINDALE = "Orrindale"
PELLBROOK = "Pellbrook"
SALTMERE_ID = "559f03ff-e213-5f93-b0be-8f5c1fb176af"
PELLBROOK_ID = "df237641-72ca-50d9-8a8e-d1261dad439d"
"""The task ids of gaia-leak's two questions the blocking tests run side by side."""


def _questions() -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return list(pq.read_table(GAIA_LEAK / "2023" / "validation" / "metadata.parquet").to_pylist())


def _question(word: str) -> dict[str, Any]:
    return next(q for q in _questions() if word in q["Question"])


def question_id(word: str) -> str:
    """The task id of gaia-leak's question that contains ``word``."""
    return str(_question(word)["task_id"])


def mirror_body() -> bytes:
    """A leaked copy of the split's metadata, as a mirror would serve it."""
    rows = [{k: q[k] for k in ("task_id", "Question", "Final answer")} for q in _questions()]
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def notes_body() -> bytes:
    """An innocent-named page that lists Orrindale's question with its answer."""
    q = _question(ORRINDALE)
    return (
        "<html><body><h1>Local curiosities</h1><dl>"
        f"<dt>{q['Question']}</dt><dd>Answer: {q['Final answer']}</dd>"
        "</dl></body></html>"
    ).encode()


ROUTES: dict[str, tuple[str, bytes]] = {
    MIRROR_PATH: ("application/jsonl", mirror_body()),
    NOTES_PATH: ("text/html", notes_body()),
    WEATHER_PATH: ("text/plain", WEATHER.encode()),
}


class PagesHandler(BaseHTTPRequestHandler):
    """Serves ``ROUTES`` whatever the host name; remembers ``Host path`` of each request."""

    seen: list[str] = []

    def do_GET(self) -> None:
        """Serve the route asked for (404 for any other), and remember the request."""
        self.seen.append(f"{self.headers.get('Host', '')} {self.path}")
        kind, body = ROUTES.get(self.path, ("text/plain", b"not found"))
        self.send_response(200 if self.path in ROUTES else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Log nothing (the default writes every request to stderr)."""
        return


def bridge_address() -> str:
    """The host's address on the engine's default bridge: sandboxes reach it, the LAN does not."""
    import subprocess

    out = subprocess.run(
        ["docker", "network", "inspect", "bridge", "-f", "{{json .IPAM.Config}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return str(json.loads(out)[0]["Gateway"])


@contextmanager
def serve_pages(address: str) -> Iterator[tuple[int, list[str]]]:
    """Serve the pages on ``address`` (an ephemeral port); yields the port and the requests."""

    class Handler(PagesHandler):
        seen: list[str] = []

    server = ThreadingHTTPServer((address, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], Handler.seen
    finally:
        server.shutdown()
        server.server_close()


def fetch(host: str, path: str, via: str | None = None, scheme: str = "http") -> str:
    """A bash command fetching ``scheme://host/path``; ``via`` (``ip:port``) stands in for host."""
    redirect = f"--connect-to {host}:80:{via} " if via else ""
    return f"curl -sS -m 20 {redirect}{scheme}://{host}{path} 2>&1 | head -c 4000"


def leak_agent(via: str | None = None, scheme: str = "http") -> list[Entry]:
    """The leak scenario: each question reads a page (or its attachment), then submits.

    Saltmere reads the mirror, Orrindale the innocent-named page, Pellbrook its own attachment and
    the weather.
    """
    own = next(q["file_name"] for q in _questions() if PELLBROOK in q["Question"])
    return [
        Entry(
            SALTMERE,
            [{"bash": fetch(MIRROR_HOST, MIRROR_PATH, via, scheme)}, {"submit": "Thistlewood"}],
        ),
        Entry(ORRINDALE, [{"bash": fetch(NOTES_HOST, NOTES_PATH, via, scheme)}, {"submit": "41"}]),
        Entry(
            PELLBROOK,
            [
                {"bash": f"cat /shared_files/{own}"},
                {"bash": fetch(WEATHER_HOST, WEATHER_PATH, via, scheme)},
                {"submit": "Nineteen Locks"},
            ],
        ),
    ]


# -- stand-in hosts for the egress proxy -----------------------------------------------------------

STANDIN_SCRIPT = r"""
import base64, json, socket, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()

def log(record):
    # one whole line per write, under a lock: the handlers run on threads, and a print
    # writes its text and its newline apart, so two lines could run into one
    with LOCK:
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()

ROUTES = json.loads(base64.b64decode(sys.argv[1]))

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        log({"host": self.headers.get("Host", ""), "path": self.path,
                          "client": self.client_address[0]})
        if self.path.startswith("/bulk/") or self.path == "/endless":
            return self.bulk()
        if self.path.startswith("/slow/"):  # /slow/S?anything: answered after S seconds
            time.sleep(float(self.path[len("/slow/"):].split("?")[0]))
            kind, body = "text/plain", b"slow"
        elif self.path == "/whoami":
            kind, body = "text/plain", self.connection.getsockname()[0].encode()
        elif self.path == "/clock":  # another answer each time: a page that changes
            kind, body = "text/plain", str(time.time_ns()).encode()
        elif self.path in ROUTES:
            kind, body = ROUTES[self.path][0], base64.b64decode(ROUTES[self.path][1])
        else:
            kind, body = "text/plain", b"not found"
        found = (
            self.path in ("/whoami", "/clock")
            or self.path in ROUTES
            or self.path.startswith("/slow/")
        )
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        log({"host": self.headers.get("Host", ""), "path": self.path,
                          "client": self.client_address[0], "method": "POST"})
        self.send_error(405)

    def log_error(self, format, *args):
        log({"error": format % args, "client": self.client_address[0]})

    def bulk(self):
        # /bulk/N: N MiB of zeros with a Content-Length; /endless: chunks until the client leaves
        chunk = bytes(1 << 20)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if self.path == "/endless":
            self.send_header("Transfer-Encoding", "chunked")
            frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
        else:
            size = int(self.path.rsplit("/", 1)[1])
            self.send_header("Content-Length", str(size * len(chunk)))
            frame = chunk
        self.send_header("Connection", "close")
        self.end_headers()
        sent = 0
        try:
            while self.path == "/endless" or sent < size:
                self.wfile.write(frame)
                sent += 1
        except OSError:
            pass
        self.close_connection = True

    def log_message(self, *args):
        pass

def tls():
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("", 443))
    server.listen()
    while True:
        conn, peer = server.accept()
        log({"tls": peer[0]})
        conn.close()

threading.Thread(target=tls, daemon=True).start()
ThreadingHTTPServer(("", 80), Handler).serve_forever()
"""
"""Serves ``ROUTES`` on port 80 whatever the host name (``/whoami`` answers its own address,
``/clock`` the time in nanoseconds, another answer each time, ``/bulk/N`` N MiB of zeros,
``/endless`` zeros until the client leaves) and logs every HTTP request
(a POST too, refused), every request it could not read, and every connection to port 443, as a
JSON line."""

STANDIN_LABEL = "inspect_gaia.test"
"""On the stand-ins' network and container (removed by the test that made them)."""
WAIT_FOR_STANDINS = (
    "for i in $(seq 200); do curl -sf -m 2 http://weather.example/whoami >/dev/null && break; "
    "sleep 0.2; done"
)
"""The agent's first command: wait until the stand-ins answer through the proxy."""


def direct(host_page: str) -> str:
    """Fetch the stand-in by its address, then ``host_page`` (on the host), bypassing the proxy."""
    return (
        "IP=$(curl -s -m 5 http://weather.example/whoami); echo stand-in at $IP; "
        "curl -sS -m 5 --noproxy '*' http://$IP/today.txt; echo direct exit $?; "
        f"curl -sS -m 5 --noproxy '*' {host_page}; echo host exit $?"
    )


def standin_routes() -> str:
    """``ROUTES`` for the stand-in's command line (base64 JSON)."""
    import base64

    encoded = {
        path: (kind, base64.b64encode(body).decode()) for path, (kind, body) in ROUTES.items()
    }
    return base64.b64encode(json.dumps(encoded).encode()).decode()


RAW_TUNNEL = """python3 - <<'PY'
import os, socket
host, port = os.environ["HTTPS_PROXY"].rsplit("/", 1)[-1].split(":")
tunnel = socket.create_connection((host, int(port)), timeout=10)
tunnel.sendall(b"CONNECT modelscope.cn:443 HTTP/1.1\\r\\nHost: modelscope.cn:443\\r\\n\\r\\n")
print("proxy:", tunnel.recv(200).split(b"\\r\\n")[0].decode())
tunnel.sendall(b"SSH-2.0-OpenSSH_9.2\\r\\n")
try:
    print("tunnel answered", tunnel.recv(200))
except OSError as ex:
    print("tunnel failed", ex)
PY"""
"""A raw (not HTTP, not TLS) tunnel through the proxy to a host the list names."""


def blocking_agent(host_page: str) -> list[Entry]:
    """The leak scenario behind the egress proxy, with attempts to get around it.

    Saltmere fetches the mirror over HTTP, then HTTPS, then opens a raw tunnel to a listed host;
    Orrindale the innocent-named listing; Pellbrook its attachment, the weather, then the stand-in
    by its address and ``host_page`` (a page the host serves), around the proxy.
    """
    own = next(q["file_name"] for q in _questions() if PELLBROOK in q["Question"])
    return [
        Entry(
            SALTMERE,
            [
                {"bash": f"{WAIT_FOR_STANDINS}; {fetch(MIRROR_HOST, MIRROR_PATH)}"},
                {"bash": fetch(MIRROR_HOST, MIRROR_PATH, scheme="https")},
                {"bash": RAW_TUNNEL},
                {"submit": "Thistlewood"},
            ],
        ),
        Entry(
            ORRINDALE,
            [{"bash": f"{WAIT_FOR_STANDINS}; {fetch(NOTES_HOST, NOTES_PATH)}"}, {"submit": "41"}],
        ),
        Entry(
            PELLBROOK,
            [
                {"bash": f"cat /shared_files/{own}"},
                {"bash": f"{WAIT_FOR_STANDINS}; {fetch(WEATHER_HOST, WEATHER_PATH)}"},
                {"bash": direct(host_page)},
                {"submit": "Nineteen Locks"},
            ],
        ),
    ]
