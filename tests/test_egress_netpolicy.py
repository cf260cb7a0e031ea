"""Which addresses the egress proxy may connect to (``egress/netpolicy.py``)."""

from __future__ import annotations

import pytest

from inspect_gaia.egress.netpolicy import AddressPolicy, networks

HOST = "172.30.0.1"
"""The gateway of a test's own network: the host's address on it."""
POLICY = AddressPolicy.of(deny=networks(f"{HOST},203.0.113.77"), allow=networks("172.30.0.0/16"))


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.17.0.1", "private"),  # the default bridge's gateway: the host
        ("192.168.1.1", "private"),
        ("100.64.0.1", "private"),  # shared address space (CGNAT)
        ("169.254.169.254", "link-local"),  # a cloud's metadata service
        ("fe80::1", "link-local"),
        ("fd00::1", "private"),  # unique-local IPv6
        ("0.0.0.0", "private"),
        ("224.0.0.1", "private"),
        ("255.255.255.255", "private"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4 inside IPv6 is judged as IPv4
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("[::1]", "loopback"),
        ("::127.0.0.1", "private"),  # IPv4-compatible form
        ("::ffff:0:10.0.0.1", "private"),  # IPv4-translated (SIIT)
        ("64:ff9b:1::a00:1", "private"),  # local-use NAT64
        ("fec0::1", "private"),  # site-local
        (HOST, "the host's"),  # in the allowed network, but the host's: refused
        ("203.0.113.77", "the host's"),  # a public address of the host's
        ("huggingface.co", "not an address"),
    ],
)
def test_what_is_not_the_public_internet_is_refused(address: str, why: str) -> None:
    refusal = POLICY.refusal(address)
    assert refusal is not None and why in refusal, refusal


@pytest.mark.parametrize(
    "address", ["93.184.215.14", "2606:4700::1111", "::ffff:93.184.215.14", "172.30.0.5"]
)
def test_the_public_internet_and_a_tests_network_pass(address: str) -> None:
    assert POLICY.refusal(address) is None


def test_without_an_allowance_a_tests_network_is_private() -> None:
    assert "private" in str(AddressPolicy.of(deny=networks(HOST)).refusal("172.30.0.5"))


def test_networks_are_read_from_a_list() -> None:
    assert [str(n) for n in networks(" 10.0.0.0/8, ,192.0.2.1,fd00::/8")] == [
        "10.0.0.0/8",
        "192.0.2.1/32",
        "fd00::/8",
    ]
    with pytest.raises(ValueError):
        networks("not-an-address")
