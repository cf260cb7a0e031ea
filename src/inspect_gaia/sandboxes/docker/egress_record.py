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
to ``UNANSWERED_WAIT`` seconds for the proxy to answer what it had in flight (its ``open`` file
empty), then reads the sandbox's file: a request still unanswered then (a slow server, a body
still streaming) is in the sample with ``error`` ``web_record.UNANSWERED``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ...egress.web_record import (
    ARCHIVE_KEY,
    INFO_SOURCE,
    OPEN_FOLDER,
    STORE_KEY,
    WebRequest,
    parse_lines,
    summary,
)
from . import archive, client
from .egress import RECORD_DIR, Egress

UNANSWERED_WAIT = 2.0
"""Seconds a frozen sandbox's requests in flight are given to be answered before it is read."""
_POLL = 0.1


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

    def read(self, folder: str = "") -> str:
        """The sandbox's lines so far, or its open requests' (blocking; none: empty)."""
        path = f"{RECORD_DIR}/{folder}{self.name}.jsonl"
        try:
            return archive.get_file(self.egress.proxy, path, path).decode("utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def settled(self, container: str) -> list[WebRequest]:
        """Freeze the sandbox, then its requests, the ones still unanswered among them."""
        client.freeze(container)
        deadline = time.monotonic() + UNANSWERED_WAIT
        while (open_ := self.read(f"{OPEN_FOLDER}/")) and time.monotonic() < deadline:
            time.sleep(_POLL)
        answered = parse_lines(self.read())
        seen = {(r.t, r.method, r.url) for r in answered}
        unanswered = [r for r in parse_lines(open_) if (r.t, r.method, r.url) not in seen]
        return answered + unanswered

    async def finish(self, container: str) -> None:
        """Put the sandbox's requests into its sample (store and transcript).

        A record that cannot be read is said in the transcript, and the store holds none (a
        reader then counts the sample as not recorded, never as having read nothing).
        """
        from inspect_ai.log import transcript
        from inspect_ai.util import store

        try:
            requests = await client.call(self.settled, container)
        except Exception as ex:
            transcript().info(
                f"The run's egress proxy's record of this sample could not be read: "
                f"{client.first_line(ex)}",
                source=INFO_SOURCE,
            )
            return
        store().set(STORE_KEY, [r.as_dict() for r in requests])
        kept = self.egress.archive
        if kept is not None:
            store().set(ARCHIVE_KEY, kept)
        archived = [] if kept is None else [f"Bodies: `{kept}`, beside the log (`{ARCHIVE_KEY}`)."]
        transcript().info("\n\n".join([summary(requests), *archived]), source=INFO_SOURCE)
