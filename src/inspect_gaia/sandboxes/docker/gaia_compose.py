"""``gaia-compose``: inspect's ``docker compose`` sandbox, with GAIA's checks and start guard.

The same sandbox inspect's ``docker`` provider gives (``-T sandbox=compose``), with four additions
so that it keeps the promises the default ``gaia-docker`` keeps:

* the engine, the image and the limits are checked with the same one-line errors before any
  sample starts;
* a sample whose sandbox fails to start is still scored (``sandboxes/faults``);
* a command whose engine stopped answering ends its sample (scored, and rerun by
  ``inspect eval-retry``) instead of handing the agent docker's error as the command's output
  (``EngineCheckedSandbox``);
* SIGTERM/SIGHUP clean up as Ctrl-C does, and stop the sandboxes' commands (``sandboxes/signals``);
* with ``INSPECT_GAIA_TAG`` set, its containers and network carry the tag's label as gaia-docker's
  do (``TAG_LABEL``), so two jobs on one engine tell their compose projects apart (the
  config inspect writes for ``docker compose`` gets it, not the one the log records).

inspect builds the started environments itself (plain ``DockerSandboxEnvironment`` objects); they
are wrapped (``sandboxes/faults.PassThrough``), never re-classed, so the engine check is on every
environment inspect hands over, whatever its type.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from typing import Any

from inspect_ai.util import (
    ComposeConfig,
    ExecResult,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxUnavailableError,
    parse_compose_yaml,
    sandboxenv,
)
from pydantic import BaseModel
from typing_extensions import override

from ..._compat import DockerSandboxEnvironment, compose_project
from ...defaults import COMPOSE_PROVIDER
from ...errors import GaiaError
from .. import signals
from ..faults import PassThrough, start_or_stand_in, started
from . import TAG_LABEL, TAG_VARIABLE, client, engine
from .config import deserialize


@sandboxenv(name=COMPOSE_PROVIDER)
class GaiaComposeSandbox(DockerSandboxEnvironment):
    """inspect's compose sandbox behind GAIA's engine check, start guard and signal handling."""

    @override
    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        """A config as a log holds it: a compose config with GAIA's fields (``disk``)."""
        return deserialize(config)

    @override
    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        """Check the engine, the image and the limits as gaia-docker does, then start as inspect.

        inspect's start of a sandbox whose limits the engine refuses fails every sample with
        "No services started", the engine's reason hidden: the limits are probed once first.
        """
        service = _default_service(config)
        await client.call(engine.check_engine)
        if service is not None:
            await client.call(engine.ensure_image, service["image"])
            await client.call(engine.check_limits, service)
        await super().task_init(task_name, tagged(config))
        signals.install()

    @override
    @classmethod
    async def sample_init(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        metadata: dict[str, str],
    ) -> dict[str, SandboxEnvironment]:
        """Start as inspect does; a failed start stands in as an ``UnstartedSandbox``."""
        return await start_or_stand_in(
            _engine_checked(super().sample_init(task_name, tagged(config), metadata)),
            engine.describe_start_failure,
        )

    @override
    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        """Clean up as inspect does; a sandbox that never started has nothing to clean."""
        own = started(environments)
        if own is not None:
            await super().sample_cleanup(task_name, tagged(config), own, interrupted)
            for environment in own.values():
                if isinstance(environment, DockerSandboxEnvironment):
                    signals.forget_project(compose_project(environment))

    @override
    @classmethod
    async def task_cleanup(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool
    ) -> None:
        """Clean up as inspect does, then restore the signal handlers."""
        try:
            await super().task_cleanup(task_name, tagged(config), cleanup)
        finally:
            signals.uninstall()


class EngineCheckedSandbox(PassThrough):
    """A started compose sandbox whose failed commands ask whether the engine still answers."""

    @override
    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        """Run as inspect does; a failure that is the engine's, not the command's, ends the sample.

        With the engine gone, ``docker compose exec`` prints one line of its own ("Cannot connect
        to the Docker daemon …") and fails; inspect returns that as the command's output, and the
        agent answers from it. So a failed command with no stdout and exactly one line on stderr
        asks the engine whether it still answers (a silent ``grep -q`` miss costs nothing).
        """
        result = await self.inner.exec(
            cmd, input, cwd, env, user, timeout, timeout_retry, concurrency
        )
        if result.success or result.stdout.strip() or len(result.stderr.strip().splitlines()) != 1:
            return result
        try:
            await client.call(engine.check_engine)
        except GaiaError as ex:
            raise SandboxUnavailableError(engine.engine_stopped(ex)) from ex
        return result


async def _engine_checked(
    start: Awaitable[dict[str, SandboxEnvironment]],
) -> dict[str, SandboxEnvironment]:
    """The started environments, each wrapped in an ``EngineCheckedSandbox``.

    A stop signal stops their commands too (``signals.watch_project``).
    """
    environments = await start
    for environment in environments.values():
        if isinstance(environment, DockerSandboxEnvironment):
            signals.watch_project(compose_project(environment))
    return {name: EngineCheckedSandbox(env) for name, env in environments.items()}


def tagged(config: SandboxEnvironmentConfigType | None) -> SandboxEnvironmentConfigType | None:
    """``config`` with ``INSPECT_GAIA_TAG``'s label on its services and default network."""
    tag = os.environ.get(TAG_VARIABLE)
    if not tag or not isinstance(config, ComposeConfig):
        return config
    label = {TAG_LABEL: tag}
    services = {
        name: service.model_copy(
            update={"labels": {**(getattr(service, "labels", None) or {}), **label}}
        )
        for name, service in config.services.items()
    }
    networks = dict(config.networks or {})
    networks["default"] = {**(networks.get("default") or {}), "labels": label}
    return config.model_copy(update={"services": services, "networks": networks})


def _default_service(config: SandboxEnvironmentConfigType | None) -> dict[str, Any] | None:
    """The ``default`` service's fields, when it names an image (GAIA's always does)."""
    try:
        if isinstance(config, str):
            config = parse_compose_yaml(config, multiple_services=True)
        service = config.services["default"] if isinstance(config, ComposeConfig) else None
    except Exception:  # a compose file we cannot read is still inspect's to run (or refuse)
        return None
    if service is None or service.image is None:
        return None
    return service.model_dump(exclude_none=True, by_alias=True)
