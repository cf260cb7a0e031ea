"""gaia-docker's spare containers: started ahead of the samples, removed behind them, none left."""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from inspect_gaia.sandboxes.docker import PLAIN_ENV, client, engine
from inspect_gaia.sandboxes.docker import gaia_docker as gaia_docker_module
from inspect_gaia.sandboxes.docker import spares as spares_module
from inspect_gaia.sandboxes.docker.gaia_docker import GaiaDockerSandbox
from inspect_gaia.sandboxes.docker.spares import is_spare, spares
from inspect_gaia.sandboxes.spec import gaia_compose
from tests.helpers import SANDBOX_IMAGE, docker_leftovers

pytestmark = [pytest.mark.docker, pytest.mark.anyio]

TASK = "spares-check"


@pytest.fixture(params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def spare_containers(timeout: float = 30) -> list[tuple[str, str]]:
    """(id, name) of the spares running now, once there is one (or ``timeout`` passes)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [
            (c["Id"], c["Names"][0].lstrip("/"))
            for c in client.containers({"name": [f"gaia-{TASK}-spare-"]})
            if is_spare(c["Names"][0])
        ]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


async def start(config: object) -> GaiaDockerSandbox:
    envs = await GaiaDockerSandbox.sample_init(TASK, config, {})  # type: ignore[arg-type]
    return envs["default"].as_type(GaiaDockerSandbox)


async def finish(config: object, *sandboxes: GaiaDockerSandbox) -> None:
    for sandbox in sandboxes:
        await GaiaDockerSandbox.sample_cleanup(TASK, config, {"default": sandbox}, False)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def a_run() -> AsyncIterator[object]:
    """A run's config between its task_init and task_cleanup; nothing of it left after."""
    before = docker_leftovers()
    config = gaia_compose(image=SANDBOX_IMAGE)
    await GaiaDockerSandbox.task_init(TASK, config)
    try:
        yield config
    finally:
        await GaiaDockerSandbox.task_cleanup("shutdown", config, True)
    assert docker_leftovers() == before


async def test_a_sample_takes_the_spare_and_the_next_one_starts(
    anyio_backend: str, sandbox_image: str
) -> None:
    async with a_run() as config:
        first = await start(config)
        ((spare, spare_name),) = spare_containers()
        second = await start(config)
        assert second.container == spare, "the second sample got the spare"
        assert second.name != spare_name and not is_spare(second.name)
        names = subprocess.run(
            ["docker", "inspect", "-f", "{{.Name}}", spare], capture_output=True, text=True
        ).stdout
        assert names.strip() == f"/{second.name}", "renamed to the sample's own name"
        assert (await second.exec(["sh", "-c", "echo fresh; ls /tmp | wc -l"])).stdout == (
            "fresh\n0\n"
        )
        ((next_spare, _),) = spare_containers()
        assert next_spare not in (spare, first.container)
        await finish(config, first, second)


async def test_a_spare_that_stopped_is_not_given_to_a_sample(
    anyio_backend: str, sandbox_image: str
) -> None:
    async with a_run() as config:
        first = await start(config)
        ((spare, _),) = spare_containers()
        subprocess.run(["docker", "kill", spare], capture_output=True, check=True)
        second = await start(config)
        assert second.container != spare
        assert (await second.exec(["echo", "ok"])).stdout == "ok\n"
        assert not client.containers({"id": [spare]}), "the stopped spare was removed"
        await finish(config, first, second)


async def test_the_runs_end_waits_for_a_spare_still_starting_and_removes_it(
    anyio_backend: str, sandbox_image: str
) -> None:
    """A spare created after the run's containers were removed would outlive the run."""
    before = docker_leftovers()
    config = gaia_compose(image=SANDBOX_IMAGE)
    await GaiaDockerSandbox.task_init(TASK, config)
    sandbox = await start(config)
    run_spares = spares()
    assert run_spares.starting or run_spares.ready, "the next spare is on its way"
    await finish(config, sandbox)
    await GaiaDockerSandbox.task_cleanup("shutdown", config, True)
    assert run_spares.closed and not run_spares.in_flight
    await anyio.sleep(1)
    assert docker_leftovers() == before


async def test_finished_samples_are_removed_behind_them_and_gone_by_the_runs_end(
    anyio_backend: str, sandbox_image: str
) -> None:
    async with a_run() as config:
        sandboxes = [await start(config) for _ in range(3)]
        with anyio.fail_after(2):  # returns without waiting for the engine's removal
            await finish(config, *sandboxes)


async def test_kept_sandboxes_keep_no_spare(anyio_backend: str, sandbox_image: str) -> None:
    """``--no-sandbox-cleanup`` keeps the samples' containers, not the spare."""
    before = docker_leftovers()
    config = gaia_compose(image=SANDBOX_IMAGE, network=False)  # nothing kept but the container
    await GaiaDockerSandbox.task_init(TASK, config)
    sandbox = await start(config)
    spare_containers()
    await GaiaDockerSandbox.task_cleanup("shutdown", config, False)
    kept = docker_leftovers() - before
    try:
        assert len(kept) == 1 and not any(is_spare(name) for name in kept)
        assert client.containers({"id": [sandbox.container]}), "the sample's container is kept"
    finally:
        await GaiaDockerSandbox.cli_cleanup(sandbox.container)
    assert docker_leftovers() == before


async def test_a_burst_of_samples_starts_its_containers_a_few_at_a_time(
    anyio_backend: str, sandbox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most ``STARTS_PER_CPU`` per engine CPU at once: the first samples start, not all late."""
    inside, most = 0, 0
    lock = threading.Lock()
    real = spares_module.sample_container

    def counted(*args: Any) -> str:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        try:
            return real(*args)
        finally:
            with lock:
                inside -= 1

    monkeypatch.setattr(gaia_docker_module, "sample_container", counted)
    async with a_run() as config:
        allowed = spares_module.STARTS_PER_CPU * engine.cpus()
        sandboxes: list[GaiaDockerSandbox] = []

        async def one() -> None:
            sandboxes.append(await start(config))

        async with anyio.create_task_group() as group:
            for _ in range(3 * allowed):
                group.start_soon(one)
        assert len(sandboxes) == 3 * allowed
        assert most == allowed, f"{most} starts at once, {allowed} allowed"
        await finish(config, *sandboxes)


async def test_a_plain_run_keeps_no_spare_and_starts_a_burst_at_once(
    anyio_backend: str, sandbox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``INSPECT_GAIA_PLAIN_DOCKER=1``: each sample starts and removes its own container, now."""
    inside, most = 0, 0
    lock = threading.Lock()
    real = spares_module.sample_container

    def counted(*args: Any) -> str:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        try:
            return real(*args)
        finally:
            with lock:
                inside -= 1

    monkeypatch.setattr(gaia_docker_module, "sample_container", counted)
    monkeypatch.setenv(PLAIN_ENV, "1")
    async with a_run() as config:
        allowed = spares_module.STARTS_PER_CPU * engine.cpus()
        sandboxes: list[GaiaDockerSandbox] = []

        async def one() -> None:
            sandboxes.append(await start(config))

        async with anyio.create_task_group() as group:
            for _ in range(2 * allowed):
                group.start_soon(one)
        assert most > allowed, "not in turn"
        assert spare_containers(timeout=1) == [] and not spares().starting
        await finish(config, *sandboxes)
        assert not any(client.containers({"id": [s.container]}) for s in sandboxes), "removed now"
