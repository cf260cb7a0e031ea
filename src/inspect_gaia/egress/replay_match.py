"""The recorded web of a ``-T web_record=bodies`` archive, and how a request is matched to it.

Runs elsewhere: in the proxy's container, beside ``replay.py``; standard library only
(``shipped``). The run reads an archive here before any sandbox starts (``archive_index``: a
missing, truncated or foreign file is a ``ValueError`` the parameters turn into one line), and the
proxy reads the same record from the archive unpacked into its container (``directory_index``).

A request matches a recorded response by its method and its normalised URL (``match_key``): the
scheme and host in lower case, the default port dropped, an empty path as ``/``, the fragment
dropped, and the query's parameters sorted with the cache-busting ones left out
(``IGNORED_PARAMETERS``). Headers (their order, cookies, user agents) are not compared: a page
is what its URL names. Only responses whose body the archive kept can be served.
"""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REFUSAL = "not in the recorded web"
"""What a sandbox reads for a request the archive lacks (its response's body begins with it)."""
IGNORED_PARAMETERS = frozenset(
    {"_", "cb", "cachebuster", "cache_buster", "nocache", "rand", "random", "timestamp", "ts"}
)
"""Query parameters that only defeat caches (a random number, the time): left out of a match."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
RECORD = "record/"
BODIES = "record/bodies/"


def match_key(method: str, url: str) -> str:
    """``METHOD url`` with the URL normalised (see the module docstring)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    netloc = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    query = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in IGNORED_PARAMETERS
    )
    path = parts.path or "/"
    return f"{method.upper()} {urlunsplit((scheme, netloc, path, urlencode(query), ''))}"


def index(lines: Iterable[str], has_body: Callable[[str], bool]) -> dict[str, dict[str, Any]]:
    """The servable responses of record ``lines``: match key to status, headers and body hash.

    A line whose body was kept (and is there: ``has_body``) is servable; the first of a key wins.
    """
    found: dict[str, dict[str, Any]] = {}
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("body") != "kept":
            continue
        method, url, sha256 = entry.get("method"), entry.get("url"), entry.get("sha256")
        status, headers = entry.get("status"), entry.get("headers")
        if not (isinstance(method, str) and isinstance(url, str) and isinstance(sha256, str)):
            continue
        if not isinstance(status, int) or not isinstance(headers, list):
            continue
        if not has_body(sha256):
            continue
        found.setdefault(
            match_key(method, url), {"status": status, "headers": headers, "sha256": sha256}
        )
    return found


def archive_index(path: str) -> dict[str, dict[str, Any]]:
    """The servable responses of the archive file at ``path`` (read whole, streamed).

    Raises:
        ValueError: It is missing, not a tar, truncated, or holds no servable response.
    """
    if not os.path.isfile(path):
        raise ValueError(f"there is no file {path}")
    lines: list[str] = []
    bodies: set[str] = set()
    size = os.path.getsize(path)
    try:
        with tarfile.open(path, "r:") as tar:
            for member in tar:
                if member.offset_data + member.size > size:
                    raise tarfile.ReadError(f"{member.name} is cut short")
                if member.isfile() and member.name.startswith(BODIES):
                    bodies.add(member.name[len(BODIES) :])
                elif member.isfile() and member.name.startswith(RECORD):
                    if member.name.endswith(".jsonl"):
                        got = tar.extractfile(member)
                        lines += (got.read() if got else b"").decode("utf-8", "replace").split("\n")
    except (tarfile.TarError, EOFError, OSError) as ex:
        raise ValueError(f"{path} is not a whole web_record=bodies archive ({ex})") from ex
    found = index(lines, bodies.__contains__)
    if not found:
        raise ValueError(f"{path} holds no recorded response with its body")
    return found


def file_sha256(path: str) -> str:
    """The SHA-256 of the file at ``path``, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def directory_index(directory: str) -> dict[str, dict[str, Any]]:
    """The servable responses of an archive unpacked into ``directory`` (its ``record/``)."""
    record = os.path.join(directory, RECORD)
    lines: list[str] = []
    for name in sorted(os.listdir(record)):
        if name.endswith(".jsonl"):
            with open(os.path.join(record, name), encoding="utf-8", errors="replace") as f:
                lines += f.read().split("\n")
    bodies = os.path.join(directory, BODIES)
    return index(lines, lambda sha256: os.path.isfile(os.path.join(bodies, sha256)))
