"""The stand-in "internet" of the egress proxy's tests and benchmark: nothing leaves the host.

An internal Docker network of the caller's own, and one container on it that answers as every
host Docker network aliases name (``support.answer_pages.STANDIN_SCRIPT``). Each run's proxy is
connected to that network as soon as it exists (``StandIns.attaching``), and the run is told,
through the test-only variable ``TEST_NETWORKS_ENV``, that its proxy may reach that network's
addresses (it refuses private addresses otherwise).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from inspect_gaia.sandboxes.docker.egress import EGRESS_LABEL
from inspect_gaia.sandboxes.docker.egress_reach import TEST_NETWORKS_ENV
from support.answer_pages import STANDIN_LABEL, STANDIN_SCRIPT, standin_routes

ARGS = "{{json .Args}}"
GATEWAYS = "{{range .NetworkSettings.Networks}}{{.Gateway}} {{end}}"
SUBNET = "{{range .IPAM.Config}}{{.Subnet}}{{end}}"


def docker(*args: str) -> str:
    """``docker ARGS``' output (stripped); a failure raises."""
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def egress_proxies() -> set[str]:
    """Ids of every egress proxy container on the engine (any run's)."""
    return set(docker("ps", "-aq", "--no-trunc", "--filter", f"label={EGRESS_LABEL}").split())


@dataclass
class StandIns:
    """The stand-ins' network and container, and the proxies connected to that network."""

    network: str
    container: str
    attached: list[str] = field(default_factory=list)
    commands: dict[str, list[str]] = field(default_factory=dict)
    """Each attached proxy's command line."""
    gateways: dict[str, list[str]] = field(default_factory=dict)
    """Each attached proxy's networks' gateways (its way out's among them), as it started."""

    @contextmanager
    def attaching(self) -> Iterator[None]:
        """Connect each egress proxy of a run allowed this network, as soon as it appears.

        Only those: the engine may be shared with other runs and their tests.
        """
        known = egress_proxies()
        subnet = docker("network", "inspect", self.network, "-f", SUBNET)
        stop = threading.Event()

        def attach() -> None:
            while not stop.is_set():
                for proxy in egress_proxies() - known:
                    known.add(proxy)
                    try:
                        args = json.loads(docker("inspect", proxy, "-f", ARGS))
                    except subprocess.CalledProcessError:
                        continue  # gone already
                    if f"gaia_allow={subnet}" not in args:
                        continue  # another run's
                    connect = ["docker", "network", "connect", self.network, proxy]
                    if subprocess.run(connect, capture_output=True).returncode == 0:
                        self.attached.append(proxy)
                        self.commands[proxy] = args
                        self.gateways[proxy] = docker("inspect", proxy, "-f", GATEWAYS).split()
                stop.wait(0.05)

        thread = threading.Thread(target=attach, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def requests(self) -> list[dict[str, str]]:
        """What reached the stand-in: HTTP requests (host, path, client) and TLS connections."""
        logs = docker("logs", self.container)
        return [json.loads(line) for line in logs.splitlines() if line.startswith("{")]

    def address(self) -> str:
        """The stand-in's address on its network."""
        return docker(
            "inspect",
            self.container,
            "-f",
            "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
        )


@contextmanager
def allowing(network: str) -> Iterator[None]:
    """Runs started meanwhile may reach ``network`` (added to ``TEST_NETWORKS_ENV``'s list)."""
    before = os.environ.get(TEST_NETWORKS_ENV)
    os.environ[TEST_NETWORKS_ENV] = ",".join(filter(None, [before, network]))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(TEST_NETWORKS_ENV, None)
        else:
            os.environ[TEST_NETWORKS_ENV] = before


@contextmanager
def standins(
    image: str,
    aliases: Sequence[str],
    label: str = "standin",
    server: tuple[str, str] | None = None,
) -> Iterator[StandIns]:
    """Start the stand-ins (``image`` needs ``python3``), allowed to runs started meanwhile.

    ``server``: the stand-in's script and its routes (JSON); by default the answer pages'
    (``support.answer_pages``). The script logs each request as a JSON line (``requests``).
    """
    script, routes = server or (STANDIN_SCRIPT, standin_routes())
    tag = f"{STANDIN_LABEL}={label}"
    name = f"gaia-{label}-standins-{uuid.uuid4().hex[:6]}"
    network = docker("network", "create", "--internal", "--label", tag, name)
    made: StandIns | None = None
    try:
        container = docker(
            *("run", "-d", "--label", tag, "--network", network),
            *(arg for alias in aliases for arg in ("--network-alias", alias)),
            *(image, "python3", "-u", "-c", script, routes),
        )
        made = StandIns(network, container)
        with allowing(network):
            yield made
    finally:
        for proxy in made.attached if made else []:  # a kept run's proxy outlives the test
            subprocess.run(
                ["docker", "network", "disconnect", "-f", network, proxy], capture_output=True
            )
        if made:
            subprocess.run(["docker", "rm", "-f", made.container], capture_output=True)
        subprocess.run(["docker", "network", "rm", network], capture_output=True)
