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

A request not yet answered is in ``<gaia_record_dir>/open/<sandbox>.jsonl`` meanwhile, as the line
it would end as if it got no answer (``status`` ``None``, ``error`` ``UNANSWERED``); the file is
written anew (whole, then renamed over) as each request begins and ends. When a sample ends, its
sandbox frozen, the run reads it after the sandbox's file: a request still unanswered then (a slow
server, a body still streaming) is in the sample as such, never missing.

Which sandbox a client is: the run writes ``<gaia_record_dir>/clients/<address>`` (the sandbox's
container name) once the sandbox has its address on the run's network, and reads its file back
when the sample ends
(``sandboxes/docker/egress_record.py``). A client with no such file yet is recorded
in ``UNATTRIBUTED``. The file is opened, appended and closed per line: a line is on disk before
the response's last byte leaves (mitmproxy runs the ``response`` hook first), so a command that
read a page has its line written by the time it returns.

With ``gaia_bodies`` (``-T web_record=bodies``) each response body is kept too, as it went to
the sandbox: streamed chunk by chunk into ``<gaia_record_dir>/bodies/<sha256>`` (one file per
distinct body), never held; the line then says ``body`` (``kept``, or which cap stopped it) and
carries the response's ``headers``. A body over ``gaia_body_cap`` bytes, or one that would take
the run's bodies over ``gaia_run_cap``, is not kept: one log line says so (the run's cap once).

Fail closed: every hook is wrapped in ``failclosed.fail_closed``, as the guard's are: a hook that
raises kills its flow (the sandbox sees a broken connection, never an unrecorded page) and logs
``{"killed": ..., "why": ...}``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from typing import TYPE_CHECKING, Any

from mitmproxy import ctx, http  # type: ignore[import-not-found]

if TYPE_CHECKING:  # the package's name; in the proxy's container it sits beside this file
    from .failclosed import ASKED, DECISION, fail_closed, log
else:
    from failclosed import ASKED, DECISION, fail_closed, log

UNATTRIBUTED = "_unattributed"
OPEN = "open"
"""Where each sandbox's requests not yet answered are (the host's ``web_record.OPEN_FOLDER``)."""
UNANSWERED = "unanswered when the sample ended"
"""Their ``error`` (the host's ``web_record.UNANSWERED``)."""
_STARTED = "inspect_gaia.started"
_HASH = "inspect_gaia.hash"
_OPENED = "inspect_gaia.opened"
KEPT = "kept"


class Bodies:
    """Where the run's response bodies are kept: by their SHA-256, within two caps."""

    def __init__(self, directory: str, per_body: int, per_run: int) -> None:
        """Keep bodies in ``directory`` (made now): each up to ``per_body``, all ``per_run``."""
        self.directory = directory
        self.per_body = per_body
        self.per_run = per_run
        self.kept = 0
        self.run_full = False
        self.said_full = False
        os.makedirs(directory, exist_ok=True)

    def open(self) -> BodyFile:
        """A new body, written as it streams."""
        return BodyFile(self)


class BodyFile:
    """One body on its way to ``bodies/<sha256>``: a part file until its hash is known."""

    def __init__(self, bodies: Bodies) -> None:
        """Open the part file."""
        self.bodies = bodies
        self.path = os.path.join(bodies.directory, f".part-{uuid.uuid4().hex}")
        self.out: Any = open(self.path, "wb")  # closed by close or drop
        self.size = 0
        self.written = 0
        self.over: str | None = None

    def write(self, piece: bytes) -> None:
        """Append ``piece``, unless a cap is reached (then the part file goes)."""
        if self.out is None:
            return
        self.size += len(piece)
        if self.size > self.bodies.per_body:
            self.drop(f"over the per-body cap ({self.bodies.per_body} bytes)")
        elif self.bodies.run_full or self.bodies.kept + len(piece) > self.bodies.per_run:
            self.bodies.run_full = True
            self.drop(f"over the run's cap ({self.bodies.per_run} bytes)")
        else:
            self.bodies.kept += len(piece)
            self.written += len(piece)
            self.out.write(piece)

    def drop(self, why: str) -> None:
        """Keep nothing of this body (a cap, or a failed exchange)."""
        if self.out is not None:
            self.out.close()
            self.out = None
            self.bodies.kept -= self.written
            os.unlink(self.path)
        self.over = self.over or why

    def close(self, sha256: str) -> str:
        """File the body under its hash (once per distinct body); what became of it."""
        if self.out is None:
            return self.over or "not kept"
        self.out.close()
        self.out = None
        final = os.path.join(self.bodies.directory, sha256)
        if os.path.exists(final):  # the same body again: keep one
            self.bodies.kept -= self.written
            os.unlink(self.path)
        else:
            os.replace(self.path, final)
        return KEPT


class BodyHash:
    """The size and SHA-256 of a body, taken chunk by chunk as it streams past."""

    def __init__(self, then: Any = True, keep: BodyFile | None = None) -> None:
        """Count (and keep, into ``keep``) what ``then`` streams (``True``: the body itself)."""
        self.digest = hashlib.sha256()
        self.size = 0
        self.then = then
        self.keep = keep

    def __call__(self, chunk: bytes) -> Any:
        """Count ``chunk`` and pass it on (through the previous callable, if any)."""
        out = self.then(chunk) if callable(self.then) else chunk
        for piece in [out] if isinstance(out, bytes) else list(out):
            self.digest.update(piece)
            self.size += len(piece)
            if self.keep is not None:
                self.keep.write(piece)
        return out

    def kept(self) -> str | None:
        """What became of the body (``None``: bodies are not kept)."""
        if self.keep is None:
            return None
        return self.keep.close(self.digest.hexdigest())


class Recorder:
    """The addon: one line per request, in the file of the sandbox that made it."""

    def __init__(self) -> None:
        """Nothing recorded until ``gaia_record_dir`` is set."""
        self.directory = ""
        self.owners: dict[str, str] = {}
        """Client connection id: its sandbox's file name."""
        self.bodies: Bodies | None = None
        self.open: dict[str, dict[str, tuple[str, str]]] = {}
        """Sandbox file name: its requests not yet answered (flow id: client id, line)."""

    def load(self, loader: Any) -> None:
        """Declare the options."""
        loader.add_option("gaia_record_dir", str, "", "Where each sandbox's requests go")
        loader.add_option("gaia_bodies", bool, False, "Keep the response bodies too")
        loader.add_option("gaia_body_cap", int, 64 << 20, "Largest body kept (bytes)")
        loader.add_option("gaia_run_cap", int, 1 << 30, "All bodies kept, at most (bytes)")

    def configure(self, updated: set[str]) -> None:
        """Read where to record."""
        if "gaia_record_dir" in updated:
            self.directory = ctx.options.gaia_record_dir
            if self.directory:
                for folder in ("clients", OPEN):
                    os.makedirs(os.path.join(self.directory, folder), exist_ok=True)
        if self.directory and ctx.options.gaia_bodies:
            self.bodies = Bodies(
                os.path.join(self.directory, "bodies"),
                ctx.options.gaia_body_cap,
                ctx.options.gaia_run_cap,
            )

    # -- hooks ----------------------------------------------------------------------------------

    @fail_closed
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """Note when the request began, and that it is open."""
        flow.metadata[_STARTED] = time.time()
        if self.directory and flow.request.method != "CONNECT" and not self._own(flow):
            owner = self._owner(flow.client_conn)
            line = json.dumps(self._record(flow, status=None, error=UNANSWERED))
            self.open.setdefault(owner, {})[flow.id] = (flow.client_conn.id, line)
            flow.metadata[_OPENED] = owner
            self._write_open(owner)

    @fail_closed
    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Hash the body while it streams (the guard has set it streaming)."""
        if flow.response is not None and flow.response.stream:
            keep = None if self._own(flow) else self._keeper()  # not the health probes'
            counted = BodyHash(flow.response.stream, keep)
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
            counted = BodyHash(keep=self._keeper())
            counted(body)
        body_fate = counted.kept()
        if body_fate not in (None, KEPT):
            self._say_over(flow, str(body_fate))
        self._write(
            flow,
            status=response.status_code,
            size=counted.size,
            sha256=counted.digest.hexdigest(),
            kind=response.headers.get("content-type"),
            body=body_fate,
            headers=None
            if body_fate is None
            else [[k, v] for k, v in response.headers.items(multi=True)],
        )

    @fail_closed
    def error(self, flow: http.HTTPFlow) -> None:
        """The exchange failed (a refused connection, a reset, a name that resolves privately)."""
        counted = flow.metadata.get(_HASH)
        if counted is not None and counted.keep is not None:
            counted.keep.drop("the exchange failed")
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
        """Forget the connection's owner, and any of its requests left open without a word."""
        owner = self.owners.pop(client.id, None)
        flows = self.open.get(owner or UNATTRIBUTED, {})
        gone = [flow for flow, (of, _) in flows.items() if of == client.id]
        for flow in gone:
            del flows[flow]
        if gone:
            self._write_open(owner or UNATTRIBUTED)

    # -- bodies ---------------------------------------------------------------------------------

    def _keeper(self) -> BodyFile | None:
        return None if self.bodies is None else self.bodies.open()

    def _say_over(self, flow: http.HTTPFlow, why: str) -> None:
        """One log line per body over its cap; the run's cap once."""
        assert self.bodies is not None
        if "run's cap" in why:
            if self.bodies.said_full:
                return
            self.bodies.said_full = True
        log({"body_not_kept": why, "url": flow.request.pretty_url})

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
        body: str | None = None,
        headers: list[list[str]] | None = None,
    ) -> None:
        owner = flow.metadata.pop(_OPENED, None)
        if owner is not None and self.open.get(owner, {}).pop(flow.id, None) is not None:
            self._write_open(owner)
        record = self._record(flow, status=status, error=error)
        record.update(bytes=size, sha256=sha256, type=kind)
        if body is not None:
            record.update(body=body, headers=headers)
        self._line(flow.client_conn, record)

    def _record(
        self, flow: http.HTTPFlow, *, status: int | None, error: str | None
    ) -> dict[str, Any]:
        """A request's line (the guard's decision read off the flow)."""
        decision, why = flow.metadata.get(DECISION) or ("allowed", None)
        if error is not None and decision == "allowed" and "does not allow this" in error:
            decision, why = "blocked", error  # the resolver found no public address
        request = flow.request
        return {
            "t": round(float(flow.metadata.get(_STARTED) or request.timestamp_start), 3),
            "method": request.method,
            "url": request.authority
            if request.method == "CONNECT"
            else flow.metadata.get(ASKED, request.pretty_url),
            "status": status,
            "bytes": 0,
            "sha256": None,
            "type": None,
            "decision": decision,
            "why": why,
            "error": error,
        }

    def _write_open(self, owner: str) -> None:
        """The sandbox's open requests, written whole and renamed over (a reader sees either)."""
        lines = self.open.get(owner) or {}
        if not lines:
            self.open.pop(owner, None)
        path = os.path.join(self.directory, OPEN, f"{owner}.jsonl")
        with open(path + ".new", "w", encoding="utf-8") as out:
            out.writelines(line + "\n" for _, line in lines.values())
        os.replace(path + ".new", path)

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
