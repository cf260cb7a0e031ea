"""mitmproxy addon of the egress proxy in a replayed run: the recorded web, and nothing else.

Runs elsewhere: in the proxy's container, under mitmproxy, in place of the guard
(``mitmdump -s replay.py -s recorder.py``); standard library only besides (``shipped``).

``-T web_replay=ARCHIVE``: the host checks the archive (or HAR) and sends the proxy only what it
checked — ``gaia_replay/index.jsonl`` and ``gaia_replay/bodies/<sha256>``
(``web_archive.proxy_stream``) — and starts the proxy on the sandboxes' network alone (no way out
at all). This program is the package's, copied after that. Every request is answered here, before
any server is asked: with the recorded response ``replay_match.Index.find`` picks for it and its
sample and its ``Accept-Encoding`` (a decoded twin when it does not accept the recording's
coding), or with a 403 whose body says ``not in the recorded web`` (and, when the URL was
recorded only in codings the request does not accept, which). The recorder writes both down
as the guard's decisions are (``allowed`` with ``why`` ``replayed`` or ``replayed from the pool``;
``refused``, ``not in the recorded web``). The container's own health probes (loopback) are
answered "alive".

**Which sample asks.** The run writes, at each sample's start, ``<gaia_record_dir>/samples/<name>``
(its sample's id and epoch) and ``clients/<address>`` (the sandbox's name, for the recorder):
read here per client connection, so a sample is served its own recording first.

**Bodies stream.** A body up to ``INLINE`` bytes is answered at once; a larger one is not read
here at all: the request is pointed at a server of this process on loopback (``BodyServer``), which
sends the recorded status, headers and file in chunks, and mitmproxy streams that to the sandbox
as it streams any server's body (``stream_large_bodies``: a client that does not read holds up the
sending, not the proxy's memory). The recorder sees an ordinary response, and records the URL the
sandbox asked for (``ASKED``).
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from mitmproxy import ctx, http  # type: ignore[import-not-found]

if TYPE_CHECKING:  # the package's names; in the proxy's container they sit beside this file
    from .failclosed import ASKED, DECISION, fail_closed, log
    from .replay_match import BODIES, INDEX, REFUSAL, Index, Recorded
else:
    from failclosed import ASKED, DECISION, fail_closed, log
    from replay_match import BODIES, INDEX, REFUSAL, Index, Recorded

INLINE = 64 << 10
"""Bodies larger are streamed from their file (as the proxy's ``stream_large_bodies``)."""
_DROPPED = {"transfer-encoding", "content-length", "connection", "keep-alive"}
_CHUNK = 64 << 10


class BodyServer:
    """Loopback HTTP/1.1 server of this process: each large body, once, by a one-time token."""

    def __init__(self) -> None:
        """Listen on an ephemeral loopback port, on a thread."""
        self.waiting: dict[str, tuple[int, list[tuple[str, str]], str]] = {}
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                while length > 0:  # a request's own body is read and dropped
                    got = self.rfile.read(min(length, _CHUNK))
                    if not got:
                        break
                    length -= len(got)
                with owner.lock:
                    found = owner.waiting.pop(self.path.lstrip("/"), None)
                if found is None:
                    self.send_error(404)
                    return
                status, headers, path = found
                size = os.path.getsize(path)
                self.send_response_only(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                with open(path, "rb") as body:
                    while chunk := body.read(_CHUNK):
                        self.wfile.write(chunk)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = serve

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def hold(self, status: int, headers: list[tuple[str, str]], path: str) -> str:
        """Keep one body for one request; its token (the request's path there)."""
        token = uuid.uuid4().hex
        with self.lock:
            self.waiting[token] = (status, headers, path)
        return token


class Replay:
    """The addon: recorded responses by ``replay_match.Index``."""

    def __init__(self) -> None:
        """Nothing served until ``gaia_replay`` is set."""
        self.directory = ""
        self.index = Index()
        self.bodies: BodyServer | None = None
        self.samples: dict[str, tuple[str, int | None]] = {}
        """Client connection id: its sample and epoch."""

    def load(self, loader: Any) -> None:
        """Declare the option."""
        loader.add_option("gaia_replay", str, "", "The checked archive the run replays")

    def configure(self, updated: set[str]) -> None:
        """Read the index the host wrote; start the body server."""
        if "gaia_replay" in updated and ctx.options.gaia_replay:
            self.directory = ctx.options.gaia_replay
            self.index = Index()
            with open(os.path.join(self.directory, INDEX), encoding="utf-8") as f:
                for line in f:
                    recorded = Recorded.of(json.loads(line))
                    if recorded is not None:
                        self.index.add(recorded)
            if self.bodies is None:
                self.bodies = BodyServer()
            log({"replaying": len(self.index)})

    @fail_closed
    def request(self, flow: http.HTTPFlow) -> None:
        """Answer from the archive, or refuse: never a server."""
        peer = str(flow.client_conn.peername[0]).removeprefix("::ffff:")
        if peer in ("127.0.0.1", "::1"):
            flow.response = http.Response.make(200, b"alive\n", {"content-type": "text/plain"})
            return
        url, method = flow.request.pretty_url, flow.request.method
        sample, epoch = self._sample(flow.client_conn)
        accepted = flow.request.headers.get_all("accept-encoding")
        found = self.index.find(method, url, sample, epoch, ", ".join(accepted) or None)
        if found is None:
            flow.metadata[DECISION] = ("refused", REFUSAL)
            coded = " or ".join(self.index.codings(method, url))
            said = (
                f" (recorded only as {coded}, which this request does not accept)" if coded else ""
            )
            text = f"inspect_gaia: {REFUSAL}: {url}{said} (this run replays an archive)\n"
            flow.response = http.Response.make(403, text.encode(), {"content-type": "text/plain"})
            return
        recorded, why = found
        flow.metadata[DECISION] = ("allowed", why)
        headers = [(k, v) for k, v in recorded.headers if k.lower() not in _DROPPED]
        path = os.path.join(self.directory, BODIES, recorded.sha256)
        if recorded.bytes > INLINE and method != "HEAD" and self.bodies is not None:
            flow.metadata[ASKED] = url
            token = self.bodies.hold(recorded.status, headers, path)
            flow.request.scheme, flow.request.host = "http", "127.0.0.1"
            flow.request.port, flow.request.path = self.bodies.port, f"/{token}"
            return
        with open(path, "rb") as f:
            body = f.read(INLINE + 1)
        response = http.Response.make(
            recorded.status, b"", [(k.encode(), v.encode()) for k, v in headers]
        )
        response.headers["content-length"] = str(len(body))
        response.raw_content = body
        flow.response = response

    def client_disconnected(self, client: Any) -> None:
        """Forget the connection's sample."""
        self.samples.pop(client.id, None)

    def _sample(self, client: Any) -> tuple[str | None, int | None]:
        """The client's sample, as the run named it; ``(None, None)`` until it has."""
        if client.id in self.samples:
            return self.samples[client.id]
        record = str(getattr(ctx.options, "gaia_record_dir", "") or "")
        address = str(client.peername[0]).removeprefix("::ffff:")
        try:
            with open(os.path.join(record, "clients", address), encoding="utf-8") as f:
                name = os.path.basename(f.read().strip())
            with open(os.path.join(record, "samples", name), encoding="utf-8") as f:
                data = json.loads(f.read(4096))
        except (OSError, ValueError):
            return None, None
        epoch = data.get("epoch") if isinstance(data, dict) else None
        found = (
            str(data.get("id")) if isinstance(data, dict) else None,
            epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else None,
        )
        if found[0] is not None:
            self.samples[client.id] = found  # type: ignore[assignment]
        return found


addons = [Replay()]
