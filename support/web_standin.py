"""The stand-in web behind the egress proxy (tests and benchmarks): a container with real names.

``support.standins`` with ``support/web_pages.SERVER`` as its server: an internal network of the
test's own, one container on it whose network aliases carry the stand-in sites' names and
huggingface.co's, and every egress proxy of a run allowed that network connected to it, so a
sandbox reaches the stand-ins only through its run's proxy. Nothing can leave the host.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from inspect_gaia.sandboxes.docker.cleanup import OWNER_LABEL, owner
from support.standins import StandIns, docker, standins
from support.web_pages import HOSTS, SERVER, routes_json

ALIASES = (*HOSTS, "huggingface.co")


WebStandIn = StandIns
"""The stand-in web is the stand-in "internet" of ``support.standins`` with the web's pages."""


@contextmanager
def web_standin(image: str) -> Iterator[StandIns]:
    """Start the stand-in web on an internal network, allowed to runs started meanwhile."""
    with standins(image, ALIASES, label="web", server=(SERVER, routes_json())) as made:
        yield made


def mine() -> list[str]:
    """The gaia-docker containers and networks this process started that are still there."""
    label = ("--filter", f"label={OWNER_LABEL}={owner()}")
    containers = docker("ps", "-aq", *label).split()
    return containers + docker("network", "ls", "-q", *label).split()
