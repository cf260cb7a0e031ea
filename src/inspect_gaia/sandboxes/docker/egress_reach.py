"""What a run's egress proxy may not reach besides the answer sources, and what tests let it reach.

The proxy refuses every private address (``egress/netpolicy.py``) and, named here, the host's own:
every bridge network's gateway and the host's interfaces, so a service of the host listening on
all addresses is no way out. Tests build a stand-in web on a private network of their own; two
test-only variables, never user settings, let a run's proxy reach it (its gateway, the host's,
still refused) and trust its CA in place of the public ones (it still verifies every certificate).
"""

from __future__ import annotations

import os
import socket

from . import client

TEST_NETWORKS_ENV = "INSPECT_GAIA_EGRESS_TEST_NETWORKS"
"""Test-only: Docker networks (names or ids, comma-separated) whose addresses a run's proxy may
reach although they are private (their gateways, the host's, stay refused). The egress tests and
benchmark set it for the stand-in "internet" they build; it is no user setting."""
TEST_CA_ENV = "INSPECT_GAIA_EGRESS_TEST_CA"
"""Test-only: a PEM file naming the CA that signed the stand-in web's certificates
(``support/real_web.py``). A run's proxy then trusts that CA, and it alone, for the servers it
connects to: it still verifies each certificate and its name. No user setting."""
TEST_CA_PATH = "/egress/test-ca.pem"
"""Where the proxy's container holds the test CA (``TEST_CA_ENV``)."""


def host_addresses(outside: str) -> list[str]:
    """The host's addresses: every bridge network's gateway, and its interfaces'.

    The run's outward network's gateway is among the first; the interfaces are those of the
    machine the run is on, which is the engine's but for a remote engine (then they are only
    more addresses refused).
    """
    found: set[str] = set()
    api = client.api()
    for network in [*api.networks(filters={"driver": "bridge"}), api.inspect_network(outside)]:
        for pool in (network.get("IPAM") or {}).get("Config") or []:
            if pool.get("Gateway"):
                found.add(str(pool["Gateway"]).split("/")[0])
    try:
        import psutil  # type: ignore[import-untyped]

        for addresses in psutil.net_if_addrs().values():
            found.update(a.address.split("%")[0] for a in addresses if a.family in _INET)
    except Exception:  # no interfaces to read: the gateways remain
        pass
    return sorted(found)


_INET = (socket.AF_INET, socket.AF_INET6)


def test_networks() -> tuple[list[str], list[str]]:
    """The subnets and gateways of the networks ``TEST_NETWORKS_ENV`` names (tests only)."""
    subnets: list[str] = []
    gateways: list[str] = []
    for name in filter(None, os.environ.get(TEST_NETWORKS_ENV, "").split(",")):
        for pool in client.api().inspect_network(name.strip())["IPAM"]["Config"] or []:
            subnets.append(str(pool["Subnet"]))
            if pool.get("Gateway"):
                gateways.append(str(pool["Gateway"]).split("/")[0])
    return subnets, gateways
