"""mitmproxy addon of inspect_gaia's egress proxy: a record of every request, per sandbox.

Runs inside the run's proxy container as the second script (``mitmdump -s addon.py -s record.py``),
after the guard (``addon.py``), whose decisions it reads off each flow (``flow.metadata``).

Runs elsewhere: in the proxy's container, under mitmproxy; standard library only (``shipped``).

Each request a sandbox makes ends as one JSON line in ``<gaia_record_dir>/<sandbox>.jsonl``:
``t`` (Unix time the request's headers arrived), ``method``, ``url``, ``status`` (``None``: no
response), ``bytes`` and ``sha256`` of the response body as it went to the sandbox (content
encoding kept; hashed chunk by chunk while it streams, never held), ``type`` (its
``Content-Type``), ``decision`` (``allowed``, ``refused``: an answer source, ``blocked``: the
network policy) with ``why``, and ``error`` when the exchange failed. A tunnel refused before any
request (a port, a raw TCP stream) is one line too, its URL ``host:port``.

Which sandbox a client is: the run writes ``<gaia_record_dir>/clients/<address>`` (the sandbox's
container name) once the sandbox has its address on the run's network, and reads its file back
when the sample ends (``_docker/egress_record.py``). A client with no such file yet is recorded
in ``UNATTRIBUTED``. The file is opened, appended and closed per line: a line is on disk before
the response's last byte leaves (mitmproxy runs the ``response`` hook first), so a command that
read a page has its line written by the time it returns.

Fail closed: every hook is wrapped in ``failclosed.fail_closed``, as the guard's are: a hook that
raises kills its flow (the sandbox sees a broken connection, never an unrecorded page) and logs
``{"killed": ..., "why": ...}``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from typing import TYPE_CHECKING, Any

from mitmproxy import ctx, http  # type: ignore[import-not-found]

if TYPE_CHECKING:  # the package's name; in the proxy's container it sits beside this file
    from .failclosed import fail_closed
else:
    from failclosed import fail_closed

UNATTRIBUTED = "_unattributed"
DECISION = "inspect_gaia.decision"
"""``flow.metadata`` key the guard sets: ``(decision, why)`` of a request it answered itself."""
ASKED = "inspect_gaia.url"
"""``flow.metadata`` key the guard sets: the URL of a refused request whose host it replaced."""
_STARTED = "inspect_gaia.started"
_HASH = "inspect_gaia.hash"


class BodyHash:
    """The size and SHA-256 of a body, taken chunk by chunk as it streams past."""

    def __init__(self, then: Any = True) -> None:
        """``then``: what streamed the body before (``True``, or another addon's callable)."""
        self.digest = hashlib.sha256()
        self.size = 0
        self.then = then

    def __call__(self, chunk: bytes) -> Any:
        """Count ``chunk`` and pass it on (through the previous callable, if any)."""
        out = self.then(chunk) if callable(self.then) else chunk
        for piece in [out] if isinstance(out, bytes) else list(out):
            self.digest.update(piece)
            self.size += len(piece)
        return out


class Recorder:
    """The addon: one line per request, in the file of the sandbox that made it."""

    def __init__(self) -> None:
        """Nothing recorded until ``gaia_record_dir`` is set."""
        self.directory = ""
        self.owners: dict[str, str] = {}
        """Client connection id: its sandbox's file name."""

    def load(self, loader: Any) -> None:
        """Declare the option."""
        loader.add_option("gaia_record_dir", str, "", "Where each sandbox's requests go")

    def configure(self, updated: set[str]) -> None:
        """Read where to record."""
        if "gaia_record_dir" in updated:
            self.directory = ctx.options.gaia_record_dir
            if self.directory:
                os.makedirs(os.path.join(self.directory, "clients"), exist_ok=True)

    # -- hooks ----------------------------------------------------------------------------------

    @fail_closed
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """Note when the request began."""
        flow.metadata[_STARTED] = time.time()

    @fail_closed
    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Hash the body while it streams (the guard has set it streaming)."""
        if flow.response is not None and flow.response.stream:
            counted = BodyHash(flow.response.stream)
            flow.metadata[_HASH] = counted
            flow.response.stream = counted

    @fail_closed
    def response(self, flow: http.HTTPFlow) -> None:
        """The exchange is over (its last byte not yet sent): one line."""
        if flow.request.method == "CONNECT" or self._own(flow):
            return
        response = flow.response
        counted = flow.metadata.get(_HASH)
        if counted is None:  # answered whole: by the guard, or a body too small to stream
            body = response.raw_content or b""
            counted = BodyHash()
            counted(body)
        self._write(
            flow,
            status=response.status_code,
            size=counted.size,
            sha256=counted.digest.hexdigest(),
            kind=response.headers.get("content-type"),
        )

    @fail_closed
    def error(self, flow: http.HTTPFlow) -> None:
        """The exchange failed (a refused connection, a reset, a name that resolves privately)."""
        if self._own(flow):
            return
        response = flow.response
        self._write(
            flow,
            status=None if response is None else response.status_code,
            error=str(flow.error.msg) if flow.error else "failed",
        )

    @fail_closed
    def http_connect_error(self, flow: http.HTTPFlow) -> None:
        """A tunnel the guard refused (its port, its address): the only line it gets."""
        if not self._own(flow):
            self._write(flow, status=flow.response.status_code if flow.response else None)

    @fail_closed
    def tcp_start(self, flow: Any) -> None:
        """A raw TCP stream in a tunnel: the guard closes every one."""
        host, port = flow.server_conn.address
        self._line(
            flow.client_conn,
            {
                "t": round(time.time(), 3),
                "method": "TCP",
                "url": f"{host}:{port}",
                "status": None,
                "bytes": 0,
                "sha256": None,
                "type": None,
                "decision": "blocked",
                "why": "a raw TCP tunnel",
                "error": None,
            },
        )

    def client_disconnected(self, client: Any) -> None:
        """Forget the connection's owner."""
        self.owners.pop(client.id, None)

    # -- lines ----------------------------------------------------------------------------------

    def _write(
        self,
        flow: http.HTTPFlow,
        *,
        status: int | None,
        size: int = 0,
        sha256: str | None = None,
        kind: str | None = None,
        error: str | None = None,
    ) -> None:
        decision, why = flow.metadata.get(DECISION) or ("allowed", None)
        if error is not None and decision == "allowed" and "does not allow this" in error:
            decision, why = "blocked", error  # the resolver found no public address
        request = flow.request
        self._line(
            flow.client_conn,
            {
                "t": round(float(flow.metadata.get(_STARTED) or request.timestamp_start), 3),
                "method": request.method,
                "url": request.authority
                if request.method == "CONNECT"
                else flow.metadata.get(ASKED, request.pretty_url),
                "status": status,
                "bytes": size,
                "sha256": sha256,
                "type": kind,
                "decision": decision,
                "why": why,
                "error": error,
            },
        )

    def _line(self, client: Any, record: dict[str, Any]) -> None:
        if not self.directory:
            return
        owner = self._owner(client)
        with open(os.path.join(self.directory, f"{owner}.jsonl"), "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")

    def _owner(self, client: Any) -> str:
        if client.id in self.owners:
            return self.owners[client.id]
        address = str(client.peername[0]).removeprefix("::ffff:")
        try:
            with open(os.path.join(self.directory, "clients", address), encoding="utf-8") as f:
                owner = os.path.basename(f.read().strip()) or UNATTRIBUTED
        except FileNotFoundError:
            return UNATTRIBUTED  # not cached: the run names it in a moment
        self.owners[client.id] = owner
        return owner

    @staticmethod
    def _own(flow: Any) -> bool:
        """The container's own health probes (loopback) are no sandbox's requests."""
        return str(flow.client_conn.peername[0]).removeprefix("::ffff:") in ("127.0.0.1", "::1")


addons = [Recorder()]
