"""A stand-in web for the browser tests: four sites whose pages answer gaia-web's questions.

A link to follow (Wrenfold's bulletin), a search form (Cobblemere's archive), a table (the
Brackwater ferry), a PDF (Harrowgate's report); and for the edge cases, a page that never answers,
a page of several MB and a redirect to a known answer source. ``SERVER`` is one standard-library
script: the tests run it in a container whose Docker network aliases carry the hosts' names (for
the egress proxy), or load it in-process on the Docker bridge's address. It serves every path
whatever the host name, logging each request as a JSON line. ``web_agent`` is what the scripted
model does for each question, reading refs and answers off the pages it is shown.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

from support.scripted_model import Entry

MIRROR_URL = (
    "http://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/2023/validation/metadata.jsonl"
)
"""A known answer source (the package's list names huggingface.co's GAIA dataset)."""
HOSTS = ("wrenfold.example", "cobblemere.example", "brackwater.example", "harrowgate.example")
BIG_PARAGRAPHS = 80_000
"""Paragraphs of ``/big``: about 3 MB of HTML, too much text to read page by page."""
LONG_PARAGRAPHS = 1_500
"""Paragraphs of ``/long``: a snapshot of several pages."""


def text_pdf(*lines: str) -> bytes:
    """A one-page PDF whose text is ``lines`` (Helvetica), readable by ``pdftotext``."""
    stream = (
        "BT /F1 12 Tf 72 720 Td 14 TL "
        + " ".join(f"({line.replace('(', '[').replace(')', ']')}) '" for line in lines)
        + " ET"
    )
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out


def _html(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>"


ROUTES: dict[str, list[Any]] = {
    "/wrenfold/": [
        "page",
        "text/html",
        _html(
            "Wrenfold",
            "<h1>Town of Wrenfold</h1><p>News, events and the "
            "<a href='/wrenfold/bulletin'>Yearly bulletin</a>.</p>",
        ),
    ],
    "/wrenfold/bulletin": [
        "page",
        "text/html",
        _html(
            "Bulletin", "<h1>Yearly bulletin</h1><p>The emblem of Wrenfold is the grey heron.</p>"
        ),
    ],
    "/cobblemere/": [
        "page",
        "text/html",
        _html(
            "Cobblemere archive",
            "<h1>Cobblemere archive</h1><form action='/cobblemere/search'>"
            "<input name='q' aria-label='Search the archive'><button>Search</button></form>",
        ),
    ],
    "/cobblemere/search": [
        "search",
        {
            "lantern": "Lantern Guild: founded in 1742, it lit the harbour road.",
            "bell": "Bell Ringers: founded in 1801.",
        },
    ],
    "/brackwater/": [
        "page",
        "text/html",
        _html(
            "Brackwater ferry",
            "<h1>Timetable</h1><table><tr><th>Day</th><th>Crossings</th></tr>"
            + "".join(
                f"<tr><td>{day}</td><td>{n}</td></tr>"
                for day, n in [("Monday", 9), ("Friday", 11), ("Saturday", 6), ("Sunday", 4)]
            )
            + "</table>",
        ),
    ],
    "/harrowgate/": [
        "page",
        "text/html",
        _html(
            "Harrowgate water board",
            "<h1>Water board</h1><p>Read the "
            "<a href='/harrowgate/report.pdf'>Annual report (PDF)</a>.</p>",
        ),
    ],
    "/harrowgate/report.pdf": [
        "page",
        "application/pdf",
        base64.b64encode(
            text_pdf(
                "Harrowgate water board: annual report.",
                "The reservoir has a capacity of 310 megalitres.",
            )
        ).decode(),
    ],
    "/slow": ["hang"],
    "/big": ["big", BIG_PARAGRAPHS],
    "/long": ["big", LONG_PARAGRAPHS],
    "/to-mirror": ["redirect", MIRROR_URL],
}
"""Path -> ``[kind, ...]``: ``page`` (type, text or base64 for a PDF), ``search`` (keyword ->
result), ``hang`` (never answers), ``big`` (that many paragraphs), ``redirect`` (location)."""

SERVER = r"""
import base64, json, sys, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()

def log(record):
    # one whole line per write, under a lock: the handlers run on threads, and a print
    # writes its text and its newline apart, so two lines could run into one
    with LOCK:
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()

ROUTES = json.loads(sys.argv[1]) if __name__ == "__main__" else {}

class Handler(BaseHTTPRequestHandler):
    routes = ROUTES
    log_requests = True

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if self.log_requests:
            log({"host": self.headers.get("Host", ""), "path": self.path,
                              "client": self.client_address[0]})
        route = self.routes.get(url.path)
        if route is None:
            return self.send(404, "text/plain", b"not found")
        kind = route[0]
        if kind == "hang":
            time.sleep(600)
        elif kind == "redirect":
            self.send_response(302)
            self.send_header("Location", route[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif kind == "search":
            query = urllib.parse.parse_qs(url.query).get("q", [""])[0].lower()
            found = [text for key, text in route[1].items() if key in query] or ["No results."]
            body = "".join(f"<p>{text}</p>" for text in found)
            page = f"<html><body><h1>Results</h1>{body}</body></html>"
            self.send(200, "text/html", page.encode())
        elif kind == "big":
            rows = "".join(f"<p>Row {i} of a very long page.</p>" for i in range(route[1]))
            self.send(200, "text/html", f"<html><body>{rows}</body></html>".encode())
        else:
            kind, body = route[1], route[2]
            data = base64.b64decode(body) if kind == "application/pdf" else body.encode()
            self.send(200, kind, data)

    def send(self, status, kind, data):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass

if __name__ == "__main__":
    ThreadingHTTPServer(("", 80), Handler).serve_forever()
"""
"""The stand-in server: ``python3 -c SERVER ROUTES_JSON`` listens on port 80."""


def routes_json() -> str:
    """``ROUTES`` as the server's argument."""
    return json.dumps(ROUTES)


@contextmanager
def serve_web(address: str) -> Iterator[str]:
    """Serve ``ROUTES`` on ``address`` (an ephemeral port) in this process; yields ``host:port``."""
    namespace: dict[str, Any] = {"__name__": "stand_in_web"}
    exec(SERVER, namespace)  # the same server the stand-in container runs
    handler = type("Handler", (namespace["Handler"],), {"routes": ROUTES, "log_requests": False})
    server = ThreadingHTTPServer((address, 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"{address}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def web_agent(hosts: dict[str, str]) -> list[Entry]:
    """What the scripted model does for each gaia-web question; ``hosts`` maps site -> ``host``.

    Each entry reads its answer (or the ref it clicks or types into) off the page it is shown.
    """

    def url(site: str, path: str = "/") -> str:
        return f"http://{hosts[site]}/{site}{path}"

    def go(site: str, path: str = "/") -> dict[str, Any]:
        return {"call": "browser_navigate", "args": {"url": url(site, path)}}

    return [
        Entry(
            "Wrenfold",
            [
                go("wrenfold"),
                {"call": "browser_click", "args": {"ref": "{ref:Yearly bulletin}"}},
                {"submit_found": r"emblem of Wrenfold is the ([a-z ]+)\."},
            ],
        ),
        Entry(
            "Cobblemere",
            [
                go("cobblemere"),
                {
                    "call": "browser_type",
                    "args": {
                        "ref": "{ref:Search the archive}",
                        "text": "Lantern Guild",
                        "submit": True,
                    },
                },
                {"submit_found": r"Lantern Guild: founded in (\d{4})"},
            ],
        ),
        Entry("Brackwater", [go("brackwater"), {"submit_found": r'row "Saturday (\d+)"'}]),
        Entry(
            "Harrowgate",
            [
                go("harrowgate"),
                {"call": "browser_click", "args": {"ref": "{ref:Annual report (PDF)}"}},
                {"call": "browser_download", "args": {}},
                {
                    "bash": "pdftotext /downloads/report.pdf - | sed -n "
                    "'s/.*capacity of \\([0-9]*\\) megalitres.*/\\1/p'"
                },
                {"submit_output": True},
            ],
        ),
    ]
