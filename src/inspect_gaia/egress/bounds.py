"""The egress proxy's bounds: what one connection, and one sandbox, may make mitmproxy hold.

Runs elsewhere: in the proxy's container, under mitmproxy, imported by the addon; standard library
only (``shipped``).

mitmproxy 11 bounds none of the buffers a peer fills by sending and not finishing ("FIXME: protect
against header size DoS" in its ``_http1.py``): a request or response head, data an HTTP/1 client
sends after its request while the response is pending, a chunk-size line that never ends, a TLS
ClientHello (up to 16 MiB, re-parsed whole at every read). It has no option for them, so
``bound_buffers`` wraps the two methods that fill them (``Http1Connection._handle_event`` and
``ClientTLSLayer.receive_handshake_data``, pinned by ``MITMPROXY_VERSION``):

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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the package's names; in the proxy's container they sit beside this file
    from .failclosed import log
    from .load import Loads
else:
    from failclosed import log
    from load import Loads

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


def bound_buffers(loads: Loads) -> None:
    """Wrap mitmproxy's HTTP/1 and TLS readers so that they keep the bounds above (once)."""
    from mitmproxy.proxy.layers import tls  # type: ignore[import-not-found]
    from mitmproxy.proxy.layers.http import _http1  # type: ignore[import-not-found]

    handle = _http1.Http1Connection._handle_event
    if not getattr(handle, "gaia_bounded", False):
        _http1.Http1Connection._handle_event = _bounded_http1(handle, loads)
    receive = tls.ClientTLSLayer.receive_handshake_data
    if not getattr(receive, "gaia_bounded", False):
        tls.ClientTLSLayer.receive_handshake_data = _bounded_hello(receive)


def _bounded_http1(handle: Any, loads: Loads) -> Any:
    from mitmproxy.proxy import commands, events  # type: ignore[import-not-found]
    from mitmproxy.proxy.layers.http import _http1  # type: ignore[import-not-found]
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
        log({"blocked": f"a {side}'s data", "why": why, "client": address})
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


def _bounded_hello(receive: Any) -> Any:
    def bounded(self: Any, data: bytes) -> Any:
        if not self.client_hello_parsed and len(self.recv_buffer) + len(data) > MAX_HELLO:
            why = f"a TLS ClientHello over {MAX_HELLO // 1024} KiB"
            log({"blocked": "a TLS handshake", "why": why, "client": _address(self.context.client)})
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
