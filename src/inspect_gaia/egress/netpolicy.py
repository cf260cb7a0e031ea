"""Which addresses the egress proxy connects to: the public internet's, never the host's or a LAN's.

Runs elsewhere: in the proxy's container, beside the addon; standard library only (``shipped``).

Standard library only: copied into the proxy's container beside the addon, which asks
``AddressPolicy.refusal`` about every address a server name resolved to, and every address a
request names, before it connects (``addon.py``).

Refused: loopback, private (RFC 1918), shared (CGNAT, 100.64/10), link-local, unique-local IPv6,
multicast, reserved and unspecified addresses (everything Python does not call global, IPv4 inside
IPv6 judged as IPv4), and the host's own addresses however public (``deny``: the Docker bridges'
gateways, the run's outward gateway, the host's interfaces). ``allow`` lets a test's own network
through (never its gateway: ``deny`` wins), which is how the tests' stand-in "internet" on a
private Docker network stays reachable; a user never sets it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def networks(text: str) -> list[Network]:
    """Networks from ``a.b.c.d/n,…`` (an address alone is a network of one); blanks are skipped.

    Raises:
        ValueError: An item is not an address or a network.
    """
    return [
        ipaddress.ip_network(item.strip(), strict=False) for item in text.split(",") if item.strip()
    ]


@dataclass(frozen=True)
class AddressPolicy:
    """Refuse what is not on the public internet, or is the host; ``allow`` is for tests."""

    deny: tuple[Network, ...] = ()
    allow: tuple[Network, ...] = ()

    @classmethod
    def of(cls, deny: Iterable[Network] = (), allow: Iterable[Network] = ()) -> AddressPolicy:
        """A policy from the host's addresses (``deny``) and a test's networks (``allow``)."""
        return cls(tuple(deny), tuple(allow))

    def refusal(self, address: str) -> str | None:
        """Why the proxy must not connect to ``address`` (an IP literal), or ``None``.

        Not an IP literal at all (a name, which the caller resolves first) is refused too.
        """
        try:
            ip: Address = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
        except ValueError:
            return f"{address} is not an address"
        if isinstance(ip, ipaddress.IPv6Address):
            inner = ip.ipv4_mapped or ip.sixtofour or _nat64(ip)
            if inner is not None:
                ip = inner
        if any(ip in net for net in self.deny if net.version == ip.version):
            return f"{ip} is an address of the host's"
        if any(ip in net for net in self.allow if net.version == ip.version):
            return None
        if ip.is_loopback:
            return f"{ip} is a loopback address"
        if ip.is_link_local:
            return f"{ip} is a link-local address"
        if ip.is_multicast or not ip.is_global or any(ip in net for net in _NOT_PUBLIC_V6):
            return f"{ip} is a private or reserved address"
        return None


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NOT_PUBLIC_V6 = tuple(
    ipaddress.IPv6Network(net)
    for net in (
        "::/96",  # IPv4-compatible (deprecated): ::127.0.0.1 reaches 127.0.0.1 on some stacks
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT): ::ffff:0:a.b.c.d
        "64:ff9b:1::/48",  # local-use NAT64 (RFC 8215): a translator of the site's own
        "fec0::/10",  # site-local (deprecated, still routed by some)
    )
)
"""IPv6 forms Python calls global that stand for an IPv4 address or a local network."""


def _nat64(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address a NAT64 address (RFC 6052's well-known prefix) stands for."""
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None
