"""The stand-in web's pages: one handler per behaviour, and the table of their paths.

Part of the server ``support/real_web_server.py`` runs in its container (``support.real_web``,
whose docstring lists the behaviours). Every HTML and JSON page is content-coded as the client's
``Accept-Encoding`` asks (``best_coding``), as the web's servers do.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Awaitable, Callable
from urllib.parse import quote_plus

from support.real_web_http import (
    CONFIG,
    Receive,
    Reply,
    Request,
    best_coding,
    log,
    page,
    size_of,
)

BLOCK = bytes(range(256)) * 256
"""64 KiB: ``/download``'s body is this block, repeated and cut at the size asked for."""
BLOCKED = 5.0
"""Seconds one piece of ``/download`` may wait for the client before the server logs that it is
blocked (``{"download": target, "sent": n, "blocked": true}``, once): the client (or its proxy)
takes no more. At its end it logs ``"done"`` (false: the client left first)."""
PROSE = (
    "<p>The grey heron stands on the old pier at dawn, and the ferry to Brackwater leaves at "
    "nine. The lantern guild lit the harbour road in 1742; the reservoir holds 310 megalitres."
    "</p>\n"
)


async def index(request: Request, receive: Receive, reply: Reply) -> None:
    """``/``: links to the site's pages."""
    links = "".join(
        f"<li><a href='{path}'>{path}</a></li>"
        for path in (
            "/encoded/auto",
            "/chunked",
            "/slow",
            "/redirect/relative",
            "/cookies/set?flavour=oat",
            "/download?size=1M",
            "/one-chunk",
            "/fetches",
            "/search",
            "/echo",
        )
    )
    body = page(
        "Stand-in web", f"<h1>Stand-in web on {html.escape(request.host)}</h1><ul>{links}</ul>"
    )
    await reply.whole(200, "text/html; charset=utf-8", body, coding=best_coding(request))


async def encoded(request: Request, receive: Receive, reply: Reply) -> None:
    """``/encoded/{gzip,br}`` always so coded; ``/encoded/auto`` as the client accepts."""
    asked = request.path.rsplit("/", 1)[-1]
    coding = best_coding(request) if asked == "auto" else asked if asked in ("gzip", "br") else None
    if asked not in ("gzip", "br", "auto"):
        await reply.whole(404, "text/plain", b"not found\n")
        return
    data = page("Encoded", f"<h1>Encoded ({asked})</h1>" + PROSE * 200)
    await reply.whole(200, "text/html; charset=utf-8", data, coding=coding)


async def chunked(request: Request, receive: Receive, reply: Reply) -> None:
    """``/chunked?count=N&size=S``: N pieces of S bytes with no length (HTTP/1.1 chunks)."""
    count = min(int(request.query.get("count", "8") or 8), 10_000)
    size = max(16, min(size_of(request.query.get("size", "64"), 64), 1 << 20))
    await reply.start(200, [("content-type", "text/plain")])
    for i in range(count):
        line = f"chunk {i + 1} of {count} "
        await reply.body((line + "." * (size - len(line) - 1) + "\n").encode(), more=True)
    await reply.body(b"")


async def slow(request: Request, receive: Receive, reply: Reply) -> None:
    """``/slow?size=N&rate=R&chunk=C``: N bytes trickled at R bytes/s, in pieces of C bytes."""
    size = size_of(request.query.get("size", "1K"), 1024)
    rate = max(1, size_of(request.query.get("rate", "256"), 256))
    piece = max(1, min(size_of(request.query.get("chunk", "64"), 64), 1 << 20))
    await reply.start(200, [("content-type", "text/plain")])
    sent = 0
    while sent < size:
        n = min(piece, size - sent)
        await reply.body((b"." * (n - 1) + b"\n") if n > 1 else b"\n", more=True)
        sent += n
        if sent < size:
            await asyncio.sleep(n / rate)
    await reply.body(b"")


REDIRECTS = {"relative": 302, "root-relative": 302, "absolute": 301, "cross-host": 307}


async def redirect(request: Request, receive: Receive, reply: Reply) -> None:
    """``/redirect/KIND``: a redirect of that kind.

    To ``landed`` (relative, root-relative, absolute, cross-host), to the listed answer source
    (``listed``), or down a chain (``chain?n=3``).
    """
    kind = request.path.rsplit("/", 1)[-1]
    landed = f"/redirect/landed?from={kind}"
    if kind == "landed":
        seen = html.escape(request.query.get("from", "nowhere"))
        body = page("Landed", f"<h1>Landed on {html.escape(request.host)} from {seen}</h1>")
        await reply.whole(200, "text/html; charset=utf-8", body, coding=best_coding(request))
        return
    if kind == "chain":
        n = min(int(request.query.get("n", "3") or 3), 30)
        where = f"/redirect/chain?n={n - 1}" if n > 1 else landed
        status = 302
    elif kind == "listed":
        where, status = CONFIG["listed"], 302
    elif kind in REDIRECTS:
        status = REDIRECTS[kind]
        where = {
            "relative": f"landed?from={kind}",
            "root-relative": landed,
            "absolute": request.url(landed),
            "cross-host": request.url(landed, CONFIG["elsewhere"]),
        }[kind]
    else:
        await reply.whole(404, "text/plain", b"not found\n")
        return
    await reply.whole(status, "text/plain", f"see {where}\n".encode(), [("location", where)])


COOKIE = re.compile(r"[A-Za-z0-9._-]{1,64}")


async def cookies(request: Request, receive: Receive, reply: Reply) -> None:
    """``/cookies``: the cookies received (JSON).

    ``/cookies/set?a=1&b=2``: set them, then redirect to ``/cookies`` (as httpbin does).
    """
    if request.path == "/cookies/set":
        secure = "; Secure" if request.scheme == "https" else ""
        headers = [
            ("set-cookie", f"{name}={value}; Path=/; SameSite=Lax{secure}")
            for name, value in request.query.items()
            if COOKIE.fullmatch(name) and COOKIE.fullmatch(value)
        ]
        await reply.whole(
            302, "text/plain", b"see /cookies\n", [("location", "/cookies"), *headers]
        )
        return
    received = dict(
        pair.strip().split("=", 1)
        for pair in request.headers.get("cookie", "").split(";")
        if "=" in pair
    )
    data = json.dumps({"cookies": received}).encode()
    await reply.whole(200, "application/json", data, coding=best_coding(request))


async def download(request: Request, receive: Receive, reply: Reply) -> None:
    """``/download?size=1G``: that many generated bytes with a length (``&length=no``: without)."""
    size = size_of(request.query.get("size", "1M"), 1 << 20)
    headers = [("content-type", "application/octet-stream")]
    if request.query.get("length") != "no":
        headers.append(("content-length", str(size)))
    headers.append(("content-disposition", "attachment; filename=download.bin"))
    await reply.start(200, headers)
    sent, done, blocked = 0, False, False
    try:
        while sent < size:  # each piece waits for the client (HTTP/2's window, TCP's buffers)
            n = min(len(BLOCK), size - sent)
            piece = asyncio.ensure_future(reply.body(BLOCK[:n], more=True))
            if not blocked and not (await asyncio.wait({piece}, timeout=BLOCKED))[0]:
                log({"download": request.target, "sent": sent, "blocked": True})
                blocked = True
            await piece
            sent += n
        await reply.body(b"")
        done = True
    finally:  # how far a client that stopped reading (or left) got: what its proxy took in
        log({"download": request.target, "sent": sent, "done": done})


SAY = (
    "function say(text) { const s = document.getElementById('status');"
    " s.textContent = text; s.dataset.done = 'yes'; }"
)
"""The scripts' last word: ``<p id="status">``'s text, marked done (a browser test waits on it)."""


async def one_chunk(request: Request, receive: Receive, reply: Reply) -> None:
    """``/one-chunk?size=1G``: an ordinary page whose script reads one chunk of a large fetch.

    The script fetches ``/download`` of that size, reads one chunk, and leaves the rest unread
    (the browser keeps the stream open).
    """
    size = size_of(request.query.get("size", "1G"), 1 << 30)
    script = (
        f"{SAY}const big = '/download?size={size}';"
        "fetch(big).then(r => r.body.getReader().read()).then("
        "c => say('read one chunk of ' + c.value.length + ' bytes'),"
        " e => say('fetch failed: ' + e));"
    )
    body = page(
        "An ordinary page",
        "<h1>An ordinary page</h1><p>Its script starts a large download and reads one chunk.</p>"
        f"<p id='status'>fetching</p><script>{script}</script>",
    )
    await reply.whole(200, "text/html; charset=utf-8", body, coding=best_coding(request))


ITEMS = ["The heron's pier", "The lantern guild", "The Brackwater ferry"]


async def fetches(request: Request, receive: Receive, reply: Reply) -> None:
    """``/fetches``: a page drawn by its script from ``/api/items.json``; that JSON itself."""
    if request.path == "/api/items.json":
        data = json.dumps({"items": ITEMS}).encode()
        await reply.whole(200, "application/json", data, coding=best_coding(request))
        return
    script = (
        f"{SAY}fetch('/api/items.json').then(r => r.json()).then(d => {{"
        " const list = document.getElementById('items');"
        " for (const item of d.items) { const li = document.createElement('li');"
        " li.textContent = item; list.appendChild(li); }"
        " say('drawn ' + d.items.length + ' items'); }, e => say('fetch failed: ' + e));"
    )
    body = page(
        "Drawn by its script",
        "<h1>Drawn by its script</h1><p id='status'>drawing</p><ul id='items'></ul>"
        f"<script>{script}</script>",
    )
    await reply.whole(200, "text/html; charset=utf-8", body, coding=best_coding(request))


async def search(request: Request, receive: Receive, reply: Reply) -> None:
    """``/search``: a form; ``/search?q=...``: results that echo the query.

    Decoded in the heading and the box, URL-encoded in the next page's link, as search engines'
    pages do.
    """
    q = request.query.get("q")
    form = (
        "<form action='/search'><input name='q' aria-label='Search' value='{}'>"
        "<button>Search</button></form>"
    )
    if q is None:
        body = page("Search", "<h1>Search the stand-in web</h1>" + form.format(""))
    else:
        shown = html.escape(q, quote=True)
        main = CONFIG["main"]
        results = "".join(
            f"<li><a href='https://{main}{path}'>{title}</a><p>{title} — about {shown}.</p></li>"
            for path, title in (
                ("/encoded/auto", "The heron and the pier"),
                ("/fetches", "Three local items"),
                ("/redirect/landed?from=search", "Where searches land"),
            )
        )
        body = page(
            f"{shown} - Search",
            form.format(shown) + f"<h1>Results for {shown}</h1><ol>{results}</ol>"
            f"<a href='/search?q={html.escape(quote_plus(q))}&amp;start=10'>Next</a>",
        )
    await reply.whole(200, "text/html; charset=utf-8", body, coding=best_coding(request))


async def echo(request: Request, receive: Receive, reply: Reply) -> None:
    """``/echo``: the request as the server read it (JSON): version, scheme, host, headers, body."""
    length = 0
    while True:
        event = await receive()
        length += len(event.get("body", b""))
        if not event.get("more_body"):
            break
    data = {
        "method": request.method,
        "target": request.target,
        "http": request.scope["http_version"],
        "scheme": request.scheme,
        "host": request.host,
        "headers": request.headers,
        "body_length": length,
    }
    await reply.whole(200, "application/json", json.dumps(data).encode())


async def status(request: Request, receive: Receive, reply: Reply) -> None:
    """``/status/503``: that status (a 429 or 503 with ``retry-after: 1``)."""
    tail = request.path.rsplit("/", 1)[-1]
    code = int(tail) if tail.isdigit() and 200 <= int(tail) <= 599 else 400
    headers = [("retry-after", "1")] if code in (429, 503) else []
    await reply.whole(code, "text/plain", f"status {code}\n".encode(), headers)


async def listed(request: Request, receive: Receive, reply: Reply) -> None:
    """``/datasets/gaia-benchmark/...``: the listed answer source's stand-in.

    Never reached through a proxy that blocks answer sources.
    """
    body = page("GAIA dataset (stand-in)", "<h1>gaia-benchmark/GAIA</h1><p>A listed page.</p>")
    await reply.whole(200, "text/html; charset=utf-8", body)


Handler = Callable[[Request, Receive, Reply], Awaitable[None]]
ROUTES: dict[str, Handler] = {
    "/": index,
    "/chunked": chunked,
    "/slow": slow,
    "/cookies": cookies,
    "/cookies/set": cookies,
    "/download": download,
    "/one-chunk": one_chunk,
    "/fetches": fetches,
    "/api/items.json": fetches,
    "/search": search,
    "/echo": echo,
}
PREFIXES: list[tuple[str, Handler]] = [
    ("/encoded/", encoded),
    ("/redirect/", redirect),
    ("/status/", status),
    ("/datasets/gaia-benchmark/", listed),
]
