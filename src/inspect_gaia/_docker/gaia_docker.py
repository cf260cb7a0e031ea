"""``gaia-docker``: one container per sample, started through the Docker Engine API.

inspect_ai's compose sandbox drives the ``docker compose`` CLI: about eight CLI round trips per
sample and one bridge network per sample (~3 s per sample here, and Docker's default address pools
run out near 30 concurrent samples). This provider reads the same ``compose.yaml`` and needs, per
sample, one create and one start call, one archive upload per attachment, one exec for its command
runner (``channel``) and one forced removal; all samples of a run share one bridge network with
inter-container traffic off, so they need one address range and cannot reach one another.

The provider is the lifecycle only; the translation of the compose service is ``service``, the
SDK calls ``client`` (file copies ``archive``), what may be removed when ``cleanup``, the engine
and image checks ``engine``.
"""

from __future__ import annotations

import errno
import functools
import re
import shlex
import time
import uuid
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any, Literal, ParamSpec, TypeVar, overload

import anyio
from inspect_ai.util import (
    ExecResult,
    SandboxConnection,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    sandboxenv,
)
from pydantic import BaseModel
from typing_extensions import override

from .. import _signals
from .._compat import InjectedWrapper, classify_exec_failure, sample_active
from .._faults import start_or_stand_in, started
from ..errors import GaiaError
from . import PROVIDER, archive, client, egress, engine
from .channel import ExecChannel
from .cleanup import keep_run, labels, remove_all, remove_run, run_state, sweep_orphans
from .config import deserialize
from .egress_watch import SampleCommands
from .service import create_kwargs, network_wanted, service_config
from .spares import in_turn, remove_sample_container, sample_container, spares, starts_in_turn

_TIMEOUT_BIN = "/usr/bin/timeout"
_STOP_SEEN_WITHIN = 3.0
"""Seconds a silently killed command waits to see its container stopped (``stops_within``)."""
P = ParamSpec("P")
T = TypeVar("T")


def container_name(task_name: str, sample_id: object, epoch: object) -> str:
    """``gaia-<task>-<sample>-e<epoch>-<random>``, so ``docker ps`` shows whose it is."""
    stem = re.sub(r"[^a-zA-Z0-9_.-]+", "-", f"{task_name}-{sample_id}-e{epoch}").strip("-.")
    return f"gaia-{stem[:80]}-{uuid.uuid4().hex[:6]}"


@sandboxenv(name=PROVIDER)
class GaiaDockerSandbox(SandboxEnvironment):
    """A sample's container, started from compose.yaml's ``default`` service via the Docker API."""

    def __init__(
        self, container: str, name: str, working_dir: str, egress: SampleCommands | None = None
    ) -> None:
        """Wrap a started container (``egress``: its proxy's outages, see ``egress_watch``)."""
        super().__init__()
        self.container = container
        self.name = name
        self.working_dir = working_dir
        self.egress = egress
        self._channel: ExecChannel | None = None
        self._channel_tried = False
        self._channel_lock = anyio.Lock()

    # -- lifecycle ------------------------------------------------------------------------------

    @classmethod
    def config_files(cls) -> list[str]:
        """Compose files, as inspect's docker sandbox looks for them."""
        return ["compose.yaml"]

    @classmethod
    def is_docker_compatible(cls) -> bool:
        """Configs are compose files (so a log's config deserialises to a ComposeConfig)."""
        return True

    @classmethod
    def default_concurrency(cls) -> int | None:
        """No sandbox limit of its own: one sandbox per running sample, so ``--max-samples``.

        With a limit, inspect delays every sample's start by a random 0-1 s (to interleave
        tasks); that alone would double the per-sample cost. ``--max-sandboxes`` still works.
        """
        return None

    @override
    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        """Before any sample: the engine, the image (pulled when absent), the limits."""
        service = service_config(config)
        await client.call(engine.check_engine)
        swept = await client.call(sweep_orphans)
        if swept:
            print(f"Removed {swept} container(s)/network(s) left by killed {PROVIDER} runs")
        await client.call(engine.ensure_image, service["image"])
        await client.call(engine.check_limits, service)
        starts_in_turn(await client.call(engine.cpus))
        spec = egress.wanted(service)
        if spec is not None and network_wanted(service):
            await _start_egress(task_name, spec)
        _signals.install()

    @override
    @classmethod
    async def sample_init(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        metadata: dict[str, str],
    ) -> dict[str, SandboxEnvironment]:
        """Create and start the sample's container (or stand in for one that did not start)."""
        return await start_or_stand_in(cls._start(task_name, config), engine.describe_start_failure)

    @classmethod
    async def _start(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None
    ) -> dict[str, SandboxEnvironment]:
        service = service_config(config)
        active = sample_active()
        name = container_name(
            task_name, active.sample.id if active else "sample", active.epoch if active else 1
        )
        spec = egress.wanted(service) if network_wanted(service) else None
        files: dict[str, bytes] | None = None
        watched: SampleCommands | None = None
        if spec is not None:  # the run's internal network, reaching out only through its proxy
            proxy = await client.call(egress.ensure, task_name, spec)
            kwargs = egress.sample_kwargs(create_kwargs(service, None), proxy)
            files = await client.call(egress.sample_files, proxy, service["image"])
            watched = egress.commands(proxy)
        else:
            network = (
                await client.call(_run_network, task_name) if network_wanted(service) else None
            )
            kwargs = create_kwargs(service, network)
        start = functools.partial(
            sample_container, name, kwargs, labels(task_name), task_name, files
        )
        container = await in_turn(start)
        working_dir = str(
            service.get("working_dir") or await client.call(engine.image_workdir, service["image"])
        )
        return {"default": cls(container, name, working_dir, watched)}

    @override
    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        """Remove the sample's container (no stop grace period), in the background (``spares``)."""
        with anyio.CancelScope(shield=True):
            for env in (started(environments) or {}).values():
                sandbox = env.as_type(GaiaDockerSandbox)
                await sandbox._close_channel()
                await client.call(remove_sample_container, sandbox.container)

    @override
    @classmethod
    async def task_cleanup(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool
    ) -> None:
        """Remove this run's containers and network (unless told to keep them)."""
        # inspect calls this once per sandbox config when the whole run ends ("shutdown").
        state = run_state()
        with anyio.CancelScope(shield=True):
            try:
                await client.call(spares().close)
                if not cleanup:
                    for name in await client.call(keep_run, state.run_id):
                        print(f"Sandbox kept: docker exec -it {name} bash -l")
                    print(f"Remove them with: inspect sandbox cleanup {PROVIDER}")
                    return
                proxies = egress.egress_state()
                for proxy in list(proxies.proxies.values()):
                    for line in await client.call(egress.summary, proxy):
                        print(line)
                egress.forget(proxies)
                await client.call(remove_run, state.run_id)
                with state.lock:
                    state.network = None
            except Exception as ex:
                print(
                    f"Could not remove this run's {PROVIDER} sandboxes ({client.first_line(ex)}) "
                    f"— remove them with `inspect sandbox cleanup {PROVIDER}` once the Docker "
                    "Engine answers"
                )
            finally:
                _signals.uninstall()

    @override
    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        """``inspect sandbox cleanup gaia-docker [container]``: remove what was left behind."""
        if id is not None:
            await client.call(client.remove_container, id)
            print(f"Removed {id}")
            return
        removed = await client.call(remove_all)
        print(f"Removed {removed} {PROVIDER} container(s) and network(s)")

    @override
    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        """A config as a log holds it: a compose config with GAIA's fields (``disk``)."""
        return deserialize(config)

    # -- commands and files ---------------------------------------------------------------------

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
        """Run ``cmd`` in the container (see ``SandboxEnvironment.exec``)."""
        wrapped = cmd
        if timeout is not None:
            # The in-container wrapper kills the command's process tree; the engine would
            # otherwise leave it running after the host gives up on it.
            wrapped = [_TIMEOUT_BIN, "-k", "5s", f"{timeout}s", *cmd]
        data = input.encode() if isinstance(input, str) else input
        start = time.monotonic()
        run = functools.partial(self._run, wrapped, data, self._path(cwd or "."), env, user)
        with anyio.fail_after(None if timeout is None else timeout + 15):
            code, out, err = await (run() if self.egress is None else self.egress.around(run))
        stdout = out.decode("utf-8", errors="replace")
        stderr = err.decode("utf-8", errors="replace")
        if timeout is not None and code in (124, 137, 143):
            if code == 124 or time.monotonic() - start >= timeout:
                error = TimeoutError(f"Command timed out after {timeout} seconds")
                if stdout or stderr:
                    error.truncated_output = stdout + stderr  # type: ignore[attr-defined]
                raise error
        result = ExecResult(success=code == 0, returncode=code, stdout=stdout, stderr=stderr)
        # The engine's own launch failures (runc's messages, our timeout wrapper's) read as the
        # compose CLI's do, so inspect's classifier tells them from the command's own failures.
        wrapper = InjectedWrapper(wrapped[0], cmd[0]) if wrapped is not cmd and cmd else None
        failure = classify_exec_failure(result, wrapper=wrapper)
        if failure is not None:
            raise failure
        # No exit status (the exec vanished with its container), or killed without a word: if
        # the container is gone, the sandbox is, and the sample cannot go on in it.
        if code < 0 or (code > 128 and not stdout.strip() and not stderr.strip()):
            if await client.call(client.stops_within, self.container, _STOP_SEEN_WITHIN):
                raise SandboxUnavailableError(
                    f"The sandbox is not running and cannot execute: command ended with code "
                    f"{code}, and its container {self.name} is gone or has exited"
                )
        return result

    @override
    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Upload ``contents`` as one archive; the engine creates missing parent directories."""
        data = contents.encode() if isinstance(contents, str) else contents
        await self._engine_call(archive.put_file, self.container, self._path(file), data)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    @override
    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Download ``file`` as an archive, refusing anything but one regular file."""
        if PurePosixPath(file.rstrip("/") or "/").name in ("", ".", ".."):
            raise IsADirectoryError(errno.EISDIR, "Is a directory.", file)
        data = await self._engine_call(archive.get_file, self.container, self._path(file), file)
        return data.decode("utf-8") if text else data

    @override
    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        """``docker exec`` into the container (``inspect sandbox connect``, VS Code)."""
        login = ["docker", "exec", "-it", *(["--user", user] if user else []), self.name]
        return SandboxConnection(
            type="docker",
            command=shlex.join([*login, "bash", "-l"]),
            vscode_command=None
            if user
            else ["remote-containers.attachToRunningContainer", self.name],
            container=self.name,
        )

    def default_polling_interval(self) -> float:
        """Polling interval for sandbox service requests (an exec costs milliseconds)."""
        return 0.2

    async def _run(
        self,
        cmd: list[str],
        data: bytes | None,
        workdir: str,
        env: dict[str, str] | None,
        user: str | None,
    ) -> tuple[int, bytes, bytes]:
        """Through the command channel when it can (as root: if its runner is), else docker exec."""
        limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
        channel = await self._command_channel() if user in (None, "root", "0") else None
        if channel is not None and (user is None or channel.uid == 0):
            ran = await channel.run(cmd, data, workdir, env, limit)
            if ran is not None and channel.broken and not await client.call(client.answers):
                raise SandboxUnavailableError(engine.engine_stopped(ConnectionError()))
            if ran is not None:
                return ran
        return await self._engine_call(
            client.exec_command, self.container, cmd, data, workdir, env, user, limit
        )

    async def _command_channel(self) -> ExecChannel | None:
        """The channel, started with the first command; None once it is broken or unusable."""
        if not self._channel_tried:
            async with self._channel_lock:
                if not self._channel_tried:
                    self._channel = await ExecChannel.open(self.container)
                    self._channel_tried = True
        if self._channel is not None and self._channel.broken:
            await self._close_channel()
        return self._channel

    async def _close_channel(self) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            await channel.close()

    def _path(self, file: str) -> str:
        return str(PurePosixPath(self.working_dir) / file)

    async def _engine_call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """A blocking SDK call; an engine that stopped answering ends the sample in one line."""
        try:
            return await client.call(fn, *args, **kwargs)
        except Exception as ex:
            if client.engine_unreachable(ex):
                raise SandboxUnavailableError(engine.engine_stopped(ex)) from ex
            raise


async def _start_egress(task_name: str, spec: dict[str, Any]) -> None:
    """Start the run's egress proxy; a run cancelled meanwhile removes what it started.

    The start is shielded (a half-started proxy would outlive the run: inspect registers a
    provider's cleanup only once ``task_init`` returns), and a cancellation that arrived during it
    removes the run's resources before it goes on.
    """
    with anyio.CancelScope(shield=True):
        await client.call(egress.ensure, task_name, spec)
    try:
        await anyio.lowlevel.checkpoint()
    except BaseException:
        with anyio.CancelScope(shield=True):
            egress.forget(egress.egress_state())
            await client.call(remove_run, run_state().run_id)
        raise


def _run_network(task_name: str) -> str:
    """The run's one network, created with the first sample that has network access."""
    from docker.errors import APIError

    state = run_state()
    with state.lock:
        if state.network is None:
            name = f"gaia-{state.run_id}-{uuid.uuid4().hex[:6]}"
            try:
                client.create_network(name, labels(task_name))
            except APIError as ex:
                raise GaiaError(
                    f"Docker could not create the run's sandbox network ({client.first_line(ex)}) "
                    "— remove unused networks with `docker network prune`, or run with "
                    "`-T network=false`"
                ) from ex
            state.network = name
        return state.network
