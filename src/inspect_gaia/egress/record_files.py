"""Each sandbox's files in the egress proxy's record: appended to only, and bounded.

Runs elsewhere: in the proxy's container, beside the recorder; standard library only
(``shipped``).

In ``<gaia_record_dir>`` (``RecordFiles``), for each sandbox (its record name, ``<sandbox>``):

* ``<sandbox>.jsonl``: one line per request, once it is over (``line``);
* ``<gaia_record_dir>.open/<sandbox>.jsonl`` (beside the record, so that it is no part of the
  run's archive of it): one line per request as it begins (``opened``), the line it ends as if
  it gets no answer, with the same ``id``; a request whose ``id`` has no line in the first file
  when the sample ends was never answered;
* ``<gaia_record_dir>.open/<sandbox>.n``: how many of its requests are in flight, rewritten in
  place (20 bytes) as each begins and ends, so that the run can wait for them without reading the
  lines.

Every write appends a line or rewrites 20 bytes: a request costs the same whatever else is in
flight. (Until round 6 the open file was written whole at each request's start and end, each line
with its URL: 800 slow requests with 30 KiB URLs froze the proxy until its supervisor killed it.)

Bounded per sandbox: a URL is cut at ``MAX_URL`` characters (``cut``), and a sandbox's record
takes at most ``MAX_LINES`` lines and ``MAX_BYTES`` bytes; the request that finds it full gets
one line ``{"record_full": …}`` instead, and later ones none (its open lines stop too). So no
sandbox can fill the proxy's disk, nor push its record past what the run reads back.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

OPEN = ".open"
"""After the record folder's path: the folder of each sandbox's requests in flight (the host's
``web_record.OPEN_SUFFIX``)."""
MAX_URL = 2048
"""Characters of a URL recorded (the host's ``web_record.MAX_URL``); a longer one is cut, and says
its length."""
MAX_LINES = 10_000
"""Requests recorded per sandbox (the host's ``web_record.MAX_LINES``): a browsing agent makes a
few hundred in a sample; the requests after it are not recorded, and the record says so."""
MAX_BYTES = 16 << 20
"""Bytes of one sandbox's record at most (the host's ``web_record.MAX_BYTES``): 10,000 lines of
about 1.6 KiB."""
FULL = "record_full"
"""The key of the one line that says a sandbox's record is full (the host's
``web_record.FULL``)."""


def cut(url: str) -> str:
    """``url`` as recorded: whole up to ``MAX_URL`` characters, cut with its length after that."""
    if len(url) <= MAX_URL:
        return url
    return url[:MAX_URL] + f"… ({len(url):,} characters)"


class RecordFiles:
    """The record folder's per-sandbox files (see the module docstring)."""

    def __init__(self, directory: str) -> None:
        """Make the folders; in-flight counts left by an earlier mitmdump are stale: removed."""
        self.directory = directory
        self.open = directory.rstrip("/") + OPEN
        self.used: dict[str, list[int]] = {}
        """A sandbox's record: lines and bytes written so far (read from disk at first use)."""
        self.full: set[str] = set()
        self.flying: dict[str, int] = {}
        os.makedirs(os.path.join(directory, "clients"), exist_ok=True)
        os.makedirs(self.open, exist_ok=True)
        for name in os.listdir(self.open):
            if name.endswith(".n"):
                os.unlink(os.path.join(self.open, name))

    def line(self, sandbox: str, record: dict[str, Any]) -> None:
        """Append a request's line to ``sandbox``'s record, if it has room."""
        text = json.dumps(record) + "\n"
        if self._room(sandbox, text):
            self._append(f"{sandbox}.jsonl", text)

    def opened(self, sandbox: str, record: dict[str, Any]) -> bool:
        """A request of ``sandbox``'s began (``record``: its line if unanswered); whether noted."""
        if sandbox in self.full:
            return False
        self._append(os.path.join(self.open, f"{sandbox}.jsonl"), json.dumps(record) + "\n")
        self._count(sandbox, +1)
        return True

    def closed(self, sandbox: str) -> None:
        """One of ``sandbox``'s noted requests is over."""
        self._count(sandbox, -1)

    def _count(self, sandbox: str, change: int) -> None:
        flying = self.flying[sandbox] = max(self.flying.get(sandbox, 0) + change, 0)
        path = os.path.join(self.open, f"{sandbox}.n")
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.pwrite(descriptor, f"{flying:<20d}".encode(), 0)
        finally:
            os.close(descriptor)

    def _room(self, sandbox: str, text: str) -> bool:
        used = self.used.get(sandbox)
        if used is None:
            used = self.used[sandbox] = self._on_disk(f"{sandbox}.jsonl")
        if sandbox in self.full:
            return False
        if used[0] >= MAX_LINES or used[1] + len(text) > MAX_BYTES:
            self.full.add(sandbox)
            why = (
                f"over {MAX_LINES:,} requests or {MAX_BYTES >> 20} MiB of record for this "
                "sandbox: its later requests are not recorded"
            )
            self._append(f"{sandbox}.jsonl", json.dumps({"t": round(time.time(), 3), FULL: why}))
            return False
        used[0] += 1
        used[1] += len(text)  # JSON with every character escaped: ASCII, a byte each
        return True

    def _on_disk(self, name: str) -> list[int]:
        """Lines and bytes of a record an earlier mitmdump wrote (none: nothing)."""
        lines = size = 0
        try:
            with open(os.path.join(self.directory, name), "rb") as record:
                for chunk in iter(lambda: record.read(1 << 20), b""):
                    lines += chunk.count(b"\n")
                    size += len(chunk)
        except FileNotFoundError:
            pass
        return [lines, size]

    def _append(self, name: str, text: str) -> None:
        # opened, appended and closed per line: a line is on disk before the response's last byte
        # leaves (mitmproxy runs the ``response`` hook first)
        with open(os.path.join(self.directory, name), "a", encoding="utf-8") as out:
            out.write(text if text.endswith("\n") else text + "\n")
