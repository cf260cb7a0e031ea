"""Stand-in web pages for the answer-source tests: a leaked "mirror", an innocent-named page that
lists a question with its answer, and an innocent page; the scripted agent that fetches them.

Nothing here is GAIA's: the questions are gaia-leak's (``fixtures/make_gaia_leak.py``). The pages
are served by a host-side server bound to an address sandboxes reach, or (with the egress proxy)
by a stand-in container that Docker network aliases give the names of real hosts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from scripted_model import Entry

GAIA_LEAK = Path(__file__).parent / "fixtures" / "gaia-leak"

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


def _questions() -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return list(pq.read_table(GAIA_LEAK / "2023" / "validation" / "metadata.parquet").to_pylist())


def _question(word: str) -> dict[str, Any]:
    return next(q for q in _questions() if word in q["Question"])


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
        self.seen.append(f"{self.headers.get('Host', '')} {self.path}")
        kind, body = ROUTES.get(self.path, ("text/plain", b"not found"))
        self.send_response(200 if self.path in ROUTES else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


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
    """A bash command fetching ``scheme://host/path``; ``via`` (``ip:port``) stands in for the host."""
    redirect = f"--connect-to {host}:80:{via} " if via else ""
    return f"curl -sS -m 20 {redirect}{scheme}://{host}{path} 2>&1 | head -c 4000"


def leak_agent(via: str | None = None, scheme: str = "http") -> list[Entry]:
    """Saltmere reads the mirror, Orrindale the innocent-named page, Pellbrook its own
    attachment and the weather; each then submits its answer."""
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
