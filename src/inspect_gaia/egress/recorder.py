"""mitmproxy addon of inspect_gaia's egress proxy: a record of every request, per sandbox.

Runs inside the run's proxy container as the second script
(``mitmdump -s addon.py -s recorder.py``), after the guard (``addon.py``), whose decisions it reads
off each flow (``flow.metadata``).

Runs elsewhere: in the proxy's container, under mitmproxy; standard library only (``shipped``).

Each request a sandbox makes ends as one JSON line in ``<gaia_record_dir>/<sandbox>.jsonl``
(``record_files.py``, which appends and bounds it): ``t`` (Unix time the request's headers
arrived), ``method``, ``url`` (cut at ``record_files.MAX_URL`` characters), ``status`` (``None``:
no response), ``bytes`` and ``sha256`` of the response body as it went to the sandbox (content
encoding kept; hashed chunk by chunk while it streams, never held), ``type`` (its
``Content-Type``), ``decision`` (``allowed``, ``refused``: an answer source, ``blocked``: the
network policy) with ``why``, ``error`` when the exchange failed, and where the request went:
``server`` (the ``host:port`` the proxy connected to, or would have: the ``CONNECT`` target, an
absolute-form URL's host; the guard blocks a request whose ``Host`` names another site),
``sni`` (the TLS name the client gave) and ``address`` (the server's IP address, once
connected). A tunnel refused before any request (a port, a raw TCP stream) is one line too, its
URL ``host:port``. A response the guard made itself (a refusal) is hashed (and kept) as the body
the sandbox read: its text.

A request not yet answered has a line in ``<gaia_record_dir>.open/<sandbox>.jsonl`` meanwhile,
appended as it begins (the line it would end as if it got no answer: ``status`` ``None``,
``error`` ``UNANSWERED``, the same ``id`` as its final line), and ``<sandbox>.n`` beside it
counts those in flight. When a sample ends, its sandbox frozen, the run waits for the count to
reach zero (for a moment), then reads both files: a request with no final line (a slow server, a
body still streaming) is in the sample as such, never missing.

Which sandbox a client is: the run writes ``<gaia_record_dir>/clients/<address>`` (the sandbox's
container name) once the sandbox has its address on the run's network, and reads its file back
when the sample ends (``sandboxes/docker/egress_record.py``). A client with no such file yet is
recorded in ``UNATTRIBUTED``.

With ``gaia_bodies`` (``-T web_record=bodies``) each response body is kept too, as it went to
the sandbox (``bodies.py``: streamed into ``<gaia_record_dir>/bodies/<sha256>``, never held); the
line then says ``body`` (``kept``, or which cap stopped it) and carries the response's
``headers``. A body over ``gaia_body_cap`` bytes, one that would take its sample's kept bodies over
``gaia_sample_cap`` or the run's over ``gaia_run_cap``, is not kept: one log line says so (the
run's cap once, each sample's share once).

Fail closed: every hook is wrapped in ``failclosed.fail_closed``, as the guard's are: a hook that
raises kills its flow (the sandbox sees a broken connection, never an unrecorded page) and logs
``{"killed": ..., "why": ...}``.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mitmproxy import ctx, http  # type: ignore[import-not-found]

if TYPE_CHECKING:  # the package's names; in the proxy's container they sit beside this file
    from .bodies import KEPT, Bodies, BodyFile, BodyHash
    from .failclosed import ASKED, DECISION, SERVER, fail_closed, log
    from .record_files import RecordFiles, cut
else:
    from bodies import KEPT, Bodies, BodyFile, BodyHash
    from failclosed import ASKED, DECISION, SERVER, fail_closed, log
    from record_files import RecordFiles, cut

UNATTRIBUTED = "_unattributed"
UNANSWERED = "unanswered when the sample ended"
"""Their ``error`` (the host's ``web_record.UNANSWERED``)."""
_STARTED = "inspect_gaia.started"
_HASH = "inspect_gaia.hash"
_OPENED = "inspect_gaia.opened"


class Recorder:
    """The addon: one line per request, in the file of the sandbox that made it."""

    def __init__(self) -> None:
        """Nothing recorded until ``gaia_record_dir`` is set."""
        self.files: RecordFiles | None = None
        self.owners: dict[str, str] = {}
        """Client connection id: its sandbox's file name."""
        self.bodies: Bodies | None = None
        self.open: dict[str, tuple[str, str]] = {}
        """A request noted open (flow id): its client connection's id, the sandbox it was noted
        under."""

    def load(self, loader: Any) -> None:
        """Declare the options."""
        loader.add_option("gaia_record_dir", str, "", "Where each sandbox's requests go")
        loader.add_option("gaia_bodies", bool, False, "Keep the response bodies too")
        loader.add_option("gaia_body_cap", int, 64 << 20, "Largest body kept (bytes)")
        loader.add_option("gaia_sample_cap", int, 128 << 20, "One sample's bodies kept (bytes)")
        loader.add_option("gaia_run_cap", int, 1 << 30, "All bodies kept, at most (bytes)")

    def configure(self, updated: set[str]) -> None:
        """Read where to record."""
        directory = ctx.options.gaia_record_dir
        if "gaia_record_dir" in updated and directory:
            self.files = RecordFiles(directory)
        if directory and ctx.options.gaia_bodies:
            self.bodies = Bodies(
                os.path.join(directory, "bodies"),
                ctx.options.gaia_body_cap,
                ctx.options.gaia_run_cap,
                ctx.options.gaia_sample_cap,
            )

    # -- hooks ----------------------------------------------------------------------------------

    @fail_closed
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """Note when the request began, and that it is open."""
        flow.metadata[_STARTED] = time.time()
        if self.files and flow.request.method != "CONNECT" and not self._own(flow):
            owner = self._owner(flow.client_conn)
            if self.files.opened(owner, self._record(flow, status=None, error=UNANSWERED)):
                self.open[flow.id] = (flow.client_conn.id, owner)
                flow.metadata[_OPENED] = owner

    @fail_closed
    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Hash the body while it streams (the guard has set it streaming)."""
        response = flow.response
        if response is not None and response.stream and response.raw_content is None:
            keep = None if self._own(flow) else self._keeper(flow)  # not the health probes'
            counted = BodyHash(response.stream, keep)
            flow.metadata[_HASH] = counted
            response.stream = counted

    @fail_closed
    def response(self, flow: http.HTTPFlow) -> None:
        """The exchange is over (its last byte not yet sent): one line."""
        if flow.request.method == "CONNECT" or self._own(flow):
            return
        response = flow.response
        counted = flow.metadata.get(_HASH)
        if counted is None:  # answered whole: by the guard (its refusal's text), a small body
            counted = BodyHash(keep=self._keeper(flow))
            counted(response.raw_content or b"")
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
                "url": cut(f"{host}:{port}"),
                "status": None,
                "bytes": 0,
                "sha256": None,
                "type": None,
                "decision": "blocked",
                "why": "a raw TCP tunnel",
                "error": None,
                "server": cut(f"{host}:{port}"),
                "sni": flow.client_conn.sni,
                "address": None,
            },
        )

    def client_disconnected(self, client: Any) -> None:
        """Forget the connection's owner; its requests left open without a word are closed."""
        self.owners.pop(client.id, None)
        for flow in [f for f, (of, _) in self.open.items() if of == client.id]:
            _, owner = self.open.pop(flow)
            if self.files:
                self.files.closed(owner)

    # -- bodies ---------------------------------------------------------------------------------

    def _keeper(self, flow: http.HTTPFlow) -> BodyFile | None:
        if self.bodies is None:
            return None
        return self.bodies.open(self._owner(flow.client_conn))

    def _say_over(self, flow: http.HTTPFlow, why: str) -> None:
        """One log line per body over its cap; the run's cap once, each sample's share once."""
        assert self.bodies is not None
        said = "run" if "run's cap" in why else None
        if "sample's share" in why:
            said = f"sample {self._owner(flow.client_conn)}"
        if said is not None:
            if said in self.bodies.said:
                return
            self.bodies.said.add(said)
        log({"body_not_kept": why, "url": cut(flow.request.pretty_url)})

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
        if owner is not None and self.open.pop(flow.id, None) is not None and self.files:
            self.files.closed(owner)
        record = self._record(flow, status=status, error=error)
        record.update(bytes=size, sha256=sha256, type=kind)
        server = flow.server_conn
        if server is not None and server.peername:
            record["address"] = str(server.peername[0])
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
        tunnel = request.method == "CONNECT"
        server = request.authority if tunnel else f"{request.host}:{request.port}"
        asked = flow.metadata.get(ASKED)
        if asked is not None and SERVER not in flow.metadata:  # pointed elsewhere (a replay's body)
            parts = urlsplit(asked)
            server = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
        return {
            "id": flow.id,
            "t": round(float(flow.metadata.get(_STARTED) or request.timestamp_start), 3),
            "method": request.method,
            "url": cut(
                request.authority if tunnel else flow.metadata.get(ASKED, request.pretty_url)
            ),
            "status": status,
            "bytes": 0,
            "sha256": None,
            "type": None,
            "decision": decision,
            "why": why,
            "error": error,
            "server": cut(flow.metadata.get(SERVER, server)),
            "sni": flow.client_conn.sni,
            "address": None,
        }

    def _line(self, client: Any, record: dict[str, Any]) -> None:
        if self.files:
            self.files.line(self._owner(client), record)

    def _owner(self, client: Any) -> str:
        if client.id in self.owners:
            return self.owners[client.id]
        if self.files is None:
            return UNATTRIBUTED
        address = str(client.peername[0]).removeprefix("::ffff:")
        try:
            path = os.path.join(self.files.directory, "clients", address)
            with open(path, encoding="utf-8") as f:
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
