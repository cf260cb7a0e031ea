"""``gaia-docker``: one container per sample, started through the Docker Engine API.

inspect_ai's ``docker`` sandbox drives the ``docker compose`` CLI: about eight CLI round trips per
sample (config, up, ps, exec pwd, two execs per file copy, down) and one bridge network per sample.
That costs ~3 s per sample here against ~0.35 s for ``docker run`` (docs/benchmarks.md), and the
per-sample networks exhaust Docker's default address pools near 30 concurrent samples.

This provider reads the same ``compose.yaml`` (one ``default`` service: image, command,
entrypoint, init, network mode, limits, environment, user, working directory) and talks to the
engine with the ``docker`` SDK:

* start: one create and one start call; the working directory comes from the image's config;
* files: one archive upload per file (parents created by the engine), reads by archive download;
* commands: one exec per command, streamed with the same output cap and in-container ``timeout``
  wrapper as inspect's provider, stdin fed on a second thread;
* stop: one forced removal — the sandbox holds nothing worth a SIGTERM grace period;
* network: one bridge network per run with inter-container traffic disabled, so samples share
  an address range but cannot reach one another (``network_mode: none`` gives no network at all).

Every container and network carries the ``inspect_gaia.sandbox`` label and its creator's host and
PID: the end of a run removes its own, the start of a run removes what a killed process on this
host left behind, and ``inspect sandbox cleanup gaia-docker`` removes everything of this provider.
The compose sandbox stays available as ``-T sandbox=compose``.
"""

from __future__ import annotations

import base64
import errno
import functools
import io
import json
import logging
import os
import re
import shlex
import socket
import stat as stat_module
import tarfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, overload

import anyio
from inspect_ai.util import (
    ComposeConfig,
    ExecResult,
    OutputLimitExceededError,
    SandboxConnection,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    sandboxenv,
)
from inspect_ai.util._sandbox.compose import parse_compose_yaml
from inspect_ai.util._sandbox.docker.failure import InjectedWrapper, classify_exec_failure
from inspect_ai.util._sandbox.environment import SandboxUnavailableError
from inspect_ai.util._subprocess import CircularByteBuffer
from typing_extensions import override

from .errors import GaiaError, image_unavailable

if TYPE_CHECKING:
    from docker import APIClient

logger = logging.getLogger(__name__)

PROVIDER = "gaia-docker"
LABEL = "inspect_gaia.sandbox"
"""Label on every container and network this provider creates (value: the provider name)."""
TASK_LABEL = "inspect_gaia.task"
SESSION_LABEL = "inspect_gaia.session"
SESSION = uuid.uuid4().hex[:12]
"""This process: task cleanup removes only what this process created."""
OWNER_LABEL = "inspect_gaia.owner"
"""``<host>:<pid>`` of the creating process, so a later run can sweep what a killed one left."""
OWNER = f"{socket.gethostname()}:{os.getpid()}"
KEPT_PREFIX = "gaia-kept-"
"""Containers kept by ``--no-sandbox-cleanup`` are renamed so; only ``inspect sandbox cleanup``
removes them."""

SUPPORTED_FIELDS = frozenset(
    {
        "image",
        "command",
        "entrypoint",
        "init",
        "network_mode",
        "working_dir",
        "environment",
        "user",
        "hostname",
        "cpus",
        "mem_limit",
        "memswap_limit",
        "pids_limit",
        "read_only",
        "shm_size",
        "cap_add",
        "cap_drop",
        "security_opt",
    }
)
"""compose.yaml service fields this provider applies; any other field is refused, not ignored."""

_TIMEOUT_BIN = "/usr/bin/timeout"
_GO_MODE_DIR = 1 << 31
"""The directory bit of the engine's file modes (Go's ``os.ModeDir``)."""
_API_TIMEOUT = 120
_THREADS = anyio.CapacityLimiter(256)
"""Blocking SDK calls run on worker threads: one per running command, so allow many."""


@functools.cache
def _api() -> APIClient:
    import docker

    return docker.from_env(timeout=_API_TIMEOUT, max_pool_size=256).api


async def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return await anyio.to_thread.run_sync(
        functools.partial(fn, *args, **kwargs), abandon_on_cancel=True, limiter=_THREADS
    )


def service_config(config: SandboxEnvironmentConfigType | None) -> dict[str, Any]:
    """The ``default`` service of a compose config (a ComposeConfig, a file path or ``None``).

    Raises:
        GaiaError: The file has other services, or fields this provider does not apply.
    """
    if config is None:
        from .sandbox import gaia_compose

        config = gaia_compose()
    if isinstance(config, str):
        config = parse_compose_yaml(config, multiple_services=True)
    if not isinstance(config, ComposeConfig):
        raise GaiaError(f"the {PROVIDER} sandbox takes a compose file — got {type(config)}")
    if set(config.services) != {"default"}:
        raise GaiaError(
            f"the {PROVIDER} sandbox runs one service named `default` — this compose file has "
            f"{', '.join(sorted(config.services))}; use `-T sandbox=compose` for several services"
        )
    service = config.services["default"].model_dump(exclude_none=True, by_alias=True)
    unsupported = sorted(k for k in service if k not in SUPPORTED_FIELDS and not k.startswith("x-"))
    if unsupported:
        raise GaiaError(
            f"compose.yaml field(s) {', '.join(unsupported)} are not applied by the {PROVIDER} "
            "sandbox — remove them, or use `-T sandbox=compose` (inspect's compose sandbox)"
        )
    if "image" not in service:
        raise GaiaError("compose.yaml's `default` service names no image")
    mode = service.get("network_mode")
    if mode not in (None, "none", "bridge"):
        raise GaiaError(
            f"network_mode {mode!r} is not applied by the {PROVIDER} sandbox (only `none`) — "
            "use `-T sandbox=compose`"
        )
    return service


def _memory(value: Any) -> Any:
    return str(value) if isinstance(value, str) else value


def create_kwargs(service: dict[str, Any], network: str | None) -> dict[str, Any]:
    """``APIClient.create_container`` arguments (with a ``host_config`` dict) for a service."""
    host: dict[str, Any] = {
        "init": service.get("init"),
        "read_only": service.get("read_only"),
        "cap_add": service.get("cap_add"),
        "cap_drop": service.get("cap_drop"),
        "security_opt": service.get("security_opt"),
        "pids_limit": int(service["pids_limit"]) if "pids_limit" in service else None,
        "mem_limit": _memory(service.get("mem_limit")),
        "memswap_limit": _memory(service.get("memswap_limit")),
        "shm_size": _memory(service.get("shm_size")),
        "nano_cpus": int(float(service["cpus"]) * 1e9) if "cpus" in service else None,
        "network_mode": "none" if service.get("network_mode") == "none" else network,
    }
    environment = service.get("environment")
    if isinstance(environment, dict):
        environment = [f"{k}={v}" if v is not None else k for k, v in environment.items()]
    return {
        "image": service["image"],
        "command": service.get("command"),
        "entrypoint": service.get("entrypoint"),
        "environment": environment,
        "user": service.get("user"),
        "hostname": service.get("hostname"),
        "working_dir": service.get("working_dir"),
        "host_config": {k: v for k, v in host.items() if v is not None},
    }


def _container_name(task_name: str, sample_id: object, epoch: object) -> str:
    stem = re.sub(r"[^a-zA-Z0-9_.-]+", "-", f"{task_name}-{sample_id}-e{epoch}").strip("-.")
    return f"gaia-{stem[:80]}-{uuid.uuid4().hex[:6]}"


@sandboxenv(name=PROVIDER)
class GaiaDockerSandbox(SandboxEnvironment):
    """A sample's container, started from compose.yaml's ``default`` service via the Docker API."""

    _network_name: str | None = None
    """The run's one network (created with the first sample that has network access)."""
    _network_lock = threading.Lock()

    def __init__(self, container: str, name: str, working_dir: str) -> None:
        """Wrap a started container; ``working_dir`` resolves relative paths."""
        super().__init__()
        self.container = container
        self.name = name
        self.working_dir = working_dir

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
        """Check the engine and the image (pulled when absent), before any sample starts."""
        service = service_config(config)
        await _call(_check_engine)
        swept = await _call(_sweep_orphans)
        if swept:
            print(f"Removed {swept} container(s)/network(s) left by killed {PROVIDER} runs")
        await _call(_ensure_image, service["image"])

    @override
    @classmethod
    async def sample_init(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        metadata: dict[str, str],
    ) -> dict[str, SandboxEnvironment]:
        """Create and start the sample's container."""
        from inspect_ai.log._samples import sample_active

        service = service_config(config)
        active = sample_active()
        name = _container_name(
            task_name,
            active.sample.id if active else "sample",
            active.epoch if active else 1,
        )
        network = None
        if service.get("network_mode") != "none":
            network = await _call(cls._network, task_name)
        container = await _call(_start, name, task_name, service, network)
        working_dir = service.get("working_dir") or await _call(_image_workdir, service["image"])
        return {"default": cls(container, name, working_dir)}

    @classmethod
    def _network(cls, task_name: str) -> str:
        with cls._network_lock:
            if cls._network_name is None:
                cls._network_name = _create_network(task_name)
            return cls._network_name

    @override
    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        """Remove the sample's container at once (no stop grace period)."""
        with anyio.CancelScope(shield=True):
            for env in environments.values():
                await _call(_remove_container, env.as_type(GaiaDockerSandbox).container)

    @override
    @classmethod
    async def task_cleanup(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool
    ) -> None:
        """Remove this process's containers and network (unless told to keep them)."""
        # inspect calls this once per sandbox config when the whole run ends ("shutdown"), after
        # every sample: all of this process's containers and its network can go.
        filters = {"label": [f"{SESSION_LABEL}={SESSION}"]}
        with anyio.CancelScope(shield=True):
            if not cleanup:
                for name in await _call(_keep_labelled, filters):
                    print(f"Sandbox kept: docker exec -it {name} bash -l")
                print(f"Remove them with: inspect sandbox cleanup {PROVIDER}")
                return
            await _call(_remove_labelled, filters)
            with cls._network_lock:
                cls._network_name = None

    @override
    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        """``inspect sandbox cleanup gaia-docker [container]``: remove what was left behind."""
        if id is not None:
            await _call(_remove_container, id)
            print(f"Removed {id}")
            return
        removed = await _call(_remove_labelled, {"label": [f"{LABEL}={PROVIDER}"]})
        print(f"Removed {removed} {PROVIDER} container(s) and network(s)")

    @override
    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> ComposeConfig:
        """Configs in logs are compose configs."""
        return ComposeConfig.model_validate(config)

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
        workdir = self._path(cwd or ".")
        wrapped = cmd
        if timeout is not None:
            # The in-container wrapper kills the command's process tree; the engine would
            # otherwise leave it running after the host gives up on it.
            wrapped = [_TIMEOUT_BIN, "-k", "5s", f"{timeout}s", *cmd]
        data = input.encode() if isinstance(input, str) else input
        start = time.monotonic()
        with anyio.fail_after(None if timeout is None else timeout + 15):
            code, out, err = await _call(
                _exec,
                self.container,
                wrapped,
                data,
                workdir,
                env,
                user,
                SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE,
            )
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
        if code > 128 and not stdout.strip() and not stderr.strip():
            if not await _call(_running, self.container):
                raise SandboxUnavailableError(
                    f"The sandbox is not running and cannot execute: command exited with code "
                    f"{code} and no output, and its container {self.name} has exited"
                )
        return result

    @override
    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Upload ``contents`` as one archive; the engine creates missing parent directories."""
        path = self._path(file)
        data = contents.encode() if isinstance(contents, str) else contents
        await _call(_put_file, self.container, path, data)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    @override
    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Download ``file`` as an archive, refusing anything but one regular file."""
        if PurePosixPath(file.rstrip("/") or "/").name in ("", ".", ".."):
            raise IsADirectoryError(errno.EISDIR, "Is a directory.", file)
        data: bytes = await _call(_get_file, self.container, self._path(file), file)
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


# -- blocking Docker API calls (run on worker threads) -----------------------------------------


def _check_engine() -> None:
    try:
        _api().ping()
    except Exception as ex:
        raise GaiaError(
            "Docker Engine not running — start it (`sudo systemctl start docker`, or `bash "
            f".ci/docker-engine.sh` in a checkout) and check `docker info` ({_first_line(ex)})"
        ) from ex


def _ensure_image(image: str) -> None:
    from docker.errors import ImageNotFound

    try:
        _image_workdir(image)  # inspects the image once per run; samples reuse the answer
        return
    except ImageNotFound:
        pass
    print(f"Pulling {image} …")
    try:
        _api().pull(image)
    except Exception as ex:
        raise image_unavailable(image, _first_line(ex)) from ex


@functools.lru_cache(maxsize=32)
def _image_workdir(image: str) -> str:
    return str(_api().inspect_image(image)["Config"].get("WorkingDir") or "/")


def _labels(task_name: str) -> dict[str, str]:
    return {LABEL: PROVIDER, TASK_LABEL: task_name, SESSION_LABEL: SESSION, OWNER_LABEL: OWNER}


def _orphaned(labels: dict[str, str] | None) -> bool:
    """Created on this host by a process that is gone (killed before its cleanup ran)."""
    host, _, pid = (labels or {}).get(OWNER_LABEL, "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def _sweep_orphans() -> int:
    """Remove containers and networks whose creating process on this host is gone."""

    def orphan(resource: dict[str, Any]) -> bool:
        names = resource.get("Names") or []
        kept = any(n.lstrip("/").startswith(KEPT_PREFIX) for n in names)
        return not kept and _orphaned(resource.get("Labels"))

    return _remove_labelled({"label": [f"{LABEL}={PROVIDER}"]}, only=orphan)


def _create_network(task_name: str) -> str:
    from docker.errors import APIError

    name = f"gaia-{SESSION}-{uuid.uuid4().hex[:6]}"
    try:
        _api().create_network(
            name,
            driver="bridge",
            # Samples share the run's network for its address range, not to talk to each other.
            options={"com.docker.network.bridge.enable_icc": "false"},
            labels=_labels(task_name),
        )
    except APIError as ex:
        raise GaiaError(
            f"Docker could not create the run's sandbox network ({_first_line(ex)}) — remove "
            "unused networks with `docker network prune`, or run with `-T network=false`"
        ) from ex
    return name


def _start(name: str, task_name: str, service: dict[str, Any], network: str | None) -> str:
    api = _api()
    kwargs = create_kwargs(service, network)
    host_config = api.create_host_config(**kwargs.pop("host_config"))
    container = api.create_container(
        **kwargs, name=name, host_config=host_config, labels=_labels(task_name), detach=True
    )
    cid = str(container["Id"])
    try:
        api.start(cid)
    except BaseException:
        _remove_container(cid)
        raise
    return cid


def _remove_container(container: str) -> None:
    from docker.errors import NotFound

    try:
        _api().remove_container(container, force=True, v=True)
    except NotFound:
        pass
    except Exception as ex:  # removal already in progress, or the engine is gone
        if "removal of container" not in str(ex) and "is already in progress" not in str(ex):
            logger.warning(f"could not remove sandbox container {container}: {_first_line(ex)}")


def _keep_labelled(filters: dict[str, list[str]]) -> list[str]:
    """Rename containers to ``gaia-kept-*`` so no later run's sweep takes them for orphans."""
    api = _api()
    kept = []
    for container in api.containers(all=True, filters=filters):
        name = container["Names"][0].lstrip("/").removeprefix("gaia-")
        kept.append(f"{KEPT_PREFIX}{name}")
        api.rename(container["Id"], kept[-1])
    return kept


def _remove_labelled(
    filters: dict[str, list[str]], only: Callable[[dict[str, Any]], bool] | None = None
) -> int:
    """Remove the containers, then the networks, matching ``filters`` (and ``only``, if given).

    A selective sweep leaves a network still in use (by a kept container) and says so in the
    log; a full cleanup has removed every container first, so there an error is raised.
    """
    from docker.errors import APIError, NotFound

    api = _api()
    removed = 0
    for container in api.containers(all=True, filters=filters):
        if only is None or only(container):
            _remove_container(container["Id"])
            removed += 1
    for network in api.networks(filters=filters):
        if only is not None and not only(network):
            continue
        try:
            api.remove_network(network["Id"])
            removed += 1
        except NotFound:
            pass
        except APIError as ex:
            if only is None:
                raise
            logger.info(f"left network {network['Name']}: {_first_line(ex)}")
    return removed


def _running(container: str) -> bool:
    try:
        return bool(_api().inspect_container(container)["State"]["Running"])
    except Exception:
        return False


def _exec(
    container: str,
    cmd: list[str],
    data: bytes | None,
    workdir: str,
    env: dict[str, str] | None,
    user: str | None,
    limit: int,
) -> tuple[int, bytes, bytes]:
    from docker.errors import APIError, NotFound
    from docker.utils.socket import STDOUT, frames_iter

    api = _api()
    try:
        exec_id = api.exec_create(
            container,
            cmd,
            stdout=True,
            stderr=True,
            stdin=data is not None,
            environment=env,
            workdir=workdir,
            user=user or "",
        )["Id"]
        sock = api.exec_start(exec_id, socket=True)
    except (NotFound, APIError) as ex:
        if isinstance(ex, NotFound) or ex.status_code == 409:
            raise SandboxUnavailableError(
                f"The sandbox is not running and cannot execute: {_first_line(ex)}"
            ) from ex
        raise
    raw: socket.socket = getattr(sock, "_sock", sock)
    raw.settimeout(None)  # the command's own timeout bounds the wait, not the API's
    feeder = None
    if data is not None:
        feeder = threading.Thread(target=_feed, args=(raw, data), daemon=True)
        feeder.start()
    out, err = CircularByteBuffer(limit), CircularByteBuffer(limit)
    try:
        for stream, chunk in frames_iter(sock, tty=False):
            (out if stream == STDOUT else err).write(chunk)
    finally:
        sock.close()
    code = _exit_code(exec_id)
    return code, out.getvalue(), err.getvalue()


def _feed(raw: socket.socket, data: bytes) -> None:
    try:
        raw.sendall(data)
    except OSError:
        pass  # the command exited without reading all of its input
    finally:
        try:
            raw.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _exit_code(exec_id: str) -> int:
    for _ in range(50):
        state = _api().exec_inspect(exec_id)
        if not state.get("Running") and state.get("ExitCode") is not None:
            return int(state["ExitCode"])
        time.sleep(0.02)
    return int(state.get("ExitCode") or -1)


def _put_file(container: str, path: str, data: bytes) -> None:
    from docker.errors import APIError, NotFound

    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        info = tarfile.TarInfo(path.lstrip("/"))
        info.size = len(data)
        info.mode = 0o644
        info.mtime = int(time.time())
        tar.addfile(info, io.BytesIO(data))
    # The engine replaces whatever is at the path, a directory included; a local write would
    # refuse. One stat request (no process in the container) tells.
    api = _api()
    probe = api.head(api._url("/containers/{0}/archive", container), params={"path": path})
    if probe.status_code == 200 and _is_directory(probe.headers):
        raise IsADirectoryError(errno.EISDIR, "Is a directory.", path)
    try:
        _api().put_archive(container, "/", archive.getvalue())
    except NotFound as ex:
        raise SandboxUnavailableError(f"The sandbox is gone: {_first_line(ex)}") from ex
    except APIError as ex:
        message = str(ex).lower()
        if "permission denied" in message or "read-only" in message:
            raise PermissionError(errno.EACCES, "Permission denied.", path) from ex
        raise


def _get_file(container: str, path: str, original: str) -> bytes:
    from docker.errors import APIError, NotFound

    api = _api()
    limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
    # APIClient.get_archive, with the response closed on every path: an archive left unread
    # holds the container's lock, and the next exec would wait for it.
    response = api._get(
        api._url("/containers/{0}/archive", container), params={"path": path}, stream=True
    )
    try:
        try:
            api._raise_for_status(response)
        except NotFound as ex:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory.", original) from ex
        except APIError as ex:
            if "permission denied" in str(ex).lower():
                raise PermissionError(errno.EACCES, "Permission denied.", original) from ex
            raise
        if _is_directory(response.headers):
            raise IsADirectoryError(errno.EISDIR, "Is a directory.", original)
        if int(_path_stat(response.headers).get("size", 0)) > limit:
            raise _read_limit_error()
        archive = bytearray()
        for chunk in response.iter_content(chunk_size=1 << 16):
            archive += chunk
            if len(archive) > limit + (1 << 16):  # the tar headers are a few blocks
                raise _read_limit_error()
    finally:
        response.close()
    with tarfile.open(fileobj=io.BytesIO(bytes(archive)), mode="r:") as tar:
        member = tar.next()
        if member is None or not member.isreg() or tar.next() is not None:
            raise OSError(errno.EINVAL, "Not a regular file.", original)
        if member.size > limit:
            raise _read_limit_error()
        if not member.mode & stat_module.S_IRUSR:
            raise PermissionError(errno.EACCES, "Permission denied.", original)
        extracted = tar.extractfile(member)
        if extracted is None:
            raise OSError(errno.EINVAL, "Not a regular file.", original)
        return extracted.read()


def _read_limit_error() -> OutputLimitExceededError:
    # the file's contents may be large or binary: none of it goes into the error
    return OutputLimitExceededError(
        limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
    )


def _path_stat(headers: Any) -> dict[str, Any]:
    """The engine's stat of an archive path (name, size, mode, ...), sent as a header."""
    header = headers.get("X-Docker-Container-Path-Stat", "")
    return dict(json.loads(base64.b64decode(header))) if header else {}


def _is_directory(headers: Any) -> bool:
    return bool(int(_path_stat(headers).get("mode", 0)) & _GO_MODE_DIR)


def _first_line(ex: BaseException) -> str:
    return (str(ex).splitlines() or [type(ex).__name__])[0][:300]
