"""``gaia-docker``: one container per sample, started through the Docker Engine API.

inspect_ai's compose sandbox drives the ``docker compose`` CLI: about eight CLI round trips per
sample and one bridge network per sample (~3 s per sample here, and Docker's default address pools
run out near 30 concurrent samples). This provider reads the same ``compose.yaml`` and needs, per
sample, one create and one start call, one archive upload per attachment, one exec for its command
runner (``channel``) and one forced removal; all samples of a run share one bridge network with
inter-container traffic off, so they need one address range and cannot reach one another.

The provider is the lifecycle and inspect's API only. How a command runs (through the sandbox's
channel or an exec of its own) is ``channel.Commands``, and the exec itself ``exec_stream``; the
translation of the compose service is ``service``, the SDK calls ``client`` (file copies
``archive``), containers started ahead and starts in turn ``spares``, the run's network and what
may be removed when ``cleanup``, the engine and image checks ``engine``, the egress proxy
``egress``. ``INSPECT_GAIA_PLAIN_DOCKER=1`` (read here, at each run's start) runs it plain: no
channel, no spares, no starts in turn.
"""

from __future__ import annotations

import errno
import functools
import re
import shlex
import sys
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
    SandboxUnavailableError,
    display_type,
    sandboxenv,
)
from pydantic import BaseModel
from typing_extensions import override

from ..._compat import sample_active
from ...defaults import PROVIDER
from ...egress.spec import EgressSpec
from ...egress.web_record import sample_named
from .. import signals
from ..faults import start_or_stand_in, started
from . import PLAIN_ENV, archive, client, egress, egress_archive, engine, plain_requested
from .channel import Commands
from .cleanup import (
    keep_run,
    labels,
    remove_all,
    remove_run,
    run_network,
    run_state,
    sweep_orphans,
)
from .config import deserialize
from .egress_record import SandboxRecord
from .egress_watch import SampleCommands
from .service import create_kwargs, network_wanted, service_config
from .spares import in_turn, remove_sample_container, sample_container, spares, starts_in_turn

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
        self,
        container: str,
        name: str,
        working_dir: str,
        plain: bool = False,
        egress: SampleCommands | None = None,
        record: SandboxRecord | None = None,
    ) -> None:
        """Wrap a started container; ``working_dir`` resolves relative paths.

        ``plain``: no command channel, an exec per command (``INSPECT_GAIA_PLAIN_DOCKER``).
        ``egress``: its proxy's outages, see ``egress_watch``; ``record``: its requests, see
        ``egress_record``.
        """
        super().__init__()
        self.container = container
        self.name = name
        self.working_dir = working_dir
        self.commands = Commands(container, name, channel=not plain)
        self.egress = egress
        self.record = record

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
        engine.check_address()
        state = run_state()
        state.plain = plain_requested()
        if state.plain:
            print(
                f"{PROVIDER} runs plain ({PLAIN_ENV}): an exec per command, no spare containers, "
                "starts not queued"
            )
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
        signals.install()

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
        record: SandboxRecord | None = None
        if spec is not None:  # the run's internal network, reaching out only through its proxy
            proxy = await client.call(egress.ensure, task_name, spec)
            if active is not None:  # the run's log: its archive of bodies goes beside it
                proxy.log_location = proxy.log_location or active.log_location
                proxy.logs.add(active.log_location)
                await client.call(
                    egress_archive.name_sample,
                    proxy.proxy,
                    egress.RECORD_DIR,
                    name,
                    active.sample.id,
                    active.epoch,
                )
            kwargs = egress.sample_kwargs(create_kwargs(service, None), proxy)
            files = await client.call(egress.sample_files, proxy, service["image"])
            watched = egress.commands(proxy)
            record = SandboxRecord(proxy, name)
        else:
            network = await client.call(run_network, task_name) if network_wanted(service) else None
            kwargs = create_kwargs(service, network)
        start = functools.partial(
            sample_container, name, kwargs, labels(task_name), task_name, files
        )
        container = await in_turn(start)
        if record is not None:
            try:
                address = await client.call(record.start, container)
                if address is not None and watched is not None:  # an outage names its sample
                    who = sample_named(active.sample.id, active.epoch) if active else name
                    watched.watch.name(address, who)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await client.call(remove_sample_container, container)
                raise
        working_dir = str(
            service.get("working_dir") or await client.call(engine.image_workdir, service["image"])
        )
        return {"default": cls(container, name, working_dir, run_state().plain, watched, record)}

    @override
    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        """Remove the sample's container (no stop grace period), in the background (``spares``).

        A run that caps its sandboxes, or a plain one, removes it now.
        """
        with anyio.CancelScope(shield=True):
            for env in (started(environments) or {}).values():
                sandbox = env.as_type(GaiaDockerSandbox)
                await sandbox.commands.close()
                if sandbox.record is not None:  # before its address can be another sandbox's
                    await sandbox.record.finish(sandbox.container)
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
            lines: list[str] = []
            try:
                await client.call(spares().close)
                if not cleanup:
                    for name in await client.call(keep_run, state.run_id):
                        lines.append(f"Sandbox kept: docker exec -it {name} bash -l")
                    lines.append(f"Remove them with: inspect sandbox cleanup {PROVIDER}")
                    return
                proxies = egress.egress_state()
                for proxy in list(proxies.proxies.values()):
                    lines += await client.call(egress.summary, proxy)
                    if proxy.archive is not None:
                        lines += await client.call(egress_archive.not_kept, proxy.proxy)
                        exported, digest = await client.call(
                            egress_archive.export,
                            proxy.proxy,
                            proxy.archive,
                            egress.RECORD_DIR,
                            proxy.log_location,
                        )
                        lines += exported
                        if digest is not None:
                            lines += await egress_archive.stamp(
                                proxy.logs, proxy.archive, digest, proxy.log_location
                            )
                egress.forget(proxies)
                await client.call(remove_run, state.run_id)
                with state.lock:
                    state.network = None
            except Exception as ex:
                lines.append(
                    f"Could not remove this run's {PROVIDER} sandboxes ({client.first_line(ex)}) "
                    f"— remove them with `inspect sandbox cleanup {PROVIDER}` once the Docker "
                    "Engine answers"
                )
            finally:
                signals.uninstall()
                print_closing(lines)

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
        """Run ``cmd`` in the container (see ``SandboxEnvironment.exec``; ``channel.Commands``)."""
        data = input.encode() if isinstance(input, str) else input
        run = functools.partial(
            self.commands.exec, cmd, data, self._path(cwd or "."), env, user, timeout
        )
        return await (run() if self.egress is None else self.egress.around(run))

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


async def _start_egress(task_name: str, spec: EgressSpec) -> None:
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


def print_closing(lines: list[str]) -> None:
    """Print the run's closing lines (kept sandboxes, refusals, the archive) on lines of their own.

    inspect's rich display, when stdout is no terminal (a pipe, a file, CI), ends its results
    with a row padded to the width and no newline (rich ends a live display's last line only on
    a terminal), so a first line printed after it was glued to that row, after the ``Log:`` line.
    Under the other displays the line before is ended already.
    """
    if not lines:
        return
    open_row = display_type() in ("full", "rich", "conversation") and not sys.stdout.isatty()
    print(("\n" if open_row else "") + "\n".join(lines), flush=True)
