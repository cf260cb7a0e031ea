"""Each sample's part of the egress proxy's record: who a client is, and its lines into the sample.

The proxy writes one line per request into the file of the sandbox that made it
(``egress/recorder.py``); it knows a sandbox by its address on the run's internal network, which
the sandbox gets only when it starts. So once a sample's container runs, ``SandboxRecord.start``
writes ``clients/<address>`` (the container's name) into the proxy, and when the sample ends,
before its container goes (so before its address can be another sandbox's), ``finish`` reads the
container's file back and puts its requests into the sample: the store (``web_record.STORE_KEY``)
and an info event that lists them in ``inspect view``.

A sandbox's processes outlive its sample's last command: Chromium asks for a page's favicon after
the page has loaded, a job left in the background may still fetch. So ``finish`` first freezes
the container (``docker pause``; it is removed paused), so that it can start no request, waits up
to ``UNANSWERED_WAIT`` seconds for the proxy to answer what it had in flight (its count in
``<record>.open/<sandbox>.n`` at zero), then reads the sandbox's lines and its open lines: a
request with no final line then (a slow server, a body still streaming) is in the sample with
``error`` ``web_record.UNANSWERED``.

The record is read as it streams out of the proxy, up to the proxy's own caps
(``web_record.MAX_LINES``, ``MAX_BYTES``) and never past them, whatever the file holds: no
sandbox can make its record too large to read (round 6 pushed one past inspect's 100 MiB read
limit in 9 s, and its sample was "not recorded"). A record the proxy stopped for being full says
so in the sample (``web_record.FULL_KEY``, and its info event).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

from ...egress.web_record import (
    ARCHIVE_KEY,
    FULL,
    FULL_KEY,
    INFO_SOURCE,
    MAX_BYTES,
    MAX_LINES,
    OPEN_SUFFIX,
    STORE_KEY,
    WebRequest,
    summary,
)
from . import archive, client
from .egress import RECORD_DIR, Egress

UNANSWERED_WAIT = 2.0
"""Seconds a frozen sandbox's requests in flight are given to be answered before it is read."""
_POLL = 0.1
_READ_LINES = MAX_LINES + 1
"""Lines read of a record at most: the proxy's cap, and its line saying the record is full."""
_READ_LIMIT = MAX_BYTES + (1 << 20)
"""Bytes read of a record at most: the proxy's cap, and a line beyond it."""
_LONGEST = 1 << 20
"""Bytes of one line at most (the proxy's longest: a cut URL and a response's 64 KiB head)."""


class Settled(NamedTuple):
    """A sandbox's requests once it is frozen, and why its record is incomplete (if it is)."""

    requests: list[WebRequest]
    full: str | None


def _entry(line: bytes) -> dict[str, Any] | None:
    """A record line as JSON (one that is not an object: ``None``)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def _requests(entries: list[dict[str, Any]]) -> list[WebRequest]:
    return [r for r in map(WebRequest.of, entries) if r is not None]


@dataclass
class SandboxRecord:
    """One sandbox's requests, as its run's proxy records them."""

    egress: Egress
    name: str
    """The sandbox's container name: its file in the proxy."""

    def start(self, container: str) -> str | None:
        """Tell the proxy which sandbox the container's address is (blocking); the address.

        A container with no address on the run's network reaches no proxy: nothing to name.
        """
        networks = client.api().inspect_container(container)["NetworkSettings"]["Networks"]
        address = next(
            (
                str(v["IPAddress"])
                for v in networks.values()
                if v.get("NetworkID") == self.egress.network and v.get("IPAddress")
            ),
            None,
        )
        if address is not None:
            path = f"{RECORD_DIR}/clients/{address}"
            archive.put_file(self.egress.proxy, path, self.name.encode())
        return address

    def read(self, folder: str = RECORD_DIR) -> list[dict[str, Any]]:
        """The sandbox's lines so far, or its open ones (blocking; none: empty), up to the caps."""
        path = f"{folder}/{self.name}.jsonl"
        lines: list[dict[str, Any]] = []
        pending = b""
        try:
            for chunk in archive.iter_file(self.egress.proxy, path, _READ_LIMIT):
                *whole, pending = (pending + chunk).split(b"\n")
                lines += filter(None, map(_entry, whole))
                if len(lines) > _READ_LINES:
                    break
                if len(pending) > _LONGEST:  # longer than any line the proxy writes: not one
                    pending = b""
        except FileNotFoundError:
            pass
        return lines[:_READ_LINES]

    def in_flight(self) -> int:
        """How many of the sandbox's requests the proxy has in flight (its ``.n`` file)."""
        path = f"{RECORD_DIR}{OPEN_SUFFIX}/{self.name}.n"
        try:
            text = archive.get_file(self.egress.proxy, path, path)
        except FileNotFoundError:
            return 0
        return int(text.strip(b" \0") or b"0")

    def settled(self, container: str) -> Settled:
        """Freeze the sandbox, then its requests, the ones still unanswered among them."""
        client.freeze(container)
        deadline = time.monotonic() + UNANSWERED_WAIT
        while self.in_flight() and time.monotonic() < deadline:
            time.sleep(_POLL)
        lines = self.read()
        full = next((str(e[FULL]) for e in lines if FULL in e), None)
        answered = _requests(lines)
        seen = {str(e.get("id")) for e in lines if e.get("id")}
        seen_before = {(r.t, r.method, r.url) for r in answered}  # records without ids
        unanswered = [
            request
            for entry in self.read(RECORD_DIR + OPEN_SUFFIX)
            if (request := WebRequest.of(entry)) is not None
            and str(entry.get("id")) not in seen
            and (entry.get("id") or (request.t, request.method, request.url) not in seen_before)
        ]
        return Settled(answered + unanswered, full)

    async def finish(self, container: str) -> None:
        """Put the sandbox's requests into its sample (store and transcript).

        A record that cannot be read is said in the transcript, and the store holds none (a
        reader then counts the sample as not recorded, never as having read nothing).
        """
        from inspect_ai.log import transcript
        from inspect_ai.util import store

        try:
            requests, full = await client.call(self.settled, container)
        except Exception as ex:
            transcript().info(
                f"The run's egress proxy's record of this sample could not be read: "
                f"{client.first_line(ex)}",
                source=INFO_SOURCE,
            )
            return
        store().set(STORE_KEY, [r.as_dict() for r in requests])
        said = [] if full is None else [f"**The record is incomplete**: {full}."]
        if full is not None:
            store().set(FULL_KEY, full)
        kept = self.egress.archive
        if kept is not None:
            store().set(ARCHIVE_KEY, kept)
        archived = [] if kept is None else [f"Bodies: `{kept}`, beside the log (`{ARCHIVE_KEY}`)."]
        transcript().info("\n\n".join([*said, summary(requests), *archived]), source=INFO_SOURCE)
