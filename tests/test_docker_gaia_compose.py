"""gaia-compose: inspect's compose sandbox, wrapped (never re-classed) with GAIA's engine check."""

from __future__ import annotations

import anyio
import pytest
from inspect_ai.util import SandboxUnavailableError

from inspect_gaia.sandboxes.docker import engine
from inspect_gaia.sandboxes.docker.gaia_compose import EngineCheckedSandbox, GaiaComposeSandbox
from inspect_gaia.sandboxes.faults import SetUpGuard
from inspect_gaia.sandboxes.spec import gaia_compose
from tests.helpers import SANDBOX_IMAGE, docker_leftovers

pytestmark = pytest.mark.docker

FAILS_IN_ONE_LINE = ["sh", "-c", "echo 'no such thing' >&2; exit 1"]
"""A command that fails as docker does when the engine is gone: no stdout, one line on stderr."""


def test_a_started_compose_sandbox_runs_the_engine_checked_exec(
    sandbox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #21: the check was added by re-classing inspect's object, skipped for another type."""
    before = docker_leftovers()
    asked: list[str] = []
    answering = engine.check_engine

    def check_engine() -> str:
        asked.append("engine")
        return answering()

    def gone() -> str:
        raise engine.engine_down(ConnectionRefusedError("connection refused"))

    async def run() -> None:
        config = gaia_compose(image=SANDBOX_IMAGE)
        task = "engine-checked"
        await GaiaComposeSandbox.task_init(task, config)
        environments = await GaiaComposeSandbox.sample_init(task, config, {})
        try:
            # its container and network carry the session's tag, as gaia-docker's resources do
            started = docker_leftovers() - before
            assert {found.split(":")[0] for found in started} == {"container", "network"}, started
            sandbox = environments["default"]
            assert isinstance(sandbox, SetUpGuard)
            assert isinstance(sandbox.inner, EngineCheckedSandbox)
            monkeypatch.setattr(engine, "check_engine", check_engine)
            assert (await sandbox.exec(["true"])).success and asked == []
            # a failure in one line asks the (real, answering) engine, and stays the command's
            failed = await sandbox.exec(FAILS_IN_ONE_LINE)
            assert not failed.success and failed.stderr.strip() == "no such thing"
            assert asked == ["engine"]
            # with the engine gone, the same failure ends the sample
            monkeypatch.setattr(engine, "check_engine", gone)
            with pytest.raises(SandboxUnavailableError, match="stopped answering during the run"):
                await sandbox.exec(FAILS_IN_ONE_LINE)
        finally:
            monkeypatch.setattr(engine, "check_engine", answering)
            await GaiaComposeSandbox.sample_cleanup(task, config, environments, False)
            await GaiaComposeSandbox.task_cleanup(task, config, True)

    anyio.run(run)
    assert docker_leftovers() == before
