"""A HAR 1.2 file read as a web archive (``-T web_replay=FILE.har``, ``inspect-gaia web merge``).

HAR is the web's own interchange format: every browser's developer tools export it, Playwright
records it (``recordHar``), mitmproxy dumps it. A HAR from elsewhere is data, read on the host
before any sandbox starts and refused in one line (``web_archive.ArchiveError``) when it is over
``HAR_CAP`` bytes, no JSON, nested past Python's limit, or not a HAR (``log.entries`` a list of
entries with a request and a response). Nothing in it names a file here: a body is its entry's
``content.text`` (base64 when ``encoding`` says so), and an entry whose body lives elsewhere
(Playwright's ``_file``, an omitted ``text``) is kept in the record but never served.

Each entry becomes one line of the record, as the proxy writes them: its sample (``_sample``,
``_epoch``: HAR's custom fields, as ``web export`` writes them; a HAR from a browser has none, so
its responses are the pool's), ``t`` from ``startedDateTime``, and ``decision`` from
``_decision`` (an entry a run refused or blocked is never served). A HAR holds bodies decoded (no
``Content-Encoding`` left on them) and as text in the page's charset: the body served is that text
encoded in the charset its ``Content-Type`` names (UTF-8 by default), with the ``Content-Encoding``
and ``Content-Length`` headers dropped, so any client reads it. One entry is coded still: a body
``web export`` could not decode is given as sent and says its coding in ``_encoded``; it keeps
that ``Content-Encoding``, so a replay serves it only to a client that accepts the coding, and
to another its decoded twin if it has one (``replay_match``, ``replay_decoded``), as an archive's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from datetime import datetime
from typing import Any

from .content_coding import charset
from .replay_match import codings_of, file_sha256
from .web_archive import Archive, ArchiveError, Line, servable

HAR_CAP = 256 << 20
"""The largest HAR read, in bytes: parsed whole, it takes about three times that in memory."""
_DROPPED = {"content-encoding", "content-length", "transfer-encoding"}


def is_har(path: str) -> bool:
    """Whether ``path`` looks like a HAR (JSON) rather than a tar: its first byte."""
    try:
        with open(path, "rb") as f:
            head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(b"{")


def read_har(path: str) -> Archive:
    """The HAR at ``path`` as an archive: its lines and its servable bodies (hashed).

    Raises:
        ArchiveError: It is missing, too large, or not a HAR 1.2 document; the line says which.
    """
    lines, bodies, digest = _parse(path)
    archive = Archive(path=path, sha256=digest, kind="har", lines=lines)
    archive.bodies = {sha256: (0, len(body)) for sha256, body in bodies.items()}
    archive.responses = servable(lines, archive.bodies)
    if not archive.responses:
        raise ArchiveError(f"{path} holds no response with its body (a HAR's content.text)")

    def load() -> dict[str, bytes]:
        _, again, now = _parse(path)
        if now != digest:
            raise ArchiveError(f"{path} changed since it was checked")
        return again

    archive.load_bodies = load
    return archive


def _parse(path: str) -> tuple[list[Line], dict[str, bytes], str]:
    if not os.path.isfile(path):
        raise ArchiveError(f"there is no file {path}")
    size = os.path.getsize(path)
    if size > HAR_CAP:
        raise ArchiveError(f"{path} is {size} bytes, more than a HAR read here ({HAR_CAP})")
    digest = file_sha256(path)
    try:
        with open(path, "rb") as f:
            document = json.loads(f.read())
    except (ValueError, RecursionError) as ex:
        raise ArchiveError(f"{path} is no JSON document ({type(ex).__name__})") from ex
    log = document.get("log") if isinstance(document, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise ArchiveError(f"{path} is not a HAR: no log.entries list")
    lines: list[Line] = []
    bodies: dict[str, bytes] = {}
    for number, entry in enumerate(entries):
        line, body = _entry(entry, number, path)
        lines.append(line)
        if body is not None:
            bodies[line.data["sha256"]] = body
    return lines, bodies, digest


def _entry(entry: object, number: int, path: str) -> tuple[Line, bytes | None]:
    request = entry.get("request") if isinstance(entry, dict) else None
    response = entry.get("response") if isinstance(entry, dict) else None
    if not (isinstance(request, dict) and isinstance(response, dict)):
        raise ArchiveError(f"{path}: entry {number} is not a HAR entry (a request and a response)")
    assert isinstance(entry, dict)
    method, url, status = request.get("method"), request.get("url"), response.get("status")
    if not (isinstance(method, str) and isinstance(url, str)):
        raise ArchiveError(f"{path}: entry {number}'s request has no method and URL")
    if not isinstance(status, int) or isinstance(status, bool):
        raise ArchiveError(f"{path}: entry {number}'s response has no status")
    headers = [
        [h["name"], h["value"]]
        for h in response.get("headers") or []
        if isinstance(h, dict)
        and isinstance(h.get("name"), str)
        and isinstance(h.get("value"), str)
    ]
    content = response.get("content")
    body = _body(content, headers, number, path) if isinstance(content, dict) else None
    decision = entry.get("_decision")
    refused = decision in ("refused", "blocked")
    served = body is not None and not refused and 100 <= status <= 999
    sha256 = hashlib.sha256(body).hexdigest() if body is not None else None
    sample, epoch = entry.get("_sample"), entry.get("_epoch")
    data: dict[str, Any] = {
        "t": _started(entry.get("startedDateTime")),
        "method": method,
        "url": url,
        "status": status if status > 0 else None,
        "bytes": len(body) if body is not None else 0,
        "sha256": sha256,
        "type": next((v for k, v in headers if k.lower() == "content-type"), None),
        "decision": decision if refused else "allowed",
        "why": entry.get("_why") if isinstance(entry.get("_why"), str) else None,
        "error": entry.get("_error") if isinstance(entry.get("_error"), str) else None,
        "body": "kept" if served else "not in the HAR",
        "headers": [h for h in headers if h[0].lower() not in _DROPPED] + _coded(content),
    }
    line = Line(
        data=data,
        sandbox="har",
        sample=str(sample) if isinstance(sample, str | int) and sample != "" else None,
        epoch=epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else None,
    )
    return line, body if served else None


def _coded(content: object) -> list[list[str]]:
    """``Content-Encoding`` again for a body given as sent (``web export``'s ``_encoded``)."""
    encoded = content.get("_encoded") if isinstance(content, dict) else None
    codings = codings_of(encoded) if isinstance(encoded, str) else ()
    return [["Content-Encoding", ", ".join(codings)]] if codings else []


def _body(
    content: dict[str, Any], headers: list[list[str]], number: int, path: str
) -> bytes | None:
    text = content.get("text")
    if not isinstance(text, str):
        return None  # omitted, or in a file beside the HAR: nothing here names a file to read
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as ex:
            raise ArchiveError(f"{path}: entry {number}'s content is not base64") from ex
    kind = next((v for k, v in headers if k.lower() == "content-type"), "")
    return text.encode(charset(kind) or "utf-8", "replace")


def _started(value: object) -> float:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return 0.0
