"""What each sandbox holds of the egress proxy, so that an outage names the sandbox that caused it.

Runs elsewhere: in the proxy's container, beside the addon and the supervisor; standard library
only (``shipped``).

The guard (``addon.py``) counts per client address, as connections and bytes come and go: its
connections to the proxy (``connections``), the proxy's connections to servers on its behalf
(``servers``), the bytes the proxy holds unread in its connections' buffers (``held``,
``bounds.py``), its requests in flight (``open``), its requests so far (``requests``) and the body
bytes passed to it (``bytes``). Every ``PUBLISH_EVERY`` seconds it writes them into ``LOAD_FILE``
(whole, then renamed over), and when mitmdump dies or hangs the supervisor (``supervise.py``)
reads the file and names the heaviest client (``heaviest``) in its ``down`` line.

Its log lines are counted too: a sandbox gets at most ``MAX_SAID`` lines in the proxy's log
(refusals, blocks: ``Loads.say``), then one saying it is quiet; the rest are in its record alone.
The run reads that log whole (its refusals, its bodies not kept), and one sandbox's 100,000
blocked requests would otherwise be hundreds of MB of it.

Why not the last client, as before: the sandbox that fills the proxy's memory or holds its event
loop needs to send nothing more once it has (one request whose body is never read, a few hundred
slow requests), while honest sandboxes go on fetching; the last one in before the end was the
honest one in every flood the reliability review tried. What a sandbox *holds* is what an outage
follows.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:  # the package's name (the host imports it); and in the
    from .failclosed import log  # proxy's container, the file beside this one
else:
    from failclosed import log

LOAD_FILE = os.environ.get("INSPECT_GAIA_EGRESS_LOAD_FILE", "/tmp/inspect-gaia-egress-load.json")
PUBLISH_EVERY = 0.5
"""Seconds between two writes of ``LOAD_FILE`` (only when something changed)."""
CONNECTION_COST = 48 * 1024
"""Bytes of the proxy's memory one open connection costs besides its buffers (mitmproxy's objects,
a TLS state, asyncio's transport): about what 64 idle connections cost in the proxy's container
(measured in ``tests/test_docker_egress_bounds.py``'s flood). Only weighs connections against
buffered bytes when choosing whom to blame; it bounds nothing."""
MAX_SAID = 1000
"""Lines one client address gets in the proxy's log (``Loads.say``)."""


@dataclass
class ClientLoad:
    """One client address's share of the proxy, now."""

    connections: int = 0
    servers: int = 0
    held: int = 0
    open: int = 0
    requests: int = 0
    bytes: int = 0

    def weight(self) -> int:
        """The memory it holds, as far as the proxy can tell (``CONNECTION_COST`` a connection)."""
        return (self.connections + self.servers) * CONNECTION_COST + self.held

    def idle(self) -> bool:
        """Nothing of it is open in the proxy (left out of the published snapshot)."""
        return not (self.connections or self.servers or self.held or self.open)


class Loads:
    """Every client's ``ClientLoad``, and the buffers each of its connections holds."""

    def __init__(self) -> None:
        """No client yet."""
        self.clients: dict[str, ClientLoad] = {}
        self.buffers: dict[str, dict[int, int]] = {}
        """A client connection's id: bytes held by each of its buffers (by the buffer's owner)."""
        self.addresses: dict[str, str] = {}
        """A client connection's id: its address."""
        self.changed = True
        self.said: dict[str, int] = {}

    def say(self, address: str, record: dict[str, Any]) -> None:
        """Log ``record`` about ``address``'s traffic, within its ``MAX_SAID`` lines."""
        said = self.said[address] = self.said.get(address, 0) + 1
        if said <= MAX_SAID:
            log(record)
        elif said == MAX_SAID + 1:
            why = f"over {MAX_SAID:,} lines: its later refusals and blocks are in its record only"
            log({"quiet": address, "why": why})

    def of(self, address: str) -> ClientLoad:
        """``address``'s load (made at its first use)."""
        self.changed = True
        return self.clients.setdefault(address, ClientLoad())

    def counter(self, address: str) -> Any:
        """A response body's stream callable that counts its bytes to ``address``."""
        load = self.of(address)

        def counted(chunk: bytes) -> bytes:
            load.bytes += len(chunk)
            return chunk

        return counted

    def hold(self, address: str, connection: str, owner: int, size: int) -> int:
        """``owner`` (a buffer of ``connection``, from ``address``) now holds ``size`` bytes.

        Returns:
            What ``address`` holds in all its buffers now.
        """
        buffers = self.buffers.setdefault(connection, {})
        self.addresses[connection] = address
        before = buffers.pop(owner, 0)
        if size:
            buffers[owner] = size
        elif not buffers:
            del self.buffers[connection]
        load = self.of(address)
        load.held += size - before
        return load.held

    def gone(self, connection: str) -> None:
        """A client connection closed: whatever its buffers held is no longer held."""
        buffers = self.buffers.pop(connection, {})
        address = self.addresses.pop(connection, None)
        if address is not None and buffers:
            self.of(address).held -= sum(buffers.values())

    def snapshot(self) -> dict[str, Any]:
        """What each client holds now (idle ones left out), as ``LOAD_FILE`` holds it."""
        busy = {a: asdict(load) for a, load in self.clients.items() if not load.idle()}
        return {"at": round(time.time(), 3), "clients": busy}

    def publish(self, path: str = LOAD_FILE) -> None:
        """Write the snapshot into ``path`` (whole, then renamed over: a reader sees either)."""
        self.changed = False
        with open(path + ".new", "w", encoding="utf-8") as out:
            json.dump(self.snapshot(), out)
        os.replace(path + ".new", path)


def heaviest(path: str = LOAD_FILE) -> tuple[str, dict[str, Any]] | None:
    """The client holding most of the proxy in the snapshot at ``path``, with its figures.

    ``None`` when there is no snapshot or nothing is held. A tie goes to the client with more
    requests in flight, then more requests.
    """
    try:
        with open(path, encoding="utf-8") as snapshot:
            clients = json.load(snapshot).get("clients") or {}
    except (OSError, ValueError, AttributeError):
        return None
    ranked: list[tuple[tuple[int, int, int], str, dict[str, Any]]] = []
    for address, figures in clients.items():
        if not isinstance(figures, dict):
            continue
        load = ClientLoad(**{k: int(figures.get(k) or 0) for k in asdict(ClientLoad())})
        ranked.append(((load.weight(), load.open, load.requests), str(address), asdict(load)))
    if not ranked:
        return None
    score, address, figures = max(ranked)
    return None if score == (0, 0, 0) else (address, figures)
