"""How a replayed request is matched to the recorded web (``-T web_replay``).

Runs elsewhere: in the proxy's container, beside ``replay.py``; standard library only
(``shipped``). The host imports it too: the archive's checks (``web_archive.py``), the HAR reader
(``har_read.py``) and ``web merge`` key responses as the proxy does.

**The key** (``match_key``): method and normalised URL — the scheme and host in lower case, the
default port dropped, an empty path as ``/``, the fragment dropped, and the query's parameters
sorted with the cache-busting ones left out (``IGNORED_PARAMETERS``). Headers (their order,
cookies, user agents) and request bodies are not compared: a page is what its URL names.

**The choice** (``Index.find``), among the responses recorded under the request's key, in this
order (the first tier that has one wins):

1. the exact URL (the same string, method included) before a merely normalised one;
2. within each, the sample's own recording (its question, its epoch; then its question's other
   epochs) before another sample's or one recorded with no sample (a HAR from elsewhere);
3. within the sample's own, the n-th time it asks gets the n-th response it recorded (a page
   polled twice replays both answers), the last one again after that; within the pool, the first
   in the archive's order (a merge: its first input's; an archive: the earliest).

So a sample replaying what it recorded gets exactly what it recorded, whatever another sample read
under a URL that normalises the same (``today.txt`` and ``today.txt?_=123``), and a new request is
served the closest recording there is. ``find`` says which (``OWN`` or ``POOLED``), and the
recorder writes it down as the ``why`` of the request.

**Content negotiation: a response the client can read.** A server codes a page as the request's
``Accept-Encoding`` allows (the browser's ``br``, the page reader's ``gzip``, curl's none) and
says so with ``Vary: accept-encoding``; a cache keeps each coding apart and never hands one client
another's coding it cannot decode. So does the replay: within each tier above, a response is a
match only when the request accepts its ``Content-Encoding`` (``accepts``). When a tier holds no
such response but does hold a coded one, its **decoded twin** serves instead: the same response,
its body decoded on the host before the run (``replay_decoded``), with no ``Content-Encoding``
(``Recorded.decoded_from`` names the body it came from). So the tiers still decide whose response
a request gets (what the page said), and the coding only how it travels: a sample's own page,
decoded, before another sample's page in a coding the client takes. A coded response with no twin
(one that does not decode, or over the twins' caps) is no match for a client that does not accept
its coding: the request is refused as not recorded, and its body says the coding (``codings``).

The rule (RFC 9110 §12.5.3): codings are named case-insensitively, ``x-gzip`` is ``gzip``; a
coding is accepted when the request lists it (or ``*``) with a weight above 0; a response coded
twice needs both accepted. A request with no ``Accept-Encoding`` (curl without ``--compressed``,
wget) or an empty one accepts no coding: the RFC lets a server code anything then, but no server
does and such clients print coded bytes as they come. An uncoded response is served to every
request, ``identity;q=0`` included (no client needs to decode it; a server sends it too).

**Other ``Vary`` headers are not compared.** The recorder keeps a response's headers but not the
request's (``egress/recorder.py``), so the language, user agent or cookies a response was chosen
for are unknown; and a page in another language or another browser's markup is still readable,
which a coding the client cannot decode is not. A HAR's entries carry request headers, but an
archive's do not, and both formats replay by one rule.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REFUSAL = "not in the recorded web"
"""What a sandbox reads for a request the archive lacks (its response's body begins with it)."""
OWN = "replayed"
"""The ``why`` of a request served from its own sample's recording."""
POOLED = "replayed from the pool"
"""The ``why`` of a request served from another sample's recording, or from one with no sample."""
IGNORED_PARAMETERS = frozenset(
    {"_", "cb", "cachebuster", "cache_buster", "nocache", "rand", "random", "timestamp", "ts"}
)
"""Query parameters that only defeat caches (a random number, the time): left out of a match."""
INDEX = "index.jsonl"
"""The replay's index in the proxy's replay folder: one ``Recorded.as_json`` line per response,
in the archive's order; written by the host from what it checked (``web_archive.py``)."""
BODIES = "bodies"
"""The folder beside it holding each body under its SHA-256."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_ALIASES = {"x-gzip": "gzip", "x-compress": "compress"}


def codings_of(content_encoding: str) -> tuple[str, ...]:
    """The codings a ``Content-Encoding`` value names, in the order applied (``identity``: none)."""
    names = (part.strip().lower() for part in content_encoding.split(","))
    return tuple(_ALIASES.get(name, name) for name in names if name not in ("", "identity"))


def accepts(accept_encoding: str | None, codings: Sequence[str]) -> bool:
    """Whether a request with this ``Accept-Encoding`` (``None``: none) reads ``codings``.

    See the module docstring: no header accepts no coding; an uncoded response is always read.
    """
    if not codings:
        return True
    weights: dict[str, float] = {}
    for item in (accept_encoding or "").split(","):
        name, *parameters = item.split(";")
        name = _ALIASES.get(name.strip().lower(), name.strip().lower())
        weight = 1.0
        for parameter in parameters:
            key, _, value = parameter.partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value.strip())
                except ValueError:
                    weight = 0.0  # a weight no server could read: not an acceptance
        if name:
            weights[name] = weight
    return all(weights.get(coding, weights.get("*", 0.0)) > 0 for coding in codings)


def match_key(method: str, url: str) -> str:
    """``METHOD url`` with the URL normalised (see the module docstring)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    query = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in IGNORED_PARAMETERS
    )
    path = parts.path or "/"
    return f"{method.upper()} {urlunsplit((scheme, netloc, path, urlencode(query), ''))}"


@dataclass(frozen=True)
class Recorded:
    """One servable response: what was asked, what came back, and whose recording it is."""

    method: str
    url: str
    status: int
    headers: tuple[tuple[str, str], ...]
    sha256: str
    bytes: int
    sample: str | None = None
    """The sample (its id) whose sandbox recorded it; ``None``: no sample (a HAR's entry)."""
    epoch: int | None = None
    decoded_from: str | None = None
    """A decoded twin's: the SHA-256 of the coded body it was decoded from (``None``: recorded)."""

    @property
    def codings(self) -> tuple[str, ...]:
        """Its ``Content-Encoding``: the codings applied, in order (none: the body as is)."""
        return codings_of(",".join(v for k, v in self.headers if k.lower() == "content-encoding"))

    def as_json(self) -> dict[str, Any]:
        """The index line's fields."""
        return {
            "method": self.method,
            "url": self.url,
            "status": self.status,
            "headers": [list(h) for h in self.headers],
            "sha256": self.sha256,
            "bytes": self.bytes,
            "sample": self.sample,
            "epoch": self.epoch,
            "decoded_from": self.decoded_from,
        }

    @classmethod
    def of(cls, data: object) -> Recorded | None:
        """A response from an index line (or a record line whose body was kept); else ``None``."""
        if not isinstance(data, dict):
            return None
        method, url, status = data.get("method"), data.get("url"), data.get("status")
        sha256, size, headers = data.get("sha256"), data.get("bytes"), data.get("headers")
        sample, epoch = data.get("sample"), data.get("epoch")
        if not (isinstance(method, str) and isinstance(url, str) and _is_sha256(sha256)):
            return None
        if not (isinstance(status, int) and isinstance(size, int)) or not (
            _is_int(status) and 100 <= status <= 999 and _is_int(size) and size >= 0
        ):
            return None
        if not isinstance(headers, list) or not all(
            isinstance(h, list) and len(h) == 2 and all(isinstance(x, str) for x in h)
            for h in headers
        ):
            return None
        return cls(
            method=method,
            url=url,
            status=status,
            headers=tuple((str(k), str(v)) for k, v in headers),
            sha256=str(sha256),
            bytes=size,
            sample=sample if isinstance(sample, str) else None,
            epoch=epoch if _is_int(epoch) else None,
            decoded_from=str(data["decoded_from"])
            if _is_sha256(data.get("decoded_from"))
            else None,
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_sha256(value: object) -> bool:
    return (
        isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    )


class Index:
    """The recorded web, by key; ``find`` picks a request's response (the module docstring)."""

    def __init__(self) -> None:
        """Empty."""
        self.by_key: dict[str, list[Recorded]] = {}
        self.turns: dict[tuple[str | None, int | None, str, str], int] = {}
        """Times each sample asked for an exact URL (its own recordings served in turn)."""

    def add(self, recorded: Recorded) -> None:
        """One more response, after every one added before it in the archive's order."""
        self.by_key.setdefault(match_key(recorded.method, recorded.url), []).append(recorded)

    def __len__(self) -> int:
        """Responses held."""
        return sum(len(found) for found in self.by_key.values())

    def find(
        self,
        method: str,
        url: str,
        sample: str | None = None,
        epoch: int | None = None,
        accept_encoding: str | None = None,
    ) -> tuple[Recorded, str] | None:
        """The response for a request of ``sample`` (``None``: unknown), and ``OWN``/``POOLED``.

        ``accept_encoding`` is the request's header (``None``: it sent none); a response coded
        otherwise is no match, its decoded twin is (the module docstring).
        """
        candidates = self.by_key.get(match_key(method, url))
        if not candidates:
            return None
        turn_key = (sample, epoch, method.upper(), url)
        turn = self.turns.get(turn_key, 0)
        self.turns[turn_key] = turn + 1
        exact = [c for c in candidates if c.method.upper() == method.upper() and c.url == url]
        for group in (exact, candidates):
            for rank in (0, 1, 2):
                ranked = [c for c in group if _ownership(c, sample, epoch) == rank]
                read = [
                    c
                    for c in ranked
                    if c.decoded_from is None and accepts(accept_encoding, c.codings)
                ]
                found = read or [c for c in ranked if c.decoded_from is not None]
                if not found:
                    continue
                if rank == 2:
                    return found[0], POOLED
                return found[min(turn, len(found) - 1)], OWN
        return None

    def codings(self, method: str, url: str) -> list[str]:
        """The ``Content-Encoding`` of each response recorded under the request's key (distinct)."""
        found = self.by_key.get(match_key(method, url)) or []
        return sorted({", ".join(c.codings) or "identity" for c in found if not c.decoded_from})


def _ownership(recorded: Recorded, sample: str | None, epoch: int | None) -> int:
    """0: the same sample and epoch; 1: the same sample, another epoch; 2: anyone else's."""
    if sample is None or recorded.sample != sample:
        return 2
    return 0 if recorded.epoch == epoch else 1


def file_sha256(path: str) -> str:
    """The SHA-256 of the file at ``path``, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
