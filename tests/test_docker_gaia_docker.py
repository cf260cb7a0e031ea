"""gaia-docker's lifecycle: many sandboxes on one network, isolation, orphans of killed runs.

(The conformance suite, which keeps one sandbox per provider alive for its whole module, is in
``test_docker_conformance.py``; these tests clean up a whole session and must not share a
module with it.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import anyio
import pytest
from inspect_ai.util import SandboxEnvironment

from inspect_gaia.sandboxes.docker.gaia_docker import GaiaDockerSandbox
from inspect_gaia.sandboxes.spec import gaia_compose
from tests.helpers import SANDBOX_IMAGE, docker_leftovers

pytestmark = [pytest.mark.docker, pytest.mark.anyio]


@pytest.fixture(params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_32_concurrent_sandboxes_share_one_network_and_cannot_reach_each_other(
    anyio_backend: str, sandbox_image: str
) -> None:
    """32 sandboxes at once need one network, not 32 (Docker's default pools hold ~30)."""
    before = docker_leftovers()
    config = gaia_compose(image=SANDBOX_IMAGE)
    task = "concurrency-check"
    await GaiaDockerSandbox.task_init(task, config)
    envs: list[SandboxEnvironment] = []
    try:
        async with anyio.create_task_group() as group:

            async def start() -> None:
                started = await GaiaDockerSandbox.sample_init(task, config, {})
                envs.append(started["default"])

            for _ in range(32):
                group.start_soon(start)
        assert len(envs) == 32
        # every container is on the same one network (whether this test or an earlier sandbox of
        # this process created it), and at most that one network is new
        attached = subprocess.run(
            [
                "docker",
                "inspect",
                "-f",
                "{{range $name, $_ := .NetworkSettings.Networks}}{{$name}} {{end}}",
                *[env.as_type(GaiaDockerSandbox).container for env in envs],
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert len(attached) == 32 and len(set(attached)) == 1
        networks = {n for n in docker_leftovers() - before if n.startswith("network:")}
        assert networks <= {f"network:{attached[0]}"}

        # One sandbox serves on its own address; it reaches itself, a neighbour does not.
        server, neighbour = envs[0], envs[1]
        address = (await server.exec(["hostname", "-i"])).stdout.split()[0]
        await server.exec(
            ["sh", "-c", "nohup python3 -m http.server 8080 >/dev/null 2>&1 &"], timeout=10
        )
        fetch = (
            "import sys, urllib.request\n"
            "urllib.request.urlopen(f'http://{sys.argv[1]}:8080/', timeout=3)\n"
            "print('reached')\n"
        )
        for _ in range(20):
            own = await server.exec(["python3", "-c", fetch, address], timeout=10)
            if own.success:
                break
            await anyio.sleep(0.25)
        assert own.stdout.strip() == "reached", own.stderr
        other = await neighbour.exec(["python3", "-c", fetch, address], timeout=10)
        assert not other.success and "reached" not in other.stdout
    finally:
        for env in envs:
            await GaiaDockerSandbox.sample_cleanup(task, config, {"default": env}, False)
        await GaiaDockerSandbox.task_cleanup("shutdown", config, True)
    assert docker_leftovers() == before


KILLED_RUN = """
import os, signal, anyio
from inspect_gaia.sandboxes.docker.gaia_docker import GaiaDockerSandbox
from inspect_gaia.sandboxes.spec import gaia_compose

async def main():
    config = gaia_compose(image=os.environ["IMAGE"])
    await GaiaDockerSandbox.task_init("startup", config)
    await GaiaDockerSandbox.sample_init("gaia", config, {})
    print("started", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # no cleanup of any kind runs

anyio.run(main)
"""


async def test_the_next_run_removes_what_a_killed_run_left(
    anyio_backend: str, sandbox_image: str
) -> None:
    before = docker_leftovers()
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_RUN],
        env={**os.environ, "IMAGE": SANDBOX_IMAGE},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL and "started" in killed.stdout, killed.stderr
    left = docker_leftovers() - before
    assert {kind.split(":")[0] for kind in left} == {"container", "network"}
    await GaiaDockerSandbox.task_init("startup", gaia_compose(image=SANDBOX_IMAGE))
    assert docker_leftovers() == before
