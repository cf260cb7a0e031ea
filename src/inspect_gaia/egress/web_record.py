"""What a sample read on the web: the egress proxy's record of its requests, as a log holds it.

Whenever a run's sandboxes reach the web through its egress proxy (``-T block_answer_sources``,
``-T web_record``), the proxy writes one line per request (``egress/recorder.py``), and the run puts
each sample's lines into that sample's store under ``STORE_KEY`` when the sample ends
(``sandboxes/docker/egress_record.py``), with an info event that lists them in ``inspect view``.
The readers
(``logs/web_reads.py``: ``report``, ``compare``) read them back here, trusting no field: a line that
is not a request is skipped.

A leaf module (standard library only): the writer and the readers share the shape.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from .replay_match import OWN, POOLED, REFUSAL

STORE_KEY = "inspect_gaia/web_requests"
"""The sample store's key for its requests (a list of ``WebRequest.as_dict``)."""
ARCHIVE_KEY = "inspect_gaia/web_archive"
"""The sample store's key for the file name of the run's archive of bodies (``web_record=bodies``),
written beside the log with its SHA-256 in ``<name>.sha256``
(``sandboxes/docker/egress_archive.py``)."""
INFO_SOURCE = "inspect_gaia web"
"""The ``source`` of the info event that lists a sample's requests."""
Decision = Literal["allowed", "refused", "blocked"]
DECISIONS: tuple[Decision, ...] = ("allowed", "refused", "blocked")
OPEN_SUFFIX = ".open"
"""After the path of the proxy's record folder: its folder of each sandbox's requests in flight
(as ``egress/record_files.py``'s ``OPEN``, which cannot import this: it runs in the proxy's
container)."""
UNANSWERED = "unanswered when the sample ended"
"""The ``error`` of a request the proxy had not answered when its sample ended (as the proxy's)."""
MAX_URL = 2048
"""Characters of a URL the proxy records (``record_files.MAX_URL``); a longer one is cut, and says
its length."""
MAX_LINES = 10_000
"""Requests the proxy records per sandbox (``record_files.MAX_LINES``)."""
MAX_BYTES = 16 << 20
"""Bytes of a sandbox's record at most (``record_files.MAX_BYTES``)."""
FULL = "record_full"
"""The key of the proxy's one line saying a sandbox's record is full (``record_files.FULL``)."""
FULL_KEY = "inspect_gaia/web_record_full"
"""The sample store's key for why its record is incomplete (a sandbox over the record's caps: its
later requests were not recorded); absent when the record is whole."""
OUTAGE = "The run's egress proxy stopped while this sample ran a command"
"""How the error of a sample an egress outage ended begins
(``sandboxes/docker/egress_watch.py``)."""
CAME_FROM = "the sandbox holding most of the proxy then was "
"""Then, when the proxy's supervisor named one: the client that held most of the proxy's memory
(connections, buffered bytes: ``egress/load.py``), a sample if it was one's (``sample_named``), else
its address."""
_CAME_FROM_BEFORE = "the last request before it came from "
"""How logs before round 6 said it (the last client in, which was often not the cause)."""
CAUSE = re.compile(
    f"(?:{re.escape(CAME_FROM)}|{re.escape(_CAME_FROM_BEFORE)})"
    + r"(sample \S+ \(epoch \d+\)|[0-9A-Fa-f.:]{1,64})"
)
"""What ``CAME_FROM`` names in an outage's error: ``sample_named``'s words, or an address."""
SHOWN = 200
"""Requests the info event lists in full (the store holds them all)."""


def sample_named(sample_id: object, epoch: object) -> str:
    """A sample as an outage's error names it (``CAUSE`` reads it back)."""
    return f"sample {sample_id} (epoch {epoch})"


@dataclass(frozen=True)
class WebRequest:
    """One request a sandbox made, as the run's proxy saw it (see ``egress/recorder.py``)."""

    t: float
    method: str
    url: str
    status: int | None
    bytes: int
    sha256: str | None
    type: str | None
    decision: Decision
    why: str | None = None
    error: str | None = None
    server: str | None = None
    """Where the proxy connected (``host:port``); ``None`` in records before round 6."""
    sni: str | None = None
    """The TLS name the client gave, if any."""
    address: str | None = None
    """The server's IP address, once the proxy had connected."""

    @classmethod
    def of(cls, data: object) -> WebRequest | None:
        """A request from a line or a store entry; ``None`` when it is not one."""
        if not isinstance(data, Mapping):
            return None
        strings = {
            k: data.get(k) for k in ("sha256", "type", "why", "error", "server", "sni", "address")
        }
        status = data.get("status")
        size = data.get("bytes")
        valid = (
            isinstance(data.get("t"), int | float)
            and isinstance(data.get("method"), str)
            and isinstance(data.get("url"), str)
            and (status is None or (isinstance(status, int) and not isinstance(status, bool)))
            and isinstance(size, int)
            and not isinstance(size, bool)
            and data.get("decision") in DECISIONS
            and all(v is None or isinstance(v, str) for v in strings.values())
        )
        if not valid:
            return None
        return cls(
            t=float(data["t"]),
            method=str(data["method"]),
            url=str(data["url"]),
            status=cast("int | None", status),
            bytes=cast(int, size),
            decision=cast(Decision, data["decision"]),
            **cast("dict[str, str | None]", strings),
        )

    @property
    def host(self) -> str:
        """The host name the request named (lower case; ``host:port`` for a tunnel)."""
        if "://" not in self.url:
            return self.url.rsplit(":", 1)[0].lower()
        return (urlsplit(self.url).hostname or "").lower()

    def as_dict(self) -> dict[str, Any]:
        """The request as JSON (the store's and ``report --format json``'s shape)."""
        return asdict(self)


def parse_lines(text: str) -> list[WebRequest]:
    """The requests of a record file (JSON lines); a line that is not one is skipped."""
    found = []
    for line in text.splitlines():
        try:
            request = WebRequest.of(json.loads(line))
        except ValueError:
            continue
        if request is not None:
            found.append(request)
    return found


def from_store(store: Mapping[str, Any] | None) -> tuple[WebRequest, ...] | None:
    """A sample's requests from its store; ``None``: not recorded (no proxy on the path)."""
    entries = (store or {}).get(STORE_KEY)
    if not isinstance(entries, list):
        return None
    return tuple(r for r in map(WebRequest.of, entries) if r is not None)


def hosts(requests: Iterable[WebRequest]) -> list[str]:
    """The distinct hosts of ``requests``, sorted."""
    return sorted({r.host for r in requests if r.host})


def counts(requests: Sequence[WebRequest]) -> dict[str, int]:
    """Requests in all, per decision, and distinct hosts."""
    decided = Counter(r.decision for r in requests)
    return {
        "requests": len(requests),
        **{d: decided[d] for d in DECISIONS},
        "hosts": len(hosts(requests)),
    }


def summary(requests: Sequence[WebRequest]) -> str:
    """The info event's Markdown: one line of counts, then a table of the requests."""
    n = counts(requests)
    head = (
        f"The sample's web, as the run's egress proxy recorded it: {n['requests']} request(s) "
        f"to {n['hosts']} host(s); {n['refused']} refused (answer source), {n['blocked']} "
        f"blocked (network policy). Every field is in the store (`{STORE_KEY}`)."
    )
    own = sum(r.decision == "allowed" and r.why == OWN for r in requests)
    pooled = sum(r.decision == "allowed" and r.why == POOLED for r in requests)
    missing = sum(r.decision == "refused" and r.why == REFUSAL for r in requests)
    if own or pooled or missing:  # a replay (-T web_replay): its coverage, in the transcript
        head += (
            f" Replayed: {own} served from the sample's own recording, {pooled} from the pool "
            f"(another sample's or none's), {missing} refused as not in the recorded web."
        )
    if not requests:
        return head
    rows = ["| method | URL | status | bytes | decision |", "| --- | --- | --- | --- | --- |"]
    for r in requests[:SHOWN]:
        url = r.url.replace("|", "%7C")
        decision = (
            r.decision + (f": {r.why}" if r.why else "") + (f" ({r.error})" if r.error else "")
        )
        rows.append(
            f"| {r.method} | {url} | {r.status or '—'} | {r.bytes} | {decision.replace('|', '/')} |"
        )
    more = [f"\n{len(requests) - SHOWN} more in the store."] if len(requests) > SHOWN else []
    return "\n\n".join([head, "\n".join(rows), *more])
