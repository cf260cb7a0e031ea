"""A replay's decoded twins: each content-coded response also as its identity, decoded on the host.

A browser accepts every coding and a server sends it ``br``; the page reader, curl without
``--compressed`` or wget do not read ``br``. A replay serves a request only a response whose
``Content-Encoding`` it accepts (``replay_match``); when the recording it should get was coded
otherwise, it gets that recording's twin instead: the same status and headers without
``Content-Encoding``, and the body decoded (``content_coding``). The twins are made when a
replay's archive is checked (``replay_source.checked``), before any sandbox starts: each coded
body is decoded once here to learn its size and SHA-256 (the index the proxy receives names
them), and once more as the proxy's tar is written (``web_archive.proxy_stream``, hashed again).
Nothing decoded is held: both passes stream.

**Why decode rather than refuse.** A cache with no origin behind it would refuse (a miss); but a
replay's web is a recording of pages, and a coding is how a page travelled, not what it said. A
HAR (a browser's, Playwright's) holds its bodies decoded already and serves them to anyone
(``har_read``); an archive of the same pages recorded through the proxy would otherwise serve
them only to clients that accept the browser's coding, and a replay by another agent, reading
with another tool, would be refused pages the archive holds. Decoding is what an intermediary may
do to a response (RFC 9110 §7.7), and it changes nothing a client that accepts the coding gets.

**Bounds.** A twin is made only for a body that decodes whole (not damaged, not cut short, a
coding known here) within ``BODY_CAP`` bytes, and all twins' bodies together stay within
``TOTAL_CAP`` (in the archive's order; one identical to another body is counted once). A coded
response with no twin is refused to a client that does not accept its coding, as not recorded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace

from .content_coding import FAILURES, decode
from .web_archive import Archive, body_reader

BODY_CAP = 64 << 20
"""A twin's body at most, in bytes: the largest body a run keeps by default
(``INSPECT_GAIA_WEB_BODY_CAP``)."""
TOTAL_CAP = 1 << 30
"""All twins' bodies at most: what a run keeps of bodies by default
(``INSPECT_GAIA_WEB_RUN_CAP``)."""
_DROPPED = {"content-encoding", "content-length"}


def add_twins(archive: Archive) -> None:
    """Make ``archive.twins`` and ``archive.decoded``: a twin for each coded response (bounded)."""
    body = body_reader(archive)
    measured: dict[tuple[str, tuple[str, ...]], tuple[str, int] | None] = {}
    total = sum(size for _, _, size in archive.decoded.values())
    for response in archive.responses:
        codings = response.codings
        if not codings or response.decoded_from is not None:
            continue
        key = (response.sha256, codings)
        if key not in measured:
            left = min(BODY_CAP, TOTAL_CAP - total)
            measured[key] = found = _measure(body(response.sha256), codings, left)
            if found is not None and found[0] not in archive.decoded:
                archive.decoded[found[0]] = (response.sha256, codings, found[1])
                total += found[1]
        twin = measured[key]
        if twin is not None:
            headers = tuple((k, v) for k, v in response.headers if k.lower() not in _DROPPED)
            archive.twins.append(
                replace(
                    response,
                    headers=headers,
                    sha256=twin[0],
                    bytes=twin[1],
                    decoded_from=response.sha256,
                )
            )


def _measure(chunks: Iterator[bytes], codings: tuple[str, ...], cap: int) -> tuple[str, int] | None:
    """The decoded body's SHA-256 and size; ``None``: it does not decode whole within ``cap``."""
    digest = hashlib.sha256()
    size = 0
    try:
        for chunk in decode(chunks, codings):
            size += len(chunk)
            if size > cap:
                return None
            digest.update(chunk)
    except FAILURES:
        return None
    return digest.hexdigest(), size
