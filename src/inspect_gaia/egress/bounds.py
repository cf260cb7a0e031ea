"""The egress proxy's bounds: what one connection, and one sandbox, may make mitmproxy hold.

Runs elsewhere: in the proxy's container, under mitmproxy, imported by the addon (or a script of
its own in a replay's proxy); standard library only (``shipped``).

mitmproxy 11 bounds none of the buffers a peer fills by sending and not finishing ("FIXME: protect
against header size DoS" in its ``_http1.py``): a request or response head, data an HTTP/1 client
sends after its request while the response is pending, a chunk-size line that never ends, a TLS
ClientHello (up to 16 MiB, re-parsed whole at every read). It has no option for them, so
``bound_buffers`` wraps the two methods that fill them (``Http1Connection._handle_event`` and
``ClientTLSLayer.receive_handshake_data``, pinned by ``MITMPROXY_VERSION``), and the ``Bounds``
addon caps each sandbox's connections (``MAX_CONNECTIONS``, ``MAX_SERVER_CONNECTIONS``):

* an HTTP/1 head (request or response) over ``MAX_HEAD`` bytes: a request's is answered 431, a
  response's is a 502 to the client; its connection is closed;
* any other unread input of one HTTP/1 connection over ``MAX_HELD`` bytes: closed;
* a TLS ClientHello over ``MAX_HELLO`` bytes: the handshake fails;
* all the HTTP/1 buffers of one client address together over ``MAX_CLIENT_HELD`` bytes: the
  connection that grew past it is closed.

What these buffers hold is counted per client (``load.Loads.hold``) for the supervisor's blame.
Here, not in the supervisor: only the reader of a connection's bytes knows which connection grows
and can cut it alone; the supervisor sees the process's memory as a whole, and its only remedy (a
restart) ends every sandbox's connections.

Output needs no bound of ours over HTTP/1: mitmproxy reads no more from a connection while any
of its writers holds more than asyncio's high-water mark (``drain_writers``), so a client that
does not read stops its server, and the kernel's TCP buffers hold the rest. Over HTTP/2 that does
not hold (a closed stream window parks a body in ``BufferedH2Connection.stream_buffers``, without
bound): the proxy speaks HTTP/1.1 (``addon.py`` says why).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the package's names; in the proxy's container they sit beside this file
    from .failclosed import fail_closed, log
    from .load import PUBLISH_EVERY, Loads
else:
    from failclosed import fail_closed, log
    from load import PUBLISH_EVERY, Loads

MAX_HEAD = 64 * 1024
"""Bytes of an HTTP/1 head (request line or status line, and headers) held at most."""
MAX_HELD = 128 * 1024
"""Bytes of other unread input one HTTP/1 connection holds at most (two reads' worth)."""
MAX_HELLO = 64 * 1024
"""Bytes of a TLS ClientHello held at most (a browser's is under 2 KiB)."""
MAX_CLIENT_HELD = 1024 * 1024
"""Bytes all the HTTP/1 buffers of one client address hold at most together."""
MAX_CONNECTIONS = 64
"""Connections one client address may have open to the proxy at once (Chromium opens at most 32
to a proxy; curl, pip and a browser together stay far below); one more is closed at once."""
MAX_SERVER_CONNECTIONS = 128
"""Connections the proxy may have open to servers on behalf of one client address at once (a
keep-alive client connection may reach several hosts in turn); one more is refused."""
BLOCKED = "inspect_gaia egress proxy does not allow this"
"""Starts the message of a request blocked for what it is, not for where it goes (the addon's)."""


class Bounds:
    """The addon that caps each sandbox's connections and counts what it holds (``load.py``).

    Loaded before the guard (``addon.py``), in the same script. A connection over
    ``MAX_CONNECTIONS`` is closed at once (one log line for each time a sandbox reaches the cap);
    a server connection over ``MAX_SERVER_CONNECTIONS`` is refused (the request's 502 says so).
    """

    def __init__(self, loads: Loads) -> None:
        """Count into ``loads``."""
        self.loads = loads
        self.open: dict[str, tuple[str, str]] = {}
        """A request in flight (flow id): its client's address and connection id."""
        self.crowded: set[str] = set()
        """Addresses whose connections over ``MAX_CONNECTIONS`` are being closed (said once)."""
        self.counted: set[str] = set()
        """Ids of the client and server connections counted against a sandbox."""

    def load(self, loader: Any) -> None:
        """Bound the buffers mitmproxy fills (``bound_buffers``)."""
        bound_buffers(self.loads)

    def running(self) -> None:
        """Publish the counts for the supervisor, from now on."""
        self.publishing = asyncio.get_running_loop().create_task(self._publish())

    async def _publish(self) -> None:
        while True:
            await asyncio.sleep(PUBLISH_EVERY)
            if self.loads.changed:
                try:
                    self.loads.publish()
                except OSError as ex:  # a full disk: the blame is lost, not the proxy
                    log({"load_not_published": str(ex)[:200]})

    @fail_closed
    def client_connected(self, client: Any) -> None:
        """Count a sandbox's connection, or close it when the sandbox is at its cap."""
        address = _address(client)
        if _local(address):
            return
        load = self.loads.of(address)
        if load.connections >= MAX_CONNECTIONS:
            why = f"over {MAX_CONNECTIONS} connections at once from one sandbox"
            if address not in self.crowded:
                self.crowded.add(address)
                self.loads.say(address, {"blocked": "a connection", "why": why, "client": address})
            client.error = f"{BLOCKED}: {why}"
            return
        load.connections += 1
        self.counted.add(client.id)

    def client_disconnected(self, client: Any) -> None:
        """Forget what the connection held, and its requests still in flight."""
        if client.id in self.counted:
            self.counted.discard(client.id)
            address = _address(client)
            load = self.loads.of(address)
            load.connections -= 1
            if load.connections < MAX_CONNECTIONS:
                self.crowded.discard(address)
        self.loads.gone(client.id)
        for flow, (_, connection) in list(self.open.items()):
            if connection == client.id:
                self._over(flow)

    @fail_closed
    def server_connect(self, data: Any) -> None:
        """Refuse a server connection over the sandbox's ``MAX_SERVER_CONNECTIONS``."""
        address = _address(data.client)
        if data.server.error is None and not _local(address):
            if self.loads.of(address).servers >= MAX_SERVER_CONNECTIONS:
                why = f"over {MAX_SERVER_CONNECTIONS} server connections for one sandbox"
                data.server.error = f"{BLOCKED}: {why}"

    def server_connected(self, data: Any) -> None:
        """Count the server connection against its sandbox."""
        address = _address(data.client)
        if not _local(address):
            self.loads.of(address).servers += 1
            self.counted.add(data.server.id)

    def server_disconnected(self, data: Any) -> None:
        """The server connection no longer counts."""
        if data.server.id in self.counted:
            self.counted.discard(data.server.id)
            self.loads.of(_address(data.client)).servers -= 1

    def requestheaders(self, flow: Any) -> None:
        """One more request of the sandbox's, in flight."""
        address = _address(flow.client_conn)
        if not _local(address):
            load = self.loads.of(address)
            load.requests += 1
            load.open += 1
            self.open[flow.id] = (address, flow.client_conn.id)

    def response(self, flow: Any) -> None:
        """The request is no longer in flight."""
        self._over(flow.id)

    def error(self, flow: Any) -> None:
        """The request is no longer in flight."""
        self._over(flow.id)

    def _over(self, flow: str) -> None:
        address, _ = self.open.pop(flow, (None, None))
        if address is not None:
            self.loads.of(address).open -= 1


def bound_buffers(loads: Loads) -> None:
    """Wrap mitmproxy's HTTP/1 and TLS readers so that they keep the bounds above (once)."""
    from mitmproxy.proxy.layers import tls  # type: ignore[import-not-found]
    from mitmproxy.proxy.layers.http import _http1  # type: ignore[import-not-found]

    handle = _http1.Http1Connection._handle_event
    if not getattr(handle, "gaia_bounded", False):
        _http1.Http1Connection._handle_event = _bounded_http1(handle, loads)
    receive = tls.ClientTLSLayer.receive_handshake_data
    if not getattr(receive, "gaia_bounded", False):
        tls.ClientTLSLayer.receive_handshake_data = _bounded_hello(receive, loads)


def _bounded_http1(handle: Any, loads: Loads) -> Any:
    from mitmproxy.proxy import commands, events  # type: ignore[import-not-found]
    from mitmproxy.proxy.layers.http import _http1
    from mitmproxy.proxy.layers.http._base import ReceiveHttp  # type: ignore[import-not-found]

    def bounded(self: Any, event: Any) -> Any:
        yield from handle(self, event)
        client = self.context.client
        address = _address(client)
        closed = isinstance(event, events.ConnectionClosed) and event.connection == self.conn
        size = 0 if closed or self.state in (self.passthrough, self.done) else len(self.buf)
        if self.state == self.done and len(self.buf):
            self.buf = type(self.buf)()  # closing: what still comes is dropped
        total = loads.hold(address, client.id, id(self), size)
        heading = self.state == self.read_headers
        side = "request" if isinstance(self, _http1.Http1Server) else "response"
        if heading and size > MAX_HEAD:
            why = f"a {side} head over {MAX_HEAD // 1024} KiB"
        elif size > MAX_HELD:
            why = f"over {MAX_HELD // 1024} KiB of unread {side} data on one connection"
        elif size and total > MAX_CLIENT_HELD:
            why = f"over {MAX_CLIENT_HELD // 1024} KiB unread in one sandbox's connections"
        else:
            return
        what = f"a {side} head" if "head" in why else f"a {side}'s data"
        loads.say(address, {"blocked": what, "why": why, "client": address})
        self.buf = type(self.buf)()
        loads.hold(address, client.id, id(self), 0)
        message = f"{BLOCKED}: {why}."
        if side == "request" and heading:  # no stream yet: the client is answered here
            status = 431 if "head" in why else 400
            yield commands.SendData(self.conn, _http1.make_error_response(status, message))
            yield commands.CloseConnection(self.conn)
        else:
            yield commands.CloseConnection(self.conn)
            if self.stream_id is not None:
                yield ReceiveHttp(self.ReceiveProtocolError(self.stream_id, message))
        self.state = self.done

    bounded.gaia_bounded = True  # type: ignore[attr-defined]
    return bounded


def _bounded_hello(receive: Any, loads: Loads) -> Any:
    def bounded(self: Any, data: bytes) -> Any:
        if not self.client_hello_parsed and len(self.recv_buffer) + len(data) > MAX_HELLO:
            why = f"a TLS ClientHello over {MAX_HELLO // 1024} KiB"
            address = _address(self.context.client)
            loads.say(address, {"blocked": "a TLS handshake", "why": why, "client": address})
            self.recv_buffer = bytearray()
            return False, f"{BLOCKED}: {why}"
        return (yield from receive(self, data))

    bounded.gaia_bounded = True  # type: ignore[attr-defined]
    return bounded


def _address(client: Any) -> str:
    try:
        return str(client.peername[0]).removeprefix("::ffff:")
    except Exception:
        return "?"


def _local(address: str) -> bool:
    """The container's own (its supervisor's probes): no sandbox's."""
    return address in ("127.0.0.1", "::1") or address.startswith("127.")


addons = [Bounds(Loads())]
"""As a script of its own (``-s bounds.py``): the replay's proxy, which has no guard. The guard's
proxy loads ``Bounds`` through ``addon.py`` instead, sharing its counts (this one is unused)."""
