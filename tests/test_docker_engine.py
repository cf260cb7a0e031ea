"""engine.py against the real engine: limits it refuses are refused once, before any sandbox.

Issue #17 finding 3: ``-T sandbox=compose -T disk=10g`` on an engine that cannot enforce it
started, and every sample failed with "No services started" (gaia-docker refused; gaia-compose
never asked). Both providers now probe the limits once, at ``task_init``: the engine checks them
when a container is created, so one throw-away container (created, never started) tells. The
shared engine here is overlay2 over ext4, which cannot enforce ``disk``.
"""

from __future__ import annotations

import subprocess

import anyio
import pytest
from helpers import SANDBOX_IMAGE, docker_leftovers

from inspect_gaia import GaiaError
from inspect_gaia._docker.compose import GaiaComposeSandbox
from inspect_gaia._docker.config import GaiaComposeConfig, gaia_config
from inspect_gaia._docker.engine import check_limits
from inspect_gaia._docker.provider import GaiaDockerSandbox
from inspect_gaia._docker.service import service_config
from inspect_gaia.sandbox import SandboxLimits, gaia_compose

pytestmark = pytest.mark.docker

PROVIDERS = [GaiaDockerSandbox, GaiaComposeSandbox]


def _probes() -> list[str]:
    return subprocess.run(
        ["docker", "ps", "-aq", "--filter", "label=inspect_gaia.probe"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


def _with(**fields: object) -> GaiaComposeConfig:
    """GAIA's compose config with fields set as a compose file of one's own might set them."""
    return gaia_config(gaia_compose(image=SANDBOX_IMAGE), "default", **fields)


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.__name__)
@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            gaia_compose(image=SANDBOX_IMAGE, limits=SandboxLimits(disk="10g")),
            "-T disk=10g cannot be applied by this Docker Engine (",
        ),
        # more CPUs than the engine has (a remote engine, Docker Desktop's VM): the cap at this
        # machine's CPU count cannot see it
        (_with(cpus=64), "this Docker Engine refuses the sandbox limits -T cpus=64.0 -T memory=4g"),
        (_with(mem_limit="1k", memswap_limit="1k"), "Minimum memory limit allowed is 6MB"),
    ],
    ids=["disk", "cpus", "memory"],
)
def test_limits_the_engine_refuses_stop_the_run_before_any_sandbox(
    provider: type[GaiaDockerSandbox] | type[GaiaComposeSandbox],
    config: GaiaComposeConfig,
    message: str,
    sandbox_image: str,
) -> None:
    before, probes = docker_leftovers(), _probes()
    with pytest.raises(GaiaError) as caught:
        anyio.run(provider.task_init, "limits-check", config)
    text = str(caught.value)
    assert message in text and "\n" not in text, text
    assert " — " in text and "No services started" not in text
    assert docker_leftovers() == before and _probes() == probes


def test_limits_the_engine_accepts_pass(sandbox_image: str) -> None:
    probes = _probes()
    check_limits(service_config(gaia_compose(image=SANDBOX_IMAGE)))
    check_limits(service_config(_with(cpus=None, mem_limit=None, memswap_limit=None)))
    assert _probes() == probes
