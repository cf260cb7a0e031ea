"""The probe's neighbour routes: what of the run's network a sandbox can see, reach or forge.

Runs elsewhere: in the sample's sandbox, beside ``inside.py``; standard library only (``shipped``).

Every address tried is on the sandbox's own network: those its ARP table knows, its gateway, the
proxy the environment names, and the few next to its own address within its route's mask; never
another network. A raw socket is opened to show it can be, never sent on.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import inside_web as web
else:
    import importlib

    try:  # in the sandbox: beside this file, first on the path
        import inside_web as web
    except ImportError:  # in the package (tests read the routes), by its full name
        web = importlib.import_module(f"{__package__}.inside_web")

Finding = dict[str, str]
TEXT = web.TEXT
PORTS = (22, 80, 443, 2375, 2376, 3128, 5000, 8000, 8080, 8888)
"""Ports tried on each neighbour: servers, the proxy's, the Docker API's."""
NEAR = 8
"""Addresses each side of the sandbox's own tried on its network (besides those ARP knows)."""


def neighbours_raw_socket(config: dict[str, Any]) -> list[Finding]:
    """A raw socket (never used): with one, a sandbox forges frames on the run's network."""
    found = []
    for name, family, kind in (
        ("packet", 17, socket.SOCK_RAW),
        ("ip", socket.AF_INET, socket.SOCK_RAW),
    ):
        try:
            socket.socket(family, kind, 0x0806 if family == 17 else socket.IPPROTO_TCP).close()
            found.append({"where": name, "outcome": "open", "text": "opened: it can forge frames"})
        except OSError as ex:
            found.append({"where": name, "outcome": "refused", "text": str(ex)})
    return found


def neighbours_addresses(config: dict[str, Any]) -> list[Finding]:
    """What the network shows: the sandbox's routes and the neighbours its ARP table knows."""
    arp = _arp()
    gateway, proxy = _gateway(), _proxy_address()
    others = [ip for ip in arp if ip not in (gateway, proxy)]
    text = f"routes:\n{read('/proc/net/route')}\narp:\n{read('/proc/net/arp')}"
    return [{"where": "arp", "outcome": "reached" if others else "empty", "text": text[:TEXT]}]


def neighbours_ports(config: dict[str, Any]) -> list[Finding]:
    """Ports of the neighbours on the sandbox's own network, connected to; an open one read.

    The neighbours: ARP's, the gateway, the proxy, and the addresses next to the sandbox's own.
    """
    hosts = sorted({*_arp(), *filter(None, (_gateway(), _proxy_address())), *_near()})
    results: dict[tuple[str, int], Finding] = {}

    def one(host: str, port: int) -> None:
        results[host, port] = knock(host, port)

    threads = [
        threading.Thread(target=one, args=(host, port), daemon=True)
        for host in hosts
        for port in PORTS
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    found = [f for f in results.values() if f["outcome"] in ("open", "reached")]
    for host in hosts:  # a host that answered at all (a closed port says so) is reachable
        ports = [(p, results.get((host, p))) for p in PORTS]
        answered = [f"{p} {f['outcome']}" for p, f in ports if f and f["outcome"] != "unreachable"]
        if answered:
            found.append({"where": host, "outcome": "reached", "text": ", ".join(answered)})
    return found or [
        {"where": f"{len(hosts)} addresses", "outcome": "unreachable", "text": ", ".join(hosts)}
    ]


def agent_cli(config: dict[str, Any]) -> list[Finding] | None:
    """The agent CLI the run would start, found and asked its version (no model: not run)."""
    agent = config.get("agent")
    if not agent:
        return None
    path = shutil.which(agent)
    if path is None:
        return [{"where": agent, "outcome": "empty", "text": "not on PATH"}]
    run = subprocess.run([path, "--version"], capture_output=True, timeout=20)
    return [{"where": path, "outcome": "reached", "text": run.stdout.decode("utf-8", "replace")}]


# -- helpers -------------------------------------------------------------------------------------


def read(path: str) -> str:
    """A file's text (its first MiB), ``""`` when it cannot be read (``/proc``'s come and go)."""
    try:
        with open(path, "rb") as file:
            return file.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return ""


def _arp() -> list[str]:
    rows = read("/proc/net/arp").splitlines()[1:]
    return [
        row.split()[0]
        for row in rows
        if len(row.split()) > 3 and row.split()[3] != "00:00:00:00:00:00"
    ]


def _gateway() -> str | None:
    for row in read("/proc/net/route").splitlines()[1:]:
        fields = row.split()
        if len(fields) > 2 and fields[1] == "00000000" and fields[2] != "00000000":
            return socket.inet_ntoa(int(fields[2], 16).to_bytes(4, "little"))
    return None


def _proxy_address() -> str | None:
    proxy = os.environ.get("HTTP_PROXY") or os.environ.get("http_proxy") or ""
    host = proxy.rsplit("/", 1)[-1].split(":")[0] if proxy else ""
    try:
        return socket.gethostbyname(host) if host else None
    except OSError:
        return None


def _near() -> list[str]:
    """The addresses next to the sandbox's own, within its network's route (never beyond)."""
    peer = _proxy_address() or _gateway()
    if peer is None:
        return []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect((peer, 9))  # a datagram socket sends nothing to connect
            own = int.from_bytes(socket.inet_aton(sock.getsockname()[0]), "big")
        except OSError:
            return []
    near = []
    for row in read("/proc/net/route").splitlines()[1:]:
        fields = row.split()
        if len(fields) < 8 or fields[1] == "00000000":
            continue
        network = int.from_bytes(int(fields[1], 16).to_bytes(4, "little"), "big")
        mask = int.from_bytes(int(fields[7], 16).to_bytes(4, "little"), "big")
        if own & mask != network:
            continue
        for address in range(own - NEAR, own + NEAR + 1):
            inside = address & mask == network and address != own
            if inside and address not in (network, network | (~mask & 0xFFFFFFFF)):
                near.append(socket.inet_ntoa(address.to_bytes(4, "big")))
    return near


def knock(host: str, port: int) -> Finding:
    """One port of a neighbour: refused, unreachable, or what it answered to a GET.

    The Docker API answering (its ``/version``) is ``open``.
    """
    where = f"{host}:{port}"
    try:
        with socket.create_connection((host, port), timeout=2) as sock:
            sock.settimeout(3)
            path = "/version" if port in (2375, 2376) else "/"
            sock.sendall(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            answer = web.receive(sock, TEXT).decode("utf-8", "replace")
    except ConnectionRefusedError:
        return {"where": where, "outcome": "refused", "text": "connection refused"}
    except OSError as ex:
        return {"where": where, "outcome": "unreachable", "text": str(ex)}
    docker = port in (2375, 2376) and "ApiVersion" in answer
    return {"where": where, "outcome": "open" if docker else "reached", "text": answer}
