"""The stand-in web behind the egress proxy (tests and benchmarks): a container with real names.

An internal network of the test's own, and one container on it (``support/web_pages.SERVER``)
whose network aliases carry the stand-in sites' names and huggingface.co's; every egress proxy
that appears while ``attaching`` is connected to that network, so a sandbox reaches the stand-ins
only through its run's proxy. Nothing can leave the host.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from inspect_gaia._docker.cleanup import OWNER_LABEL, owner
from inspect_gaia._docker.egress import EGRESS_LABEL
from support.web_pages import HOSTS, SERVER, routes_json

LABEL = "inspect_gaia.test=web-standin"
ALIASES = (*HOSTS, "huggingface.co")


def _docker(*args: str) -> str:
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@dataclass
class WebStandIn:
    """The stand-in web's network and container, and the proxies connected to it."""

    network: str
    container: str
    attached: list[str] = field(default_factory=list)

    @contextmanager
    def attaching(self) -> Iterator[None]:
        """Connect each egress proxy this process starts meanwhile to the stand-in's network.

        Only this process's (its owner label): other runs on the same engine keep theirs.
        """
        mine = ("--filter", f"label={EGRESS_LABEL}", "--filter", f"label={OWNER_LABEL}={owner()}")
        known = set(_docker("ps", "-aq", "--no-trunc", *mine).split())
        stop = threading.Event()

        def attach() -> None:
            while not stop.is_set():
                listed = _docker("ps", "-aq", "--no-trunc", *mine)
                for proxy in set(listed.split()) - known:
                    known.add(proxy)
                    connect = ["docker", "network", "connect", self.network, proxy]
                    if subprocess.run(connect, capture_output=True).returncode == 0:
                        self.attached.append(proxy)
                stop.wait(0.1)

        thread = threading.Thread(target=attach, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def requests(self) -> list[dict[str, str]]:
        """The requests that reached the stand-in (host, path), as it logged them."""
        logs = _docker("logs", self.container)
        return [json.loads(line) for line in logs.splitlines() if line.startswith("{")]


@contextmanager
def web_standin(image: str) -> Iterator[WebStandIn]:
    """Start the stand-in web on an internal network; both are removed afterwards."""
    network = _docker("network", "create", "--internal", "--label", LABEL, "gaia-test-web")
    container = ""
    try:
        container = _docker(
            *("run", "-d", "--label", LABEL, "--network", network),
            *(arg for alias in ALIASES for arg in ("--network-alias", alias)),
            *(image, "python3", "-u", "-c", SERVER, routes_json()),
        )
        yield WebStandIn(network, container)
    finally:
        if container:
            subprocess.run(["docker", "rm", "-f", container], capture_output=True)
        # a proxy still running (a failed run's) must not keep the network
        for endpoint in _docker(
            "network", "inspect", network, "-f", "{{range $k, $v := .Containers}}{{$k}} {{end}}"
        ).split():
            subprocess.run(["docker", "network", "disconnect", "-f", network, endpoint])
        subprocess.run(["docker", "network", "rm", network], capture_output=True)


def mine() -> list[str]:
    """The gaia-docker containers and networks this process started that are still there."""
    label = ("--filter", f"label={OWNER_LABEL}={owner()}")
    containers = _docker("ps", "-aq", *label).split()
    return containers + _docker("network", "ls", "-q", *label).split()
