"""Blocking Docker Engine API calls through the docker SDK (files in and out: ``archive``).

Everything here runs on a worker thread (``call``). The SDK's low-level ``APIClient`` is used, not
its object layer: one HTTP request per step and nothing fetched that is not used. Commands do not
come here: an exec is spoken by ``exec_stream``, asynchronously, without the SDK. The SDK talks to
the engine ``exec_stream.engine_address()`` names, and every request goes through the Unix-socket
adapter's ``get_connection``, replaced so that all share one connection pool, with the session's
``trust_env`` off (``_tune_unix_socket``): the two docker-py internals used here. ``archive`` uses
three more (``_url``, ``_get``, ``_raise_for_status``); no other module reaches past its public API.
"""

from __future__ import annotations

import functools
import io
import os
import tarfile
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import anyio

from . import TAG_LABEL, TAG_VARIABLE
from .exec_stream import API_TIMEOUT, engine_address

if TYPE_CHECKING:
    from docker import APIClient

P = ParamSpec("P")
T = TypeVar("T")

_THREADS = anyio.CapacityLimiter(256)
"""Blocking SDK calls run on worker threads: a file copy or a container start per sample at once."""


def api() -> APIClient:
    """The API client for the engine ``DOCKER_HOST`` names now (``engine_address``)."""
    return _api(engine_address())


@functools.cache
def _api(host: str) -> APIClient:
    """One client per address (``from_env`` reads the address, and any TLS settings, itself)."""
    import docker

    client = docker.from_env(timeout=API_TIMEOUT, max_pool_size=256).api
    _tune_unix_socket(client)
    return client


def _tune_unix_socket(client: APIClient) -> None:
    """On a Unix socket: one connection pool for all requests, and no proxy or netrc look-ups.

    docker-py's adapter keys its pools by the request's full URL and keeps the 25 latest, so at
    scale every ``exec_inspect`` (a new exec id in its path) and every ``exec_create`` of a 26th
    container opened a new pool and a new socket, and closed another pool's: no connection was
    reused. All requests go to the one socket, so one pool (of ``max_pool_size``) serves them.
    requests also reads the proxy variables and looks for ``~/.netrc`` on every request; neither
    applies to a socket path (the adapter ignores proxies there).
    """
    from docker.transport import UnixHTTPAdapter

    adapter = client.get_adapter(client.base_url)
    if not isinstance(adapter, UnixHTTPAdapter):
        return
    get_connection = adapter.get_connection
    key = client.base_url

    def one_pool(url: str, proxies: Mapping[str, str] | None = None) -> Any:
        return get_connection(key, proxies)

    adapter.get_connection = one_pool
    client.trust_env = False


async def call(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking call on a worker thread (cancellable: the thread is abandoned)."""
    return await anyio.to_thread.run_sync(
        functools.partial(fn, *args, **kwargs), abandon_on_cancel=True, limiter=_THREADS
    )


def first_line(ex: BaseException) -> str:
    """An exception's first line, at most 300 characters (for one-line messages)."""
    return (str(ex).splitlines() or [type(ex).__name__])[0][:300]


def engine_unreachable(ex: BaseException) -> bool:
    """Whether ``ex`` (or its cause) says the engine did not answer at all."""
    import requests
    from docker.errors import DockerException

    seen: BaseException | None = ex
    while seen is not None:
        if isinstance(seen, (requests.exceptions.ConnectionError, ConnectionError)):
            return True
        if isinstance(seen, FileNotFoundError) and "docker" in str(seen).lower():
            return True
        text = str(seen)
        if isinstance(seen, DockerException) and "Error while fetching server API" in text:
            return True
        if "Cannot connect to the Docker daemon" in text:  # the docker / compose CLI's words
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def answers(timeout: float = 3) -> bool:
    """Whether the engine answers a ping within ``timeout`` seconds."""
    import docker

    try:
        return bool(docker.from_env(timeout=int(max(1, timeout))).ping())
    except Exception:
        return False


# -- engine and images ---------------------------------------------------------------------------


def version() -> dict[str, Any]:
    """The engine's version document (``docker version``'s server part)."""
    return dict(api().version())


def info() -> dict[str, Any]:
    """The engine's ``docker info`` document."""
    return dict(api().info())


def image_config(image: str) -> dict[str, Any]:
    """The image's id, registry digests and config; raises ``docker.errors.ImageNotFound``."""
    inspected = api().inspect_image(image)
    return {
        "id": str(inspected["Id"]),
        "repo_digests": [str(d) for d in inspected.get("RepoDigests") or []],
        **(inspected.get("Config") or {}),
    }


def registry_has(image: str) -> None:
    """Raise unless the image's registry knows it (a pull would succeed)."""
    api().inspect_distribution(image)


def pull(image: str) -> None:
    """Pull ``image`` from its registry (by digest when it names one, whatever its tag says)."""
    name, at, digest = image.partition("@")
    if at:  # docker-py would send ``python:3.11`` with the digest as its tag
        head, slash, last = name.rpartition("/")
        api().pull(head + slash + last.partition(":")[0], tag=digest)
    else:
        api().pull(image)


# -- containers and networks ---------------------------------------------------------------------


def create_network(name: str, labels: Mapping[str, str]) -> None:
    """A bridge network whose containers cannot reach one another (icc off)."""
    api().create_network(
        name,
        driver="bridge",
        # Samples share a run's network for its address range, not to talk to each other.
        options={"com.docker.network.bridge.enable_icc": "false"},
        labels=dict(labels),
    )


def start_container(
    name: str,
    kwargs: Mapping[str, Any],
    labels: Mapping[str, str],
    files: Mapping[str, bytes] | None = None,
) -> str:
    """Create and start a container (``kwargs`` as ``service.create_kwargs`` makes them).

    ``files`` (absolute path: contents) are written into it before it starts, in one upload.
    """
    client = api()
    arguments = dict(kwargs)
    host_config = client.create_host_config(**arguments.pop("host_config"))
    created = client.create_container(
        **arguments, name=name, host_config=host_config, labels=dict(labels), detach=True
    )
    container = str(created["Id"])
    try:
        if files:
            client.put_archive(container, "/", tar_of(files))
        client.start(container)
    except BaseException:
        remove_container(container)
        raise
    return container


def tar_of(files: Mapping[str, bytes]) -> bytes:
    """A tar archive of ``files`` (absolute path: contents), mode 0644."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return archive.getvalue()


def create_only(image: str, host_config: Mapping[str, Any]) -> str:
    """Create (not start) a labelled throw-away container; its id (for capability probes)."""
    client = api()
    created = client.create_container(
        image,
        command=["true"],
        host_config=client.create_host_config(**host_config),
        labels={
            "inspect_gaia.probe": "1",
            **({TAG_LABEL: tag} if (tag := os.environ.get(TAG_VARIABLE)) else {}),
        },
    )
    return str(created["Id"])


def remove_container(container: str) -> None:
    """Force-remove a container; a container already gone (or going) is not an error."""
    from docker.errors import NotFound

    try:
        api().remove_container(container, force=True, v=True)
    except NotFound:
        pass
    except Exception as ex:
        text = str(ex)
        if "removal of container" not in text and "is already in progress" not in text:
            raise


def containers(filters: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    """Containers (running or not) matching ``filters``."""
    return list(api().containers(all=True, filters=dict(filters)))


def networks(filters: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    """Networks matching ``filters``."""
    return list(api().networks(filters=dict(filters)))


def remove_network(network: str) -> None:
    """Remove a network; one already gone is not an error."""
    from docker.errors import NotFound

    try:
        api().remove_network(network)
    except NotFound:
        pass


def rename(container: str, name: str) -> None:
    """Rename a container."""
    api().rename(container, name)


def freeze(container: str) -> None:
    """Pause a container's processes (it is removed paused); one gone or stopped is left so."""
    try:
        api().pause(container)
    except Exception:
        pass


def running(container: str) -> bool:
    """Whether the container exists and runs."""
    try:
        return bool(api().inspect_container(container)["State"]["Running"])
    except Exception:
        return False


def stops_within(container: str, seconds: float) -> bool:
    """Whether the container is gone or stopped, now or within ``seconds``.

    A container killed from outside ends its execs before the engine marks it stopped, and on a
    busy machine the exec's end is seen first: one look at ``running`` then finds it still
    running, and a sandbox that is gone would pass for a command that failed.
    """
    deadline = time.monotonic() + seconds
    pause = 0.05
    while running(container):
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.5)
    return True
