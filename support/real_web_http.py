"""The stand-in web's HTTP plumbing: a request read once, a reply sent whole or in pieces.

Part of the server ``support/real_web_server.py`` runs in its container (``support.real_web``):
the standard library and brotli only, as the pages (``support/real_web_pages.py``) use them.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

import brotli

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

MAX_SIZE = 64 << 30
"""The largest ``/download`` and ``/slow`` serve (64 GiB), so a typo cannot run for ever."""
CONFIG: dict[str, str] = {}
"""The server's configuration (``main``, ``elsewhere``, ``listed``), read at its start."""


def log(record: dict[str, Any]) -> None:
    """One JSON line on stdout (the container's log, which ``RealWeb.requests`` reads)."""
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def size_of(text: str, default: int) -> int:
    """A size in bytes from ``1048576``, ``512K``, ``64M`` or ``1G`` (binary units), capped."""
    found = re.fullmatch(r"(\d{1,12})([KMG]?)i?B?", text.strip(), re.IGNORECASE)
    if not found:
        return default
    shift = {"": 0, "K": 10, "M": 20, "G": 30}[found.group(2).upper()]
    return min(int(found.group(1)) << shift, MAX_SIZE)


def page(title: str, body: str) -> bytes:
    """An HTML page; its script writes the protocol the browser's next hop spoke into the page."""
    script = (
        "addEventListener('load', () => { const e = performance.getEntriesByType('navigation')[0];"
        " document.getElementById('protocol').textContent = 'protocol: ' +"
        " (e ? e.nextHopProtocol : 'unknown'); });"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body>{body}<p id='protocol'>protocol: not yet known</p>"
        f"<script>{script}</script></body></html>"
    ).encode()


class Request:
    """One request's scope, read once: where it came, what it asks, what it accepts."""

    def __init__(self, scope: Scope) -> None:
        """Read ``scope``."""
        self.scope = scope
        self.headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            # several Cookie fields (HTTP/2 splits them) are one list, as RFC 9113 8.2.3 says
            joined = "; " if key == "cookie" else ", "
            self.headers[key] = (
                f"{self.headers[key]}{joined}{text}" if key in self.headers else text
            )
        self.host = self.headers.get("host", self.headers.get(":authority", "")).split(":")[0]
        self.path: str = scope["path"]
        self.query = dict(parse_qsl(scope["query_string"].decode("latin-1")))
        self.scheme: str = scope["scheme"]
        self.method: str = scope["method"]
        raw = scope["raw_path"].decode("latin-1")
        self.target = raw + (
            f"?{scope['query_string'].decode('latin-1')}" if scope["query_string"] else ""
        )

    def url(self, target: str, host: str | None = None) -> str:
        """``target`` on ``host`` (this request's by default), by this request's scheme."""
        return f"{self.scheme}://{host or self.host}{target}"

    def accepts(self) -> list[str]:
        """The content codings the client accepts and this server has, best first."""
        offered = set()
        for item in self.headers.get("accept-encoding", "").split(","):
            name, _, params = item.strip().partition(";")
            if name and params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
                offered.add(name.strip().lower())
        return [coding for coding in ("br", "gzip") if coding in offered]


class Reply:
    """Sends a response: headers, then a body whole or in pieces."""

    def __init__(self, send: Send, request: Request) -> None:
        """Reply through ``send`` to ``request``."""
        self.send = send
        self.head_only = request.method == "HEAD"

    async def start(self, status: int, headers: list[tuple[str, str]]) -> None:
        """The status line and headers."""
        encoded = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        await self.send({"type": "http.response.start", "status": status, "headers": encoded})

    async def body(self, data: bytes, more: bool = False) -> None:
        """A piece of the body (``more``: others follow); none for a HEAD."""
        event = {"type": "http.response.body", "body": b"" if self.head_only else data}
        await self.send({**event, "more_body": more and not self.head_only})

    async def whole(
        self,
        status: int,
        kind: str,
        data: bytes,
        headers: list[tuple[str, str]] | None = None,
        coding: str | None = None,
    ) -> None:
        """A whole body with its length, content-coded by ``coding`` (``br``, ``gzip``)."""
        extra = list(headers or [])
        if coding is not None:
            data = brotli.compress(data) if coding == "br" else gzip.compress(data)
            extra.append(("content-encoding", coding))
        if kind.startswith(("text/", "application/json")):
            extra.append(("vary", "accept-encoding"))
        await self.start(
            status, [("content-type", kind), ("content-length", str(len(data))), *extra]
        )
        await self.body(data)


def best_coding(request: Request) -> str | None:
    """The content coding to answer ``request`` with: brotli, gzip, or none."""
    codings = request.accepts()
    return codings[0] if codings else None
