"""mitmproxy addon of inspect_gaia's egress proxy: refuse known GAIA answer sources, pass the rest.

Runs inside the run's proxy container (``mitmdump -s addon.py``), beside ``_urlrules.py``, with:

* ``gaia_rules``: a JSON file ``{"rules": [[pattern, source name], ...]}`` (the run's list);
* ``gaia_clients``: the sandboxes' subnet; a connection from anywhere else is closed.

Every HTTPS connection is intercepted (the run's CA is in each sandbox's trust store), so a rule's
path applies to HTTPS as to HTTP. A refused request gets a 403 whose body starts with
``REFUSAL_MARKER`` and names the URL and the source, which the agent reads and the scorer counts;
the proxy also logs it as a JSON line (``{"refused": url, ...}``) on stdout. A raw TCP tunnel
(``CONNECT`` then anything but HTTP or TLS) to a host that a rule names is closed: with no path to
read, such a host is refused whole.
"""

from __future__ import annotations

import ipaddress
import json
import sys
from typing import Any

from _urlrules import (  # type: ignore[import-not-found]
    REFUSAL_MARKER,
    Rule,
    host_matches,
    match,
    normalise,
    parse_rule,
)
from mitmproxy import ctx, http  # type: ignore[import-not-found]


class AnswerSourceGuard:
    """The addon: loads the rules, checks clients, refuses matching requests."""

    def __init__(self) -> None:
        """No rules and no client restriction until configured."""
        self.rules: list[Rule] = []
        self.clients: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
        self.refused_servers: set[str] = set()
        """Server connections of refused raw tunnels: never to be opened."""

    def load(self, loader: Any) -> None:
        """Declare the two options."""
        loader.add_option("gaia_rules", str, "", "JSON file of answer-source rules")
        loader.add_option("gaia_clients", str, "", "Subnet allowed to use the proxy")

    def configure(self, updated: set[str]) -> None:
        """Read the rules and the client subnet."""
        if "gaia_rules" in updated and ctx.options.gaia_rules:
            with open(ctx.options.gaia_rules, encoding="utf-8") as handle:
                data = json.load(handle)
            self.rules = [parse_rule(pattern, source) for pattern, source in data["rules"]]
            _log({"rules": len(self.rules)})
        if "gaia_clients" in updated and ctx.options.gaia_clients:
            self.clients = ipaddress.ip_network(ctx.options.gaia_clients)

    def client_connected(self, client: Any) -> None:
        """Close a connection that does not come from the run's sandboxes."""
        if self.clients is None:
            return
        address = ipaddress.ip_address(client.peername[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        if address not in self.clients:
            client.error = f"{address} is not a sandbox of this run"

    def request(self, flow: http.HTTPFlow) -> None:
        """Refuse a request whose URL (by its target host or its Host header) a rule covers."""
        request = flow.request
        path = request.path or "/"
        for host in dict.fromkeys((request.host, request.host_header or "")):
            if not host:
                continue
            url = f"{request.scheme}://{host.split(':')[0]}{path}"
            parts = normalise(url)
            rule = match(self.rules, *parts) if parts else None
            if rule is not None:
                self._refuse(flow, url, rule)
                return

    def tcp_start(self, flow: Any) -> None:
        """Close a raw tunnel to a host some rule names (no path to judge it by)."""
        host = str(flow.server_conn.address[0]).lower().rstrip(".")
        rule = next((r for r in self.rules if r.host != "*" and host_matches(r.host, host)), None)
        if rule is not None:
            _log({"refused": f"tcp://{host}", "source": rule.source, "client": _client(flow)})
            self.refused_servers.add(flow.server_conn.id)
            flow.kill()

    def server_connect(self, data: Any) -> None:
        """Do not open the server connection of a refused tunnel (``tcp_start`` comes first)."""
        if data.server.id in self.refused_servers:
            self.refused_servers.discard(data.server.id)
            data.server.error = "refused: a known GAIA answer source"

    def _refuse(self, flow: http.HTTPFlow, url: str, rule: Rule) -> None:
        body = (
            f"{REFUSAL_MARKER} {url} — {rule.source} is a known GAIA answer source "
            f"(rule {rule.pattern}); this run blocks answer sources "
            "(-T block_answer_sources=true).\n"
        )
        flow.response = http.Response.make(
            403,
            body.encode(),
            {"Content-Type": "text/plain; charset=utf-8", "X-Inspect-Gaia-Refused": rule.source},
        )
        _log({"refused": url, "source": rule.source, "client": _client(flow)})


def _client(flow: Any) -> str:
    return str(flow.client_conn.peername[0])


def _log(record: dict[str, Any]) -> None:
    print(json.dumps({"inspect_gaia": record}), file=sys.stdout, flush=True)


addons = [AnswerSourceGuard()]
