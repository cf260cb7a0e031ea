"""The recorded web written as HAR 1.2, streamed (``inspect-gaia web export``).

HAR (http://www.softwareishard.com/blog/har-12-spec/) is what browsers' developer tools import
and export, Playwright replays (``routeFromHAR``) and mitmproxy reads. One entry per recorded
request, in the order asked: ``startedDateTime`` from its ``t``; ``time`` and ``timings`` as the
record has them (the proxy records when a request began, not its phases: ``send`` and
``receive`` are 0, ``wait`` the whole exchange when the line says when it ended (``end``), else
0); the response's status, its headers where the archive kept them (the record's lines of a
``web_record=bodies`` run; a ``web_record=true`` run kept none) and its body where kept:

* decoded as a browser shows it: ``Content-Encoding`` (gzip, deflate, br, zstd) undone, text (a
  ``text/*``, JSON, XML, JavaScript or form type) in its charset (UTF-8 by default, a byte that is
  none shown as U+FFFD), anything else base64 (``encoding``); ``size`` the decoded length and
  ``compression`` what the encoding saved, as HAR says. A body that does not decode (a damaged
  gzip, a decoder missing: ``brotli``, one over ``DECODED_CAP``) is given as sent, base64, with
  ``_encoded`` naming its encoding;
* streamed: chunk by chunk from the archive into the JSON string, never whole in memory.

HAR's custom fields (a leading underscore) carry what HAR has no field for: ``_sample`` and
``_epoch`` (whose request), ``_decision`` (``allowed``, ``refused``: an answer source, ``blocked``:
the network policy) with ``_why`` and ``_error``, ``_sha256`` (of the body as sent) and ``_body``
(``kept``, or why not). A request with no response has status 0, as browsers export one.
"""

from __future__ import annotations

import base64
import codecs
import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from typing import IO, Any
from urllib.parse import parse_qsl, urlsplit

from .content_coding import FAILURES, charset, decode

DECODED_CAP = 1 << 30
"""A body whose decoding would pass this many bytes is given as sent (a decompression bomb)."""
_TEXT = ("text/", "application/json", "application/javascript", "application/xml")
_TEXT_SUFFIXES = ("+json", "+xml", "/x-www-form-urlencoded", "/ecmascript", "/x-javascript")
_MARK = f"\u0000{uuid.uuid4().hex}\u0000"
"""Where a body goes in its entry's JSON (no URL or header holds a NUL)."""


@dataclass(frozen=True)
class Exchange:
    """One recorded request to write: its record line, whose it is, and its body if kept."""

    line: dict[str, Any]
    sample: str | None = None
    epoch: int | None = None
    body: Callable[[], Iterator[bytes]] | None = None
    """The body as it went to the sandbox (its encoding kept), chunk by chunk; ``None``: not
    kept (or not in this archive)."""


def write_har(out: IO[str], exchanges: Iterable[Exchange], version: str) -> int:
    """Write a HAR 1.2 document of ``exchanges`` to ``out``, streaming; entries written."""
    out.write('{"log": {"version": "1.2", "creator": ')
    out.write(json.dumps({"name": "inspect_gaia", "version": version}))
    out.write(', "entries": [')
    written = 0
    for exchange in exchanges:
        out.write(",\n" if written else "\n")
        _entry(out, exchange)
        written += 1
    out.write("\n]}}\n")
    return written


def _entry(out: IO[str], exchange: Exchange) -> None:
    line = exchange.line
    headers = _headers(line.get("headers"))
    status = line["status"] if isinstance(line.get("status"), int) else 0
    url = _url(str(line.get("url", "")), str(line.get("method", "GET")))
    started = float(line.get("t") or 0)
    ended = line.get("end")
    wait = max(0.0, (float(ended) - started) * 1000) if isinstance(ended, int | float) else 0.0
    kind = str(line.get("type") or _header(headers, "content-type") or "x-unknown")
    sent = int(line.get("bytes") or 0)
    content: dict[str, Any] = (
        {"size": sent, "mimeType": kind}
        if exchange.body is None
        else {"mimeType": kind, "text": _MARK}  # then its size, after the text
    )
    entry = {
        "startedDateTime": datetime.fromtimestamp(started, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z"),
        "time": wait,
        "request": {
            "method": str(line.get("method", "GET")),
            "url": url,
            "httpVersion": "",
            "cookies": [],
            "headers": [],
            "queryString": [
                {"name": k, "value": v}
                for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)
            ],
            "headersSize": -1,
            "bodySize": -1,
        },
        "response": {
            "status": status,
            "statusText": _reason(status),
            "httpVersion": "",
            "cookies": [],
            "headers": [{"name": k, "value": v} for k, v in headers],
            "content": content,
            "redirectURL": _header(headers, "location") or "",
            "headersSize": -1,
            "bodySize": sent if status else -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": wait, "receive": 0},
        "_sample": exchange.sample,
        "_epoch": exchange.epoch,
        "_decision": line.get("decision"),
        "_why": line.get("why"),
        "_error": line.get("error"),
        "_sha256": line.get("sha256"),
        "_body": line.get("body"),
    }
    text = json.dumps(entry)
    if exchange.body is None:
        out.write(text)
        return
    before, after = text.split(json.dumps(_MARK), 1)
    out.write(before)
    _body(out, exchange.body, headers, kind, content, sent)
    out.write(after)


def _body(
    out: IO[str],
    body: Callable[[], Iterator[bytes]],
    headers: list[tuple[str, str]],
    kind: str,
    content: dict[str, Any],
    sent: int,
) -> None:
    """The body as a JSON string, then its ``size``/``compression``/``encoding`` fields.

    ``content`` was written already: these fields follow ``text`` (JSON's order is free).
    """
    coding = (_header(headers, "content-encoding") or "identity").strip().lower()
    decoded = _decoded_size(body, coding)
    if decoded is None:
        size = _write_base64(out, body())
        extra = {"encoding": "base64", "_encoded": coding, "size": size}
    else:
        chunks = decode(body(), coding)
        codec = charset(kind)
        if _is_text(kind) and codec is not None:
            _write_text(out, chunks, codec)
            extra = {}
        else:
            _write_base64(out, chunks)
            extra = {"encoding": "base64"}
        extra |= {"size": decoded, "compression": max(0, decoded - sent)}
    for name, value in extra.items():
        out.write(f", {json.dumps(name)}: {json.dumps(value)}")


def _decoded_size(body: Callable[[], Iterator[bytes]], coding: str) -> int | None:
    """The decoded length, read through once; ``None``: it does not decode within the cap."""
    try:
        total = 0
        for chunk in decode(body(), coding):
            total += len(chunk)
            if total > DECODED_CAP:
                return None
        return total
    except FAILURES:
        return None


def _write_text(out: IO[str], chunks: Iterator[bytes], charset: str) -> None:
    decoder = codecs.getincrementaldecoder(charset)(errors="replace")
    out.write('"')
    for chunk in chunks:
        out.write(json.dumps(decoder.decode(chunk))[1:-1])
    out.write(json.dumps(decoder.decode(b"", final=True))[1:-1] + '"')


def _write_base64(out: IO[str], chunks: Iterator[bytes]) -> int:
    out.write('"')
    held = b""
    size = 0
    for chunk in chunks:
        size += len(chunk)
        held += chunk
        whole = len(held) - len(held) % 3
        out.write(base64.b64encode(held[:whole]).decode())
        held = held[whole:]
    out.write(base64.b64encode(held).decode() + '"')
    return size


def _is_text(kind: str) -> bool:
    mime = kind.split(";")[0].strip().lower()
    return mime.startswith(_TEXT) or mime.endswith(_TEXT_SUFFIXES) or mime == "image/svg+xml"


def _headers(value: object) -> list[tuple[str, str]]:
    if not isinstance(value, list):
        return []
    return [(str(h[0]), str(h[1])) for h in value if isinstance(h, list | tuple) and len(h) == 2]


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _url(url: str, method: str) -> str:
    """A tunnel's ``host:port`` as a URL (HAR's ``url`` is absolute)."""
    if "://" in url:
        return url
    scheme = "https" if url.endswith(":443") or method == "CONNECT" else "http"
    return f"{scheme}://{url}/"
