"""gaia-docker against inspect_ai's own sandbox conformance suite, beside inspect's compose sandbox.

inspect_ai ships the checks every provider must pass (``inspect_ai.util._sandbox.self_check``);
they run here against ``gaia-docker``, plain ``gaia-docker`` (``INSPECT_GAIA_PLAIN_DOCKER=1``: no
command channel, no spares, no starts in turn) and inspect's compose sandbox on the same compose
config, so any check gaia-docker fails where compose passes shows up as a failure, and one that
fails with the optimisations only shows up as theirs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from inspect_ai.util import SandboxEnvironment
from inspect_ai.util._sandbox.docker.docker import DockerSandboxEnvironment
from inspect_ai.util._sandbox.self_check import *  # noqa: F403

from inspect_gaia.sandboxes.docker import PLAIN_ENV
from inspect_gaia.sandboxes.docker.gaia_docker import GaiaDockerSandbox
from inspect_gaia.sandboxes.spec import gaia_compose
from tests.helpers import SANDBOX_IMAGE

pytestmark = [pytest.mark.docker, pytest.mark.anyio]

PROVIDERS: dict[str, type[SandboxEnvironment]] = {
    "gaia-docker": GaiaDockerSandbox,
    "gaia-docker-plain": GaiaDockerSandbox,
    "compose": DockerSandboxEnvironment,
}

_ROOT_WRITES = "the sandbox runs as root, and root may write a file that lacks write permission"
KNOWN_FAILURES: dict[str, str] = {
    "test_write_text_file_without_permissions": _ROOT_WRITES,
    "test_write_binary_file_without_permissions": _ROOT_WRITES,
}
"""Checks that fail for both providers on GAIA's sandbox, and why."""


@pytest.fixture(scope="module", params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module", params=list(PROVIDERS))
async def provider_env(
    request: pytest.FixtureRequest, anyio_backend: str, sandbox_image: str
) -> AsyncIterator[SandboxEnvironment]:
    provider = PROVIDERS[request.param]
    config = gaia_compose(image=SANDBOX_IMAGE)
    task = f"self-check-{request.param}"
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "gaia-docker-plain":
            patch.setenv(PLAIN_ENV, "1")
        await provider.task_init(task, config)
        envs = await provider.sample_init(task, config, {})
        sandbox = envs["default"]
        if isinstance(sandbox, GaiaDockerSandbox):  # the mode asked for is the mode run
            await sandbox.exec(["true"])
            plain = request.param == "gaia-docker-plain"
            assert (sandbox.commands.channel is None) is plain
        try:
            yield sandbox
        finally:
            await provider.sample_cleanup(task, config, envs, False)
            await provider.task_cleanup(task, config, True)


@pytest.fixture
def sandbox_env(provider_env: SandboxEnvironment, request: pytest.FixtureRequest) -> Any:
    reason = KNOWN_FAILURES.get(request.node.originalname)
    if reason:
        request.node.add_marker(pytest.mark.xfail(reason=reason, strict=True))
    return provider_env
