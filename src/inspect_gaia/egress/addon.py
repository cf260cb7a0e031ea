"""mitmproxy addon of inspect_gaia's egress proxy: refuse known GAIA answer sources, pass the rest.

Runs elsewhere: in the proxy's container, under mitmproxy; standard library only (``shipped``).

Runs inside the run's proxy container (``mitmdump -s addon.py``, kept answering by
``supervise.py``), beside ``_urlrules.py`` and ``netpolicy.py``, with:

* ``gaia_rules``: a JSON file ``{"rules": [[pattern, source name], ...]}`` (the run's list);
* ``gaia_clients``: the sandboxes' subnet; a connection from anywhere else is closed (but the
  container's own loopback, whose requests are only ever answered "alive": ``supervise.py``);
* ``gaia_deny``: the host's addresses; ``gaia_allow``: a test's own network (never a user's).

Every HTTPS connection is intercepted (the run's CA is in each sandbox's trust store), so a rule's
path applies to HTTPS as to HTTP. A request is judged on its headers, before any byte of it goes
on and before any connection: under every name it gives (target host, ``Host`` header, TLS SNI,
absolute-form authority, so ``CONNECT <ip>:443`` with a listed SNI is judged by that name) and by
every URL its path and query embed (a relay: ``web.archive.org/web/2024/https://<listed>/…``). A
refused request gets a 403 whose body starts with ``REFUSAL_MARKER`` and names the URL and the
source, which the agent reads and the scorer counts; the proxy also logs it as a JSON line
(``{"refused": url, ...}``) on stdout. A refused request that carries a body gets the same text in
mitmproxy's 502 page instead, its body dropped as it comes (mitmproxy cannot answer a request
whose body it streams).

**It fails closed.** Every hook is wrapped in ``failclosed.fail_closed``: a hook that raises, on
any input, kills its flow or refuses its connection and logs ``{"killed": …, "why": …}``; it never
returns to mitmproxy, which would forward the request unchanged. The refusal text itself cannot
raise (a byte that is not UTF-8 reaches the addon surrogate-escaped, and is written back escaped).
No request the addon decided to refuse is forwarded; ``tests/test_docker_egress_closed.py`` sends
what once slipped through (targets, hosts and headers that are not UTF-8) and holds it.

No way around it, and nothing that can take it down:

* a request target (with its names) over ``MAX_TARGET`` characters is refused before it is
  judged; heads, unread input and TLS handshakes are bounded per connection and per sandbox, and a
  sandbox may hold at most ``MAX_CONNECTIONS`` connections to the proxy at once (``bounds.py``), so
  one sandbox can neither fill the proxy's memory nor hold its event loop;
* a request whose ``Host`` header or TLS SNI names another site than the one the proxy connects
  to (the ``CONNECT`` target, an absolute-form URL's host) is blocked: what the record says was
  read is where it was read from (domain fronting, a forged name in the record);
* ``CONNECT``, and a plain HTTP request, only to ports 80 and 443, one ``Host`` header at most;
  a tunnel must carry HTTP or TLS (a raw one is closed), and
  WebSocket is off (mitmproxy keeps every message of a connection in memory);
* no connection to a loopback, private, link-local or host address (``netpolicy``), judged after
  name resolution: the resolver itself filters what it returns, so a name that resolves to a public
  address here and to the host's a moment later cannot slip between the check and the connect;
* every body streams, in both directions (``responseheaders``, ``requestheaders``, and
  ``stream_large_bodies`` for the rest), so a response of any size costs no memory.

**HTTP/1.1, to the sandboxes and to servers** (``--set http2=false``, held here in ``running``).
mitmproxy offers HTTP/2 to a client, and then holds a response body without bound whenever the
client's stream window is closed (``BufferedH2Connection.stream_buffers``): one request sent with
``INITIAL_WINDOW_SIZE=0``, or any page whose script reads one chunk of a large fetch in Chromium,
took the proxy to its memory limit and the web from every sample (round 6, H1). Over HTTP/1.1 a
client that does not read blocks the proxy's write, and mitmproxy then reads nothing more from the
server (``drain_writers``): the kernel's TCP buffers hold what is in flight, the proxy nothing.
HTTP/2 with a cap of ours would mean bounding h2's send buffers, its flow-control windows per
stream and per connection and its header blocks (CONTINUATION frames are held until
``END_HEADERS``: +587 MB for 400 connections) inside a library we pin but do not own, where one
missed path is an outage for every sample. What a client loses: multiplexing (a browser opens up
to 6 connections per host and 32 per proxy instead, which ``MAX_CONNECTIONS`` allows), header
compression, and server push (which browsers dropped); a page reads as it would (its script can
see ``nextHopProtocol`` say ``http/1.1``, nothing more), and a client that offers HTTP/2 alone
(gRPC, not a page) fails its handshake. Servers are offered HTTP/1.1 too: every public web server
answers it, and HTTP/2 upstream would open the same paths into the proxy's memory to a hostile
server (a page an agent opens) from the other side; a server that tells clients apart by protocol
already sees the proxy's TLS, never the browser's.

Blocked requests that are not answer sources (a port, a private address, a raw tunnel) log
``{"blocked": ..., "why": ...}``: they are not counted as refusals.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
from typing import TYPE_CHECKING, Any

from _urlrules import (  # type: ignore[import-not-found]
    MAX_TARGET,
    REFUSAL,
    Rule,
    parse_rule,
    request_match,
)
from mitmproxy import ctx, http  # type: ignore[import-not-found]
from netpolicy import AddressPolicy, networks  # type: ignore[import-not-found]

if TYPE_CHECKING:  # the package's names; in the proxy's container they sit beside this file
    from .bounds import BLOCKED, Bounds
    from .failclosed import ASKED, DECISION, SERVER, fail_closed, log
    from .load import Loads
else:
    from bounds import BLOCKED, Bounds
    from failclosed import ASKED, DECISION, SERVER, fail_closed, log
    from load import Loads

PORTS = (80, 443)
"""The only ports a ``CONNECT`` may name (the web's)."""
ALIVE = b"inspect_gaia egress proxy alive\n"
SAID_URL = 500
"""Characters of a blocked URL in the proxy's log (its record has more: ``record_files``)."""


class AnswerSourceGuard:
    """The addon: loads the rules, checks clients and destinations, refuses matching requests."""

    def __init__(self, loads: Loads) -> None:
        """No rules and no client restriction until configured."""
        self.rules: list[Rule] = []
        self.clients: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
        self.policy = AddressPolicy()
        self.refusing: dict[str, str] = {}
        """Server connections never to be opened (a refused request's body, a raw tunnel): why."""
        self.loads = loads
        """What each sandbox holds of the proxy (``load.py``), counted by ``bounds.Bounds``."""

    def load(self, loader: Any) -> None:
        """Declare the options."""
        loader.add_option("gaia_rules", str, "", "JSON file of answer-source rules")
        loader.add_option("gaia_clients", str, "", "Subnet allowed to use the proxy")
        loader.add_option("gaia_deny", str, "", "The host's addresses (comma-separated)")
        loader.add_option("gaia_allow", str, "", "Test-only: private networks it may reach")

    def configure(self, updated: set[str]) -> None:
        """Read the rules, the client subnet and the address policy; hold HTTP/2 off."""
        if "gaia_rules" in updated and ctx.options.gaia_rules:
            with open(ctx.options.gaia_rules, encoding="utf-8") as handle:
                data = json.load(handle)
            self.rules = [parse_rule(pattern, source) for pattern, source in data["rules"]]
            _log({"rules": len(self.rules)})
        if "gaia_clients" in updated and ctx.options.gaia_clients:
            self.clients = ipaddress.ip_network(ctx.options.gaia_clients)
        if updated & {"gaia_deny", "gaia_allow"}:
            self.policy = AddressPolicy.of(
                networks(ctx.options.gaia_deny), networks(ctx.options.gaia_allow)
            )
        if "http2" in updated and ctx.options.http2:  # see the module docstring
            ctx.options.update(http2=False)

    def running(self) -> None:
        """Filter what the resolver returns through the address policy (see the docstring)."""
        loop = asyncio.get_running_loop()
        resolve = loop.getaddrinfo

        async def checked(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            found = await resolve(host, port, *args, **kwargs)
            if kwargs.get("flags", 0) & socket.AI_PASSIVE:
                return found  # an address to listen on, not to connect to
            kept = [info for info in found if self.policy.refusal(str(info[4][0])) is None]
            if not kept:
                why = "; ".join(
                    dict.fromkeys(str(self.policy.refusal(str(info[4][0]))) for info in found)
                )
                self.loads.say("?", {"blocked": f"{host}:{port}", "why": why})
                raise OSError(f"{BLOCKED}: {host} resolves to no public address ({why})")
            return kept

        loop.getaddrinfo = checked  # type: ignore[method-assign]

    # -- clients --------------------------------------------------------------------------------

    @fail_closed
    def client_connected(self, client: Any) -> None:
        """Close a connection from neither the run's sandboxes nor the container itself."""
        if self.clients is None or self._sandbox(client) or self._local(client):
            return
        client.error = f"{client.peername[0]} is not a sandbox of this run"

    @fail_closed
    def server_connect(self, data: Any) -> None:
        """Open no connection to what was refused, nor to a private address given as such."""
        host = str(data.server.address[0]) if data.server.address else ""
        why = self.refusing.pop(data.server.id, None) or self.refusing.pop(host, None)
        if why is None:
            why = self._literal_refusal(host)
        if why is not None:
            data.server.error = why

    def _sandbox(self, client: Any) -> bool:
        address = _address(client.peername[0])
        return self.clients is None or address in self.clients

    def _local(self, client: Any) -> bool:
        return _address(client.peername[0]).is_loopback

    # -- requests -------------------------------------------------------------------------------

    @fail_closed
    def http_connect(self, flow: http.HTTPFlow) -> None:
        """A tunnel: only from a sandbox, only to the web's ports and to public addresses."""
        request = flow.request
        if not self._sandbox(flow.client_conn):
            return self._block(flow, "a request from outside the sandboxes")
        if request.port not in PORTS:
            return self._block(flow, f"CONNECT to port {request.port} (only 80 and 443)")
        why = self._literal_refusal(request.host)
        if why is not None:
            return self._block(flow, why)
        return None

    @fail_closed
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """Judge a request on its headers, then stream its body (see the module docstring)."""
        request = flow.request
        if not self._sandbox(flow.client_conn):
            flow.response = http.Response.make(200, ALIVE, {"Content-Type": "text/plain"})
            return
        hosts = [request.host, request.host_header or "", flow.client_conn.sni or ""]
        hosts.append(getattr(request, "authority", "") or "")
        judged = len(request.path or "") + sum(len(host) for host in hosts)
        if judged > MAX_TARGET:
            return self._block(flow, f"a request target over {MAX_TARGET // 1024} KiB")
        flow.metadata[SERVER] = f"{request.host}:{request.port}"
        if len(request.headers.get_all("host")) > 1:  # servers read the first, or the last
            return self._block(flow, "more than one Host header")
        if request.port not in PORTS:  # absolute-form plain HTTP names its own port
            return self._block(flow, f"a request to port {request.port} (only 80 and 443)")
        found = request_match(self.rules, request.scheme, hosts, request.path or "/")
        if found is not None:
            return self._refuse(flow, *found)
        elsewhere = _elsewhere(request.host, hosts[1:])
        if elsewhere is not None:
            return self._block(flow, f"a request for {elsewhere} sent to {_site(request.host)}")
        why = self._literal_refusal(request.host)
        if why is not None:
            return self._block(flow, why)
        request.stream = True
        return None

    @fail_closed
    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Stream every response (a body is never held in memory), counting it to its sandbox.

        A response the guard made itself (a refusal) goes whole: its text is the body recorded.
        """
        if flow.response is not None and flow.response.raw_content is None:
            flow.response.stream = self.loads.counter(_client(flow))

    @fail_closed
    def tcp_start(self, flow: Any) -> None:
        """Close a raw tunnel (neither HTTP nor TLS): there is nothing in it to judge."""
        host, port = flow.server_conn.address
        self.refusing[flow.server_conn.id] = "a raw TCP tunnel"
        address = _client(flow)
        self.loads.say(
            address, {"blocked": f"tcp://{host}:{port}", "why": "raw TCP", "client": address}
        )
        flow.kill()

    def _literal_refusal(self, host: str) -> str | None:
        """Why an address literal may not be reached (a name is judged when resolved)."""
        try:
            _address(host)
        except ValueError:
            return None
        why = self.policy.refusal(host)
        return None if why is None else str(why)

    def _refuse(self, flow: http.HTTPFlow, url: str, rule: Rule) -> None:
        body = REFUSAL.format(url=url, source=rule.source, rule=rule.pattern) + "\n"
        flow.metadata[DECISION] = ("refused", rule.source)
        address = _client(flow)
        self.loads.say(address, {"refused": _said(url), "source": rule.source, "client": address})
        self._answer(flow, 403, body, {"X-Inspect-Gaia-Refused": rule.source})

    def _block(self, flow: http.HTTPFlow, why: str) -> None:
        flow.metadata[DECISION] = ("blocked", why)
        address = _client(flow)
        self.loads.say(
            address, {"blocked": _said(flow.request.pretty_url), "why": why, "client": address}
        )
        self._answer(flow, 403, f"{BLOCKED}: {why}.\n", {})

    def _answer(self, flow: http.HTTPFlow, status: int, body: str, headers: dict[str, str]) -> None:
        """Answer in place of the server; a request with a body never reaches one either."""
        if flow.request.method == "CONNECT" or not _has_body(flow.request):
            headers = {"Content-Type": "text/plain; charset=utf-8", **headers}
            # a target's bytes that are not UTF-8 reach here surrogate-escaped: shown, never raised
            text = body.encode("utf-8", errors="backslashreplace")
            flow.response = http.Response.make(status, text, headers)
            return
        # its body streams into nothing, and the connection it would open is refused with the text
        sentinel = f"refused-{flow.id}.invalid"
        self.refusing[sentinel] = body.strip()
        flow.metadata[ASKED] = flow.request.pretty_url
        flow.request.host = sentinel
        flow.request.stream = _drop


def _has_body(request: Any) -> bool:
    length = str(request.headers.get("content-length", "")).strip()
    if length:
        return length != "0"
    return bool(
        "transfer-encoding" in request.headers or request.method in ("POST", "PUT", "PATCH")
    )


def _drop(chunk: bytes) -> bytes:
    return b""


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    address = ipaddress.ip_address(text.strip("[]"))
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _said(url: str) -> str:
    return url if len(url) <= SAID_URL else url[:SAID_URL] + f"… ({len(url):,} characters)"


def _client(flow: Any) -> str:
    return str(flow.client_conn.peername[0]).removeprefix("::ffff:")


def _site(name: str) -> str:
    """The host a name gives (``Host`` header, SNI, authority): no port, lower case, no end dot."""
    host = name.strip().lower()
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def _elsewhere(connected: str, names: list[str]) -> str | None:
    """The first of ``names`` (none empty) naming another site than ``connected``, or ``None``."""
    target = _site(connected)
    return next((_site(n) for n in names if n and _site(n) != target), None)


_log = log

_loads = Loads()
addons = [Bounds(_loads), AnswerSourceGuard(_loads)]
"""The caps and counts first (``bounds.py``), then the guard, which logs through the counts."""
